//===- RematToLinalg.cpp - remat ops to upstream ops ----------------------===//
//
// This file implements the lowering of remat's ops to linalg, arith and func
// as conversion patterns (Philox4x32-10 as arith ops in a linalg.generic, the
// generator's seed as a call into the runtime, the scatter-add of rows as a
// loop over the positions per column, the backward region inlined into its
// function) and -convert-remat-to-linalg, which applies them and drops the
// contract's attributes.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/RematToLinalg/RematToLinalg.h"
#include "remat/Conversion/Passes.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

// The runtime's reference generator (runtime/Philox.h).
#include "Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

namespace remat {
#define GEN_PASS_DEF_CONVERTREMATTOLINALGPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

// Philox4x32 multipliers, Weyl increments and rounds: the runtime's.
static constexpr uint32_t kPhiloxM0 = REMAT_PHILOX_M0;
static constexpr uint32_t kPhiloxM1 = REMAT_PHILOX_M1;
static constexpr uint32_t kPhiloxW0 = REMAT_PHILOX_W0;
static constexpr uint32_t kPhiloxW1 = REMAT_PHILOX_W1;
static constexpr int kPhiloxRounds = REMAT_PHILOX_ROUNDS;

/// Emits the scalar computation of one element of a philox_uniform: word
/// `index` of the stream of `seed`, as a float of type `elementType`.
static Value buildPhiloxElement(OpBuilder &b, Location loc, Value seed,
                                Value index, FloatType elementType) {
  Type i32 = b.getI32Type();
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, v));
  };
  auto c32 = [&](uint32_t v) {
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(i32, APInt(32, v)));
  };
  auto lo32 = [&](Value v) { return arith::TruncIOp::create(b, loc, i32, v); };
  auto hi32 = [&](Value v) {
    return lo32(arith::ShRUIOp::create(b, loc, v, c64(32)));
  };

  Value block = arith::ShRUIOp::create(b, loc, index, c64(2));
  Value ctr[4] = {lo32(block), hi32(block), c32(0), c32(0)};
  Value key[2] = {lo32(seed), hi32(seed)};
  Value m0 = c32(kPhiloxM0), m1 = c32(kPhiloxM1);
  Value w0 = c32(kPhiloxW0), w1 = c32(kPhiloxW1);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, ctr[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, ctr[2]);
    Value next0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), ctr[1]), key[0]);
    Value next2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), ctr[3]), key[1]);
    ctr[0] = next0;
    ctr[1] = p1.getLow();
    ctr[2] = next2;
    ctr[3] = p0.getLow();
    key[0] = arith::AddIOp::create(b, loc, key[0], w0);
    key[1] = arith::AddIOp::create(b, loc, key[1], w1);
  }

  // Word (index mod 4) of the block.
  Value lane = lo32(arith::AndIOp::create(b, loc, index, c64(3)));
  Value word = ctr[3];
  for (int i = 2; i >= 0; --i) {
    Value isLane =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c32(i));
    word = arith::SelectOp::create(b, loc, isLane, ctr[i], word);
  }

  // (word >> 8) * 2^-24 is exact in f32; narrower floats round to nearest
  // even from it, wider ones extend it exactly.
  Value top24 = arith::ShRUIOp::create(b, loc, word, c32(8));
  Value asFloat = arith::UIToFPOp::create(b, loc, b.getF32Type(), top24);
  Value scale =
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / 16777216.0f));
  Value uniform = arith::MulFOp::create(b, loc, asFloat, scale);
  if (elementType.getWidth() < 32)
    uniform = arith::TruncFOp::create(b, loc, elementType, uniform);
  else if (elementType.getWidth() > 32)
    uniform = arith::ExtFOp::create(b, loc, elementType, uniform);
  return uniform;
}

/// The runtime function that returns the seed of the step's generator
/// (runtime/RematRuntime.h).
static constexpr StringLiteral kRngSeedFunction = "remat_rng_seed";

static FunctionType getRngSeedFunctionType(MLIRContext *context) {
  return FunctionType::get(context, {}, {IntegerType::get(context, 64)});
}

/// Returns the op that `remat.rng_seed` at `user` would call if it is not the
/// runtime's seed function's declaration; null if that symbol is free or is
/// the declaration.
static Operation *getConflictingRngSeedSymbol(Operation *user) {
  Operation *existing = SymbolTable::lookupNearestSymbolFrom(
      user, StringAttr::get(user->getContext(), kRngSeedFunction));
  if (!existing)
    return nullptr;
  auto function = dyn_cast<func::FuncOp>(existing);
  if (function && function.isExternal() &&
      function.getFunctionType() == getRngSeedFunctionType(user->getContext()))
    return nullptr;
  return existing;
}

namespace {

/// remat.philox_uniform -> linalg.generic computing each element from its
/// linear index.
struct PhiloxUniformOpLowering : OpConversionPattern<PhiloxUniformOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PhiloxUniformOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto elementType = cast<FloatType>(type.getElementType());
    Location loc = op.getLoc();
    int64_t rank = type.getRank();

    Value init =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * type.getDimSize(d + 1);

    Value seed = adaptor.getSeed(), offset = adaptor.getOffset();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location loc, ValueRange) {
          Value linear = offset;
          for (int64_t d = 0; d < rank; ++d) {
            Value idx = arith::IndexCastUIOp::create(
                b, loc, b.getI64Type(), linalg::IndexOp::create(b, loc, d));
            Value stride = arith::ConstantOp::create(
                b, loc, b.getI64IntegerAttr(strides[d]));
            linear = arith::AddIOp::create(
                b, loc, linear, arith::MulIOp::create(b, loc, idx, stride));
          }
          linalg::YieldOp::create(
              b, loc, buildPhiloxElement(b, loc, seed, linear, elementType));
        });
    generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// remat.rng_seed -> a call of the runtime's seed function, declared at the
/// start of the nearest symbol table when missing.
struct RngSeedOpLowering : OpConversionPattern<RngSeedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RngSeedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (getConflictingRngSeedSymbol(op))
      return rewriter.notifyMatchFailure(
          op, "the symbol of the runtime's seed function is defined otherwise");
    FunctionType type = getRngSeedFunctionType(op.getContext());
    if (!SymbolTable::lookupNearestSymbolFrom(
            op, rewriter.getStringAttr(kRngSeedFunction))) {
      Operation *symbolTable = SymbolTable::getNearestSymbolTable(op);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&symbolTable->getRegion(0).front());
      auto function = func::FuncOp::create(rewriter, symbolTable->getLoc(),
                                           kRngSeedFunction, type);
      function.setPrivate();
    }
    rewriter.replaceOpWithNewOp<func::CallOp>(op, kRngSeedFunction,
                                              type.getResults());
    return success();
  }
};

/// remat.scatter_add_rows -> an scf.forall over dest's columns, each of
/// which walks the positions in order with an scf.for, reading and writing
/// its column of dest in place: positions times columns additions instead
/// of a linalg.generic's rows times positions times columns comparisons.
/// Each element still adds its terms in position order, whatever thread
/// runs its column. An index that names no row (outside [0, rows), or
/// `skip`) reads and writes back the element its clamp names, unchanged:
/// no branch, and only this column's thread touches it.
struct ScatterAddRowsOpLowering : OpConversionPattern<ScatterAddRowsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScatterAddRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
    int64_t positions =
        cast<RankedTensorType>(op.getIndices().getType()).getDimSize(0);
    Value dest = adaptor.getDest();
    if (rows == 0 || columns == 0 || positions == 0) {
      rewriter.replaceOp(op, dest);
      return success();
    }
    Location loc = op.getLoc();
    Value indices = adaptor.getIndices(), values = adaptor.getValues();
    std::optional<int64_t> skip = op.getSkip();

    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(columns)},
        ValueRange{dest}, /*mapping=*/std::nullopt);
    forall->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    Value column = forall.getInductionVar(0);
    Value shared = forall.getRegionIterArgs().front();
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0), column};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(rows),
                                       rewriter.getIndexAttr(1)};
    SmallVector<OpFoldResult> strides(2, rewriter.getIndexAttr(1));

    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getTerminator());
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({rows, 1}, type.getElementType()),
        shared, offsets, sizes, strides);
    auto i64Constant = [&](OpBuilder &b, int64_t value) {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
    };
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero,
        arith::ConstantIndexOp::create(rewriter, loc, positions),
        arith::ConstantIndexOp::create(rewriter, loc, 1), ValueRange{slice},
        [&](OpBuilder &b, Location loc, Value position, ValueRange iterArgs) {
          Value acc = iterArgs.front();
          Value index = tensor::ExtractOp::create(b, loc, indices, position);
          Value clamped = arith::MinSIOp::create(
              b, loc, arith::MaxSIOp::create(b, loc, index, i64Constant(b, 0)),
              i64Constant(b, rows - 1));
          // In range exactly when the clamp changes nothing.
          Value names = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              index, clamped);
          if (skip)
            names = arith::AndIOp::create(
                b, loc, names,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, index,
                                      i64Constant(b, *skip)));
          Value row =
              arith::IndexCastOp::create(b, loc, b.getIndexType(), clamped);
          Value old =
              tensor::ExtractOp::create(b, loc, acc, ValueRange{row, zero});
          Value term = tensor::ExtractOp::create(b, loc, values,
                                                 ValueRange{position, column});
          Value sum = arith::AddFOp::create(b, loc, old, term);
          Value updated = arith::SelectOp::create(b, loc, names, sum, old);
          scf::YieldOp::create(
              b, loc,
              ValueRange{tensor::InsertOp::create(b, loc, updated, acc,
                                                  ValueRange{row, zero})
                             .getResult()});
        });
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, loop.getResult(0),
                                          shared, offsets, sizes, strides);
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }
};

/// remat.backward -> its ops in front of it, its results replaced with the
/// values its region yields.
struct BackwardOpLowering : OpConversionPattern<BackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    YieldOp yield = op.getYield();
    SmallVector<Value> yielded(yield.getOperands());
    rewriter.inlineBlockBefore(&op.getBody().front(), op);
    rewriter.replaceOp(op, yielded);
    rewriter.eraseOp(yield);
    return success();
  }
};

} // namespace

void remat::populateRematToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BackwardOpLowering, PhiloxUniformOpLowering, RngSeedOpLowering,
               ScatterAddRowsOpLowering>(patterns.getContext());
}

void remat::configureRematToLinalgConversionLegality(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                         linalg::LinalgDialect, scf::SCFDialect,
                         tensor::TensorDialect>();
  target.addIllegalDialect<RematDialect>();
  target.addLegalOp<BarrierOp>();
}

/// Emits an error at every op of `module` that the patterns cannot lower
/// and returns whether there was one: the conversion would only say that it
/// failed to legalize the op.
static LogicalResult checkLowerable(ModuleOp module) {
  WalkResult walk =
      module.walk([&](Operation *op) {
        if (isa<RngUniformOp>(op)) {
          op->emitOpError(
              "draws from the step's stateful generator, which has no "
              "lowering; -remat-thread-rng turns it into a "
              "'remat.philox_uniform' with an explicit seed and offset");
          return WalkResult::interrupt();
        }
        if (!isa<RngSeedOp>(op))
          return WalkResult::advance();
        Operation *existing = getConflictingRngSeedSymbol(op);
        if (!existing)
          return WalkResult::advance();
        InFlightDiagnostic diag =
            op->emitOpError()
            << "lowers to a call of the runtime's @" << kRngSeedFunction
            << " : () -> i64, but the module defines that symbol otherwise";
        diag.attachNote(existing->getLoc()) << "the symbol is defined here";
        return WalkResult::interrupt();
      });
  return failure(walk.wasInterrupted());
}

/// Drops the contract's `remat.*` attributes from `function`'s arguments
/// and ops: they have served their purpose, and LLVM has no meaning for
/// them.
static void dropContractAttributes(func::FuncOp function) {
  auto isRematAttr = [](NamedAttribute attr) {
    return attr.getName().getValue().starts_with("remat.");
  };
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (DictionaryAttr attrs = function.getArgAttrDict(i))
      for (NamedAttribute attr : attrs)
        if (isRematAttr(attr))
          function.removeArgAttr(i, attr.getName());
  function.walk([&](Operation *op) {
    for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
      if (isRematAttr(attr))
        op->removeDiscardableAttr(attr.getName());
  });
}

namespace {

/// A module pass: lowering remat.rng_seed declares the runtime's seed
/// function in the module.
struct ConvertRematToLinalgPass
    : remat::impl::ConvertRematToLinalgPassBase<ConvertRematToLinalgPass> {
  using ConvertRematToLinalgPassBase::ConvertRematToLinalgPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkLowerable(module)))
      return signalPassFailure();
    ConversionTarget target(getContext());
    configureRematToLinalgConversionLegality(target);
    RewritePatternSet patterns(&getContext());
    populateRematToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    for (auto function : module.getOps<func::FuncOp>())
      dropContractAttributes(function);
  }
};

} // namespace
