//===- OutlineParallelLoops.cpp - Parallel loops on the runtime's pool ----===//
//
// This file implements -remat-outline-parallel-loops: an outermost
// scf.parallel with enough work is cut into units fixed by its trip counts,
// a unit's body is outlined into a function, and the loop becomes a call of
// the runtime's remat_parallel_for, which runs the units on its thread pool.
//
//===----------------------------------------------------------------------===//

#include "ParallelLoops.h"
#include "remat/Codegen/Passes.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/Support/MathExtras.h"

namespace remat {
#define GEN_PASS_DEF_REMATOUTLINEPARALLELLOOPSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// The runtime's entry point: remat_parallel_for(units, function, context).
static constexpr StringLiteral kParallelFor = "remat_parallel_for";
/// A loop is cut into the fewest first dimensions that give this many units
/// (enough to balance a few threads)...
static constexpr uint64_t kMinUnits = 16;
/// ... and into at most this many (each unit costs a dispatch).
static constexpr uint64_t kMaxUnits = 256;

/// The elements `op` computes: the lanes of its widest vector operand or
/// result, else one.
static uint64_t getElements(Operation &op) {
  uint64_t elements = 1;
  auto widen = [&](Type type) {
    if (auto vector = dyn_cast<VectorType>(type))
      elements = std::max<uint64_t>(elements, vector.getNumElements());
  };
  llvm::for_each(op.getOperandTypes(), widen);
  llvm::for_each(op.getResultTypes(), widen);
  return elements;
}

/// The work of one run of `block`, in elements computed: an op counts its
/// elements (getElements), a loop with static bounds its body's work times
/// its trip count, a loop with dynamic bounds its body's work once (an
/// underestimate: such loops split less). Saturates.
static uint64_t estimateWork(Block &block) {
  uint64_t work = 0;
  for (Operation &op : block) {
    uint64_t inner = 0;
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        inner = llvm::SaturatingAdd(inner, estimateWork(nested));
    uint64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      trips = remat::getTripCount(loop.getLowerBound(), loop.getUpperBound(),
                                  loop.getStep())
                  .value_or(1);
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (std::optional<SmallVector<uint64_t>> counts =
              remat::getTripCounts(loop))
        for (uint64_t count : *counts)
          trips = llvm::SaturatingMultiply(trips, count);
    }
    work = llvm::SaturatingAdd(
        work, llvm::SaturatingAdd(getElements(op),
                                  llvm::SaturatingMultiply(trips, inner)));
  }
  return work;
}

namespace {

/// How a loop is cut into units: each runs `grain` consecutive iterations
/// of the first `prefix` dimensions, linearized (`prefixTrips` in all), and
/// the remaining dimensions whole.
struct UnitSplit {
  unsigned prefix;
  uint64_t prefixTrips, grain, units;
};

} // namespace

/// Cuts a loop nest with trip counts `trips` and `bodyWork` elements per
/// iteration into units of at least `minWork` elements, or returns nothing when
/// it has less than two units' work (or more iterations than 64 bits
/// count). Depends on its arguments alone, never on the thread count.
static std::optional<UnitSplit>
splitIntoUnits(ArrayRef<uint64_t> trips, uint64_t bodyWork, uint64_t minWork) {
  uint64_t iterations = 1;
  for (uint64_t trip : trips)
    if (__builtin_mul_overflow(iterations, trip, &iterations))
      return std::nullopt;
  uint64_t total = llvm::SaturatingMultiply(iterations, bodyWork);
  if (total / minWork < 2)
    return std::nullopt;
  uint64_t maxUnits = std::min(total / minWork, kMaxUnits);
  UnitSplit split{/*prefix=*/0, /*prefixTrips=*/1, /*grain=*/1, /*units=*/1};
  for (split.prefix = 1; split.prefix <= trips.size(); ++split.prefix) {
    split.prefixTrips *= trips[split.prefix - 1];
    uint64_t rest = total / split.prefixTrips;
    split.grain =
        std::max(llvm::divideCeil(minWork, std::max<uint64_t>(rest, 1)),
                 llvm::divideCeil(split.prefixTrips, maxUnits));
    split.units = llvm::divideCeil(split.prefixTrips, split.grain);
    if (split.units >= std::min(maxUnits, kMinUnits))
      break;
  }
  split.prefix = std::min<unsigned>(split.prefix, trips.size());
  if (split.units < 2)
    return std::nullopt;
  return split;
}

/// Whether `loop`'s body can run on any thread as a function of its own:
/// it allocates and frees nothing on the heap and calls nothing (the
/// generated loops of linalg ops do neither).
static bool isOutlinable(scf::ParallelOp loop) {
  if (loop.getNumReductions() != 0)
    return false;
  WalkResult result = loop.getBody()->walk([](Operation *op) {
    if (isa<CallOpInterface, memref::AllocOp, memref::ReallocOp,
            memref::DeallocOp>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The type a captured value of type `type` is stored as in the context, or
/// null if it cannot be: `i64` for an index, the LLVM descriptor of a
/// memref, an LLVM-compatible scalar or vector as it is.
static Type getStoredType(const LLVMTypeConverter &converter, Type type) {
  if (type.isIndex())
    return IntegerType::get(type.getContext(), 64);
  if (isa<MemRefType>(type) || LLVM::isCompatibleType(type))
    return converter.convertType(type);
  return Type();
}

/// Whether `value` is a view of a stack buffer (a transfer's scratch
/// buffer, say): iterations use such buffers as their own scratch, which
/// units on different threads must not share.
static bool isStackBuffer(Value value) {
  return remat::getMemoryBase(value).getDefiningOp<memref::AllocaOp>() !=
         nullptr;
}

/// Whether the stack buffer `buffer` (an alloca, not a view) is cut among
/// `loop`'s iterations (getPrivateDims): then no two iterations touch the
/// same element, whichever thread runs them (a split reduction's lane
/// partials, -remat-split-reductions: one row of lanes an output).
static bool isPrivateToIterations(scf::ParallelOp loop, Value buffer,
                                  ArrayRef<uint64_t> trips) {
  return buffer.getDefiningOp<memref::AllocaOp>() &&
         remat::getPrivateDims(loop, buffer, trips);
}

namespace {

/// The values a loop's body uses from above: constants, which the unit
/// clones, and the others, which the context stores as `storedTypes`.
struct Captures {
  SmallVector<Value> values, constants;
  SmallVector<Type> storedTypes;
};

/// The unit function's index constants, created once each at its entry.
class IndexConstants {
public:
  IndexConstants(OpBuilder &builder, Location loc, Block *entry)
      : builder(builder), loc(loc), entry(entry) {}

  Value operator()(uint64_t value) {
    Value &constant = constants[value];
    if (!constant) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(entry);
      constant = arith::ConstantIndexOp::create(builder, loc, int64_t(value));
    }
    return constant;
  }
  /// The constant of a loop bound, which must be a constant.
  Value getBound(Value bound) {
    return (*this)(uint64_t(*getConstantIntValue(bound)));
  }

private:
  OpBuilder &builder;
  Location loc;
  Block *entry;
  DenseMap<uint64_t, Value> constants;
};

} // namespace

/// The Captures of `loop`'s body, or failure if a value it captures cannot
/// be stored in the context or is a stack buffer its iterations share.
static FailureOr<Captures> collectCaptures(const LLVMTypeConverter &converter,
                                           scf::ParallelOp loop,
                                           ArrayRef<uint64_t> trips) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(loop.getRegion(), above);
  Captures captures;
  for (Value value : above) {
    Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>()) {
      captures.constants.push_back(value);
      continue;
    }
    Type stored = getStoredType(converter, value.getType());
    if (!stored ||
        (isStackBuffer(value) && !isPrivateToIterations(loop, value, trips)))
      return failure();
    captures.values.push_back(value);
    captures.storedTypes.push_back(stored);
  }
  return captures;
}

namespace {

struct RematOutlineParallelLoopsPass
    : remat::impl::RematOutlineParallelLoopsPassBase<
          RematOutlineParallelLoopsPass> {
  using RematOutlineParallelLoopsPassBase::RematOutlineParallelLoopsPassBase;

  LogicalResult initialize(MLIRContext *context) override {
    if (minUnitWork >= 1)
      return success();
    return emitError(UnknownLoc::get(context))
           << "-remat-outline-parallel-loops: min-unit-work must be at least "
              "1, got "
           << static_cast<int64_t>(minUnitWork);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          isa_and_nonnull<func::FuncOp>(
              loop->getParentWithTrait<OpTrait::IsIsolatedFromAbove>()))
        loops.push_back(loop);
    });
    if (loops.empty())
      return;

    LLVMTypeConverter converter(&getContext());
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops) {
      std::optional<SmallVector<uint64_t>> trips = remat::getTripCounts(loop);
      if (!trips || !isOutlinable(loop)) {
        ++numUnsupported;
        continue;
      }
      std::optional<UnitSplit> split =
          splitIntoUnits(*trips, estimateWork(*loop.getBody()), minUnitWork);
      if (!split) {
        ++numSmall;
        continue;
      }
      if (failed(outline(rewriter, converter, symbols, loop, *trips, *split))) {
        ++numUnsupported;
        continue;
      }
      ++numOutlined;
    }
  }

  /// Replaces `loop` by a call of remat_parallel_for over `split`'s units
  /// of a function outlined from its body; fails, changing nothing, if a
  /// value the body captures cannot be stored in the context or is a stack
  /// buffer its iterations share.
  LogicalResult outline(IRRewriter &rewriter,
                        const LLVMTypeConverter &converter,
                        SymbolTable &symbols, scf::ParallelOp loop,
                        ArrayRef<uint64_t> trips, const UnitSplit &split) {
    FailureOr<Captures> captures = collectCaptures(converter, loop, trips);
    if (failed(captures))
      return failure();

    MLIRContext *context = &getContext();
    Location loc = loop.getLoc();
    auto function = loop->getParentOfType<func::FuncOp>();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    auto unitFnType =
        rewriter.getFunctionType({ptrType, rewriter.getI64Type()}, {});
    auto contextType =
        LLVM::LLVMStructType::getLiteral(context, captures->storedTypes);
    func::FuncOp parallelFor = getParallelFor(rewriter, symbols, unitFnType);

    // The outlined unit: captures loaded from the context, constants
    // cloned, then the unit's iterations of the first dimensions, each
    // running the rest of the loop whole.
    rewriter.setInsertionPoint(function);
    auto unitFn =
        func::FuncOp::create(rewriter, loc,
                             (function.getSymName() + "_" +
                              remat::getLoopNestKind(loop) + "_parallel")
                                 .str(),
                             unitFnType);
    unitFn.setPrivate();
    symbols.insert(unitFn);
    IRMapping mapping;
    Block *entry =
        createUnitEntry(rewriter, loc, unitFn, *captures, contextType, mapping);
    IndexConstants index(rewriter, loc, entry);
    Operation *terminator = func::ReturnOp::create(rewriter, loc);
    rewriter.setInsertionPoint(terminator);
    SmallVector<Value> ivs = createUnitInductionVars(rewriter, loc, loop, trips,
                                                     split, index, terminator);
    moveBodyIntoUnit(rewriter, loc, loop, split, index, ivs, terminator);
    for (auto [from, to] : mapping.getValueMap())
      rewriter.replaceUsesWithIf(from, to, [&](OpOperand &use) {
        return unitFn->isProperAncestor(use.getOwner());
      });

    replaceByCall(rewriter, loc, loop, parallelFor, unitFn, *captures,
                  contextType, split.units);
    return success();
  }

  /// Creates `unitFn`'s entry block and fills it: each capture loaded from
  /// the context (the block's first argument, of type `contextType`) and
  /// each constant cloned, with `mapping` from the loop's values to them.
  /// Leaves the insertion point at the block's end.
  static Block *createUnitEntry(IRRewriter &rewriter, Location loc,
                                func::FuncOp unitFn, const Captures &captures,
                                Type contextType, IRMapping &mapping) {
    auto ptrType = LLVM::LLVMPointerType::get(rewriter.getContext());
    Block *entry = unitFn.addEntryBlock();
    rewriter.setInsertionPointToStart(entry);
    Value contextArg = entry->getArgument(0);
    for (auto [index, value] : llvm::enumerate(captures.values)) {
      Type stored = captures.storedTypes[index];
      auto address =
          LLVM::GEPOp::create(rewriter, loc, ptrType, contextType, contextArg,
                              ArrayRef<LLVM::GEPArg>{0, int32_t(index)});
      Value loaded = LLVM::LoadOp::create(rewriter, loc, stored, address);
      mapping.map(value, restore(rewriter, loc, loaded, value.getType()));
    }
    for (Value constant : captures.constants)
      rewriter.clone(*constant.getDefiningOp(), mapping);
    return entry;
  }

  /// Emits, before `terminator` in the unit function, the induction
  /// variables of `loop`'s first `split.prefix` dimensions for the unit's
  /// iterations: the unit's linear position (a loop over its `split.grain`
  /// positions, whose terminator becomes `terminator`, when there are
  /// several), delinearized by `trips`. The bounds are constants (the trip
  /// counts are static).
  static SmallVector<Value>
  createUnitInductionVars(IRRewriter &rewriter, Location loc,
                          scf::ParallelOp loop, ArrayRef<uint64_t> trips,
                          const UnitSplit &split, IndexConstants &index,
                          Operation *&terminator) {
    Block *entry = terminator->getBlock();
    Value unit = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), entry->getArgument(1));
    Value position =
        arith::MulIOp::create(rewriter, loc, unit, index(split.grain));
    if (split.grain > 1) {
      Value end = arith::MinUIOp::create(
          rewriter, loc,
          arith::AddIOp::create(rewriter, loc, position, index(split.grain)),
          index(split.prefixTrips));
      auto iterations =
          scf::ForOp::create(rewriter, loc, position, end, index(1));
      terminator = iterations.getBody()->getTerminator();
      rewriter.setInsertionPoint(terminator);
      position = iterations.getInductionVar();
    }

    SmallVector<Value> ivs(split.prefix);
    for (int dim = split.prefix - 1; dim >= 0; --dim) {
      Value local = position;
      if (dim > 0) {
        local =
            arith::RemUIOp::create(rewriter, loc, position, index(trips[dim]));
        position =
            arith::DivUIOp::create(rewriter, loc, position, index(trips[dim]));
      }
      Value scaled = rewriter.createOrFold<arith::MulIOp>(
          loc, local, index.getBound(loop.getStep()[dim]));
      ivs[dim] = rewriter.createOrFold<arith::AddIOp>(
          loc, index.getBound(loop.getLowerBound()[dim]), scaled);
    }
    return ivs;
  }

  /// Moves `loop`'s body before `terminator` with the first dimensions'
  /// induction variables `ivs`: inside a loop over the remaining dimensions
  /// if there are any, else in place of the body's scf.reduce.
  static void moveBodyIntoUnit(IRRewriter &rewriter, Location loc,
                               scf::ParallelOp loop, const UnitSplit &split,
                               IndexConstants &index, SmallVector<Value> &ivs,
                               Operation *terminator) {
    Block *body = loop.getBody();
    if (split.prefix < loop.getNumLoops()) {
      auto bounds = [&](ValueRange values) {
        return llvm::map_to_vector(
            values.drop_front(split.prefix),
            [&](Value bound) { return index.getBound(bound); });
      };
      auto rest = scf::ParallelOp::create(
          rewriter, loc, bounds(loop.getLowerBound()),
          bounds(loop.getUpperBound()), bounds(loop.getStep()));
      Block *restBody = rest.getBody();
      if (!restBody->empty())
        rewriter.eraseOp(&restBody->back());
      llvm::append_range(ivs, rest.getInductionVars());
      rewriter.inlineBlockBefore(body, restBody, restBody->end(), ivs);
    } else {
      // The body's scf.reduce goes: the unit's block has its terminator.
      rewriter.inlineBlockBefore(body, terminator, ivs);
      rewriter.eraseOp(terminator->getPrevNode());
    }
  }

  /// Replaces `loop` by the call of `parallelFor` over `units` units of
  /// `unitFn`, with the context on the stack (allocated once, at the
  /// function's entry: the loop may be in a loop) and the captures stored
  /// into it.
  static void replaceByCall(IRRewriter &rewriter, Location loc,
                            scf::ParallelOp loop, func::FuncOp parallelFor,
                            func::FuncOp unitFn, const Captures &captures,
                            Type contextType, uint64_t units) {
    auto function = loop->getParentOfType<func::FuncOp>();
    auto ptrType = LLVM::LLVMPointerType::get(rewriter.getContext());
    auto i64Type = rewriter.getI64Type();
    Value contextPtr;
    if (captures.values.empty()) {
      rewriter.setInsertionPoint(loop);
      contextPtr = LLVM::ZeroOp::create(rewriter, loc, ptrType);
    } else {
      rewriter.setInsertionPointToStart(&function.getBody().front());
      Value one = LLVM::ConstantOp::create(rewriter, loc, i64Type,
                                           rewriter.getI64IntegerAttr(1));
      contextPtr =
          LLVM::AllocaOp::create(rewriter, loc, ptrType, contextType, one);
    }
    rewriter.setInsertionPoint(loop);
    for (auto [index, value] : llvm::enumerate(captures.values)) {
      Value stored = store(rewriter, loc, value, captures.storedTypes[index]);
      auto address =
          LLVM::GEPOp::create(rewriter, loc, ptrType, contextType, contextPtr,
                              ArrayRef<LLVM::GEPArg>{0, int32_t(index)});
      LLVM::StoreOp::create(rewriter, loc, stored, address);
    }
    Value fn = func::ConstantOp::create(rewriter, loc, unitFn.getFunctionType(),
                                        unitFn.getSymName());
    Value unitCount =
        arith::ConstantIntOp::create(rewriter, loc, i64Type, int64_t(units));
    func::CallOp::create(rewriter, loc, parallelFor,
                         ValueRange{unitCount, fn, contextPtr});
    rewriter.eraseOp(loop);
  }

  /// The declaration of remat_parallel_for, created on first use.
  func::FuncOp getParallelFor(IRRewriter &rewriter, SymbolTable &symbols,
                              FunctionType unitFnType) {
    if (auto existing = symbols.lookup<func::FuncOp>(kParallelFor))
      return existing;
    OpBuilder::InsertionGuard guard(rewriter);
    ModuleOp module = getOperation();
    rewriter.setInsertionPointToStart(module.getBody());
    auto type = rewriter.getFunctionType(
        {rewriter.getI64Type(), unitFnType, unitFnType.getInput(0)}, {});
    auto declaration =
        func::FuncOp::create(rewriter, module.getLoc(), kParallelFor, type);
    declaration.setPrivate();
    symbols.insert(declaration);
    return declaration;
  }

  /// `value` as the context stores it (of type `stored`).
  static Value store(OpBuilder &builder, Location loc, Value value,
                     Type stored) {
    if (value.getType().isIndex())
      return arith::IndexCastOp::create(builder, loc, stored, value);
    if (value.getType() == stored)
      return value;
    return UnrealizedConversionCastOp::create(builder, loc, stored, value)
        .getResult(0);
  }

  /// The value of type `type` that the context stored as `loaded`.
  static Value restore(OpBuilder &builder, Location loc, Value loaded,
                       Type type) {
    if (type.isIndex())
      return arith::IndexCastOp::create(builder, loc, type, loaded);
    if (loaded.getType() == type)
      return loaded;
    return UnrealizedConversionCastOp::create(builder, loc, type, loaded)
        .getResult(0);
  }
};

} // namespace
