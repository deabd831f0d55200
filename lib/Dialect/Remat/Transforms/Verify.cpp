//===- Verify.cpp - Check recomputed ops against their originals ----------===//
//
// This file implements -remat-verify, the determinism check: every op marked
// `remat.clone_of = N` must be the same computation as the forward op marked
// `remat.id = N` (same op, attributes, result types, regions, and equivalent
// operands).
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace remat {
#define GEN_PASS_DEF_REMATVERIFYPASS
#include "remat/Dialect/Remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Returns true for the attributes that say how an op takes part in
/// checkpointing rather than what it computes.
bool isBookkeeping(StringRef name) {
  return name == RematDialect::kSegmentAttrName ||
         name == RematDialect::kPolicyAttrName ||
         name == RematDialect::kNameAttrName ||
         name == RematDialect::kIdAttrName ||
         name == RematDialect::kCloneOfAttrName ||
         name == RematDialect::kRerunOfAttrName;
}

/// Returns the attributes of `op` (inherent and discardable) that define its
/// computation, sorted by name.
SmallVector<NamedAttribute> getComputeAttrs(Operation *op) {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : op->getAttrDictionary())
    if (!isBookkeeping(attr.getName().getValue()))
      attrs.push_back(attr);
  return attrs;
}

/// Returns true if `copy` and `original` have equal properties and equal
/// discardable attributes apart from bookkeeping, without building the
/// attribute dictionary of ops whose inherent attributes are properties.
bool haveSameComputeAttrs(Operation *copy, Operation *original) {
  if (copy->getPropertiesStorageSize() &&
      !copy->getName().compareOpProperties(copy->getPropertiesStorage(),
                                           original->getPropertiesStorage()))
    return false;
  auto computeAttrs = [](Operation *op) {
    return llvm::make_filter_range(
        op->getDiscardableAttrs(), [](NamedAttribute attr) {
          return !isBookkeeping(attr.getName().getValue());
        });
  };
  return llvm::equal(computeAttrs(copy), computeAttrs(original));
}

/// Returns a description of the first attribute in which `copy` and
/// `original` differ, or an empty string if their attributes agree.
std::string describeAttrDifference(Operation *copy, Operation *original) {
  std::string text;
  llvm::raw_string_ostream os(text);
  SmallVector<NamedAttribute> copyAttrs = getComputeAttrs(copy);
  SmallVector<NamedAttribute> originalAttrs = getComputeAttrs(original);
  for (NamedAttribute attr : originalAttrs) {
    Attribute value = copy->getAttr(attr.getName());
    if (!value) {
      os << "it lacks attribute '" << attr.getName().getValue()
         << "' of its original";
      return text;
    }
    if (value != attr.getValue()) {
      os << "it has attribute '" << attr.getName().getValue() << "' = " << value
         << " but its original has " << attr.getValue();
      return text;
    }
  }
  if (copyAttrs.size() != originalAttrs.size()) {
    for (NamedAttribute attr : copyAttrs)
      if (!original->getAttr(attr.getName())) {
        os << "it has attribute '" << attr.getName().getValue()
           << "' that its original lacks";
        return text;
      }
  }

  return text;
}

/// Returns the op that allocates `base` (an op with an allocate effect on
/// it), or null.
static Operation *getAllocation(Value base) {
  auto effects = base.getDefiningOp<MemoryEffectOpInterface>();
  if (effects && effects.getEffectOnValue<MemoryEffects::Allocate>(base))
    return effects;
  return nullptr;
}

/// Returns true if the effects on `a` and `b` (null: the whole resource)
/// may touch the same memory: unless both are distinct allocations.
static bool mayAlias(Value a, Value b) {
  if (!a || !b)
    return true;
  Value baseA = getMemoryBase(a), baseB = getMemoryBase(b);
  if (baseA == baseB)
    return true;
  return !getAllocation(baseA) || !getAllocation(baseB);
}

/// Returns true if `effect` touches memory that `op` allocates itself (in
/// its regions), which no other op can see.
static bool isLocalTo(const MemoryEffects::EffectInstance &effect,
                      Operation *op) {
  Value value = effect.getValue();
  if (!value)
    return false;
  Operation *allocation = getAllocation(getMemoryBase(value));
  return allocation && allocation != op && op->isAncestor(allocation);
}

/// Appends the memory effects of `op` itself (not of the ops in its regions
/// when they define its effects). Returns false if they are unknown.
static bool getOwnEffects(Operation *op,
                          SmallVectorImpl<MemoryEffects::EffectInstance> &out) {
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    effects.getEffects(out);
    return true;
  }
  return op->isRegistered() &&
         op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
}

/// The memory effects a clone has on state outside itself.
struct CloneEffects {
  /// A nested op whose effects are unknown, if any.
  Operation *unknown = nullptr;
  /// A stateful random op, if any.
  Operation *random = nullptr;
  /// A write or free, if any.
  std::optional<std::pair<Operation *, MemoryEffects::EffectInstance>> write;
  /// The reads.
  SmallVector<MemoryEffects::EffectInstance> reads;
};

static CloneEffects getCloneEffects(Operation *clone) {
  CloneEffects result;
  clone->walk([&](Operation *op) {
    if (isa<RngUniformOp>(op) && !result.random)
      result.random = op;
    SmallVector<MemoryEffects::EffectInstance> effects;
    if (!getOwnEffects(op, effects)) {
      if (!result.unknown)
        result.unknown = op;
      return;
    }
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (isa<MemoryEffects::Allocate>(effect.getEffect()) ||
          isLocalTo(effect, clone))
        continue;
      if (isa<MemoryEffects::Read>(effect.getEffect()))
        result.reads.push_back(effect);
      else if (!result.write)
        result.write = {op, effect};
    }
  });
  return result;
}

/// Compares clones with their originals. Every check is local to one clone
/// (an operand produced by another clone is equivalent if that clone's
/// original produces the original operand; the other clone is checked in its
/// own right), so the whole function takes linear time; barrier chains are
/// memoized.
class CloneVerifier {
public:
  explicit CloneVerifier(func::FuncOp function) : function(function) {}

  LogicalResult run();

private:
  LogicalResult checkEffects(Operation *copy, Operation *original, int64_t id);
  std::pair<Operation *, const MemoryEffects::EffectInstance *>
  findClobber(Operation *copy, Operation *original,
              ArrayRef<MemoryEffects::EffectInstance> reads);
  void numberOps(Operation *op);
  bool isEquivalent(Value copy, Value original);
  std::string compareOps(Operation *copy, Operation *original,
                         DenseMap<Value, Value> &inner);
  std::string compareTypesAndOperands(Operation *copy, Operation *original,
                                      DenseMap<Value, Value> &inner);
  std::string compareRegions(Operation *copy, Operation *original,
                             DenseMap<Value, Value> &inner);

  func::FuncOp function;
  BackwardOp backward;
  DenseMap<int64_t, Operation *> originals;
  /// The function's ops in program order (pre-order), numbered on demand:
  /// the position of each op and of the last op nested in it.
  std::vector<Operation *> order;
  DenseMap<Operation *, std::pair<size_t, size_t>> positions;
  DenseMap<std::pair<Value, Value>, bool> equivalent;
};

bool CloneVerifier::isEquivalent(Value copy, Value original) {
  if (copy == original)
    return true;
  auto [it, inserted] = equivalent.try_emplace({copy, original}, false);
  if (!inserted)
    return it->second;

  bool result = false;
  if (auto barrier = copy.getDefiningOp<BarrierOp>()) {
    unsigned number = cast<OpResult>(copy).getResultNumber();
    result = isEquivalent(barrier.getInputs()[number], original);
  } else if (Operation *def = copy.getDefiningOp()) {
    if (auto id =
            def->getAttrOfType<IntegerAttr>(RematDialect::kCloneOfAttrName)) {
      Operation *source = originals.lookup(id.getInt());
      result = source && original.getDefiningOp() == source &&
               cast<OpResult>(original).getResultNumber() ==
                   cast<OpResult>(copy).getResultNumber();
    }
  }

  // Canonicalization hoists and merges constants, clones or not.
  Attribute copyConstant, originalConstant;
  if (!result && copy.getType() == original.getType() &&
      matchPattern(copy, m_Constant(&copyConstant)) &&
      matchPattern(original, m_Constant(&originalConstant)))
    result = copyConstant == originalConstant;

  // Canonicalization also rebuilds ops (a folded transpose or reshape is a
  // new op without `remat.id` or `remat.clone_of`), in the forward and in
  // its recomputed copy alike. A side-effect-free op that is the same
  // computation as the original's producer, on equivalent operands, gives
  // the same value.
  if (!result) {
    Operation *copyDef = copy.getDefiningOp();
    Operation *originalDef = original.getDefiningOp();
    if (copyDef && originalDef && copyDef != originalDef &&
        !copyDef->hasAttr(RematDialect::kCloneOfAttrName) &&
        cast<OpResult>(copy).getResultNumber() ==
            cast<OpResult>(original).getResultNumber() &&
        isMemoryEffectFree(copyDef) && isMemoryEffectFree(originalDef)) {
      DenseMap<Value, Value> inner;
      result = compareOps(copyDef, originalDef, inner).empty();
    }
  }

  equivalent[{copy, original}] = result;
  return result;
}

/// "it has N <what> but its original has M" for a copy with `copyCount` and
/// an original with `originalCount`, or an empty string if they agree.
std::string describeCountDifference(StringRef what, unsigned copyCount,
                                    unsigned originalCount) {
  if (copyCount == originalCount)
    return "";
  return ("it has " + Twine(copyCount) + " " + what + " but its original has " +
          Twine(originalCount))
      .str();
}

/// Returns a description of the first difference between `copy` and
/// `original`, or an empty string if they compute the same thing. `inner`
/// maps values defined inside an enclosing compared op to their copies.
std::string CloneVerifier::compareOps(Operation *copy, Operation *original,
                                      DenseMap<Value, Value> &inner) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (copy->getName() != original->getName()) {
    os << "it is '" << copy->getName() << "' but its original is '"
       << original->getName() << "'";
    return text;
  }

  if (!haveSameComputeAttrs(copy, original))
    if (std::string difference = describeAttrDifference(copy, original);
        !difference.empty())
      return difference;
  return compareTypesAndOperands(copy, original, inner);
}

std::string
CloneVerifier::compareTypesAndOperands(Operation *copy, Operation *original,
                                       DenseMap<Value, Value> &inner) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (std::string difference = describeCountDifference(
          "results", copy->getNumResults(), original->getNumResults());
      !difference.empty())
    return difference;
  for (auto [number, types] : llvm::enumerate(
           llvm::zip(copy->getResultTypes(), original->getResultTypes()))) {
    auto [copyType, originalType] = types;
    if (copyType != originalType) {
      os << "its result #" << number << " has type '" << copyType
         << "' but its original's has type '" << originalType << "'";
      return text;
    }
  }

  if (std::string difference = describeCountDifference(
          "operands", copy->getNumOperands(), original->getNumOperands());
      !difference.empty())
    return difference;
  for (auto [number, operands] : llvm::enumerate(
           llvm::zip(copy->getOperands(), original->getOperands()))) {
    auto [copyOperand, originalOperand] = operands;
    auto it = inner.find(originalOperand);
    bool same = it != inner.end() ? it->second == copyOperand
                                  : isEquivalent(copyOperand, originalOperand);
    if (!same) {
      os << "its operand #" << number
         << " is not equivalent to its original's operand #" << number
         << " (not the same value, nor a barrier or clone of it)";
      return text;
    }
  }

  for (auto [copyResult, originalResult] :
       llvm::zip(copy->getResults(), original->getResults()))
    inner[originalResult] = copyResult;
  return compareRegions(copy, original, inner);
}

std::string CloneVerifier::compareRegions(Operation *copy, Operation *original,
                                          DenseMap<Value, Value> &inner) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (std::string difference = describeCountDifference(
          "regions", copy->getNumRegions(), original->getNumRegions());
      !difference.empty())
    return difference;
  for (auto [index, regions] :
       llvm::enumerate(llvm::zip(copy->getRegions(), original->getRegions()))) {
    auto &[copyRegion, originalRegion] = regions;
    if (copyRegion.getBlocks().size() != originalRegion.getBlocks().size()) {
      os << "its region #" << index
         << " has a different number of blocks than its original's";
      return text;
    }
    for (auto [copyBlock, originalBlock] :
         llvm::zip(copyRegion, originalRegion)) {
      if (copyBlock.getArgumentTypes() != originalBlock.getArgumentTypes() ||
          copyBlock.getOperations().size() !=
              originalBlock.getOperations().size()) {
        os << "its region #" << index
           << " differs from its original's in block arguments or op count";
        return text;
      }
      for (auto [copyArg, originalArg] :
           llvm::zip(copyBlock.getArguments(), originalBlock.getArguments()))
        inner[originalArg] = copyArg;
      for (auto [copyOp, originalOp] : llvm::zip(copyBlock, originalBlock)) {
        std::string nested = compareOps(&copyOp, &originalOp, inner);
        if (!nested.empty()) {
          os << "in region #" << index << ", '" << copyOp.getName()
             << "' differs from its original: " << nested;
          return text;
        }
      }
    }
  }
  return text;
}

void CloneVerifier::numberOps(Operation *op) {
  size_t first = order.size();
  order.push_back(op);
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block)
        numberOps(&nested);
  positions[op] = {first, order.size() - 1};
}

/// Returns an op that may write or free memory that one of `reads` reads,
/// run after `original` and before `copy`, and that read; or nulls.
/// Conservative: when either is in a loop, its whole top-level op counts
/// (other iterations run the loop's other ops in between).
std::pair<Operation *, const MemoryEffects::EffectInstance *>
CloneVerifier::findClobber(Operation *copy, Operation *original,
                           ArrayRef<MemoryEffects::EffectInstance> reads) {
  if (order.empty())
    numberOps(function);
  auto topLevel = [](Operation *op, Block *block) {
    while (op && op->getBlock() != block)
      op = op->getParentOp();
    return op;
  };
  Operation *forwardTop = topLevel(original, &function.getBody().front());
  Operation *backwardTop = topLevel(copy, &backward.getBody().front());
  if (!forwardTop || !backwardTop)
    return {};

  auto [copyFirst, copyLast] = positions.lookup(copy);
  auto [originalFirst, originalLast] = positions.lookup(original);
  size_t last = positions.lookup(backwardTop).second;
  for (size_t i = positions.lookup(forwardTop).first; i <= last; ++i) {
    if (i == copyFirst) {
      i = copyLast;
      continue;
    }
    if (i == originalFirst) {
      i = originalLast;
      continue;
    }
    Operation *op = order[i];
    SmallVector<MemoryEffects::EffectInstance> effects;
    if (!getOwnEffects(op, effects))
      return {op, &reads.front()};
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      for (const MemoryEffects::EffectInstance &read : reads)
        if (read.getResource() == effect.getResource() &&
            mayAlias(read.getValue(), effect.getValue()))
          return {op, &read};
    }
  }
  return {};
}

/// Checks that recomputing `copy` reads what `original` read and changes no
/// state: no stateful random op, no write or free outside itself, no unknown
/// effects, and no read that an op between the two may have clobbered.
/// `original` is null when it is gone.
LogicalResult CloneVerifier::checkEffects(Operation *copy, Operation *original,
                                          int64_t id) {
  CloneEffects effects = getCloneEffects(copy);
  auto fail = [&](const Twine &message) {
    InFlightDiagnostic diag = copy->emitOpError()
                              << "is a recomputation ("
                              << RematDialect::kCloneOfAttrName << " = " << id
                              << ") that " << message;
    if (original)
      diag.attachNote(original->getLoc())
          << "the original '" << original->getName() << "' is here";
    return diag;
  };
  if (effects.random) {
    InFlightDiagnostic diag =
        fail("draws from the stateful generator ('remat.rng_uniform'): it gets "
             "the generator's next numbers, not those its original drew; run "
             "-remat-thread-rng before -remat-checkpoint");
    if (effects.random != copy)
      diag.attachNote(effects.random->getLoc()) << "the random op is here";
    return failure();
  }
  if (effects.unknown) {
    InFlightDiagnostic diag = fail(
        "holds '" + effects.unknown->getName().getStringRef() +
        "', whose memory effects are unknown, so it may change state or read "
        "what changed since its original ran");
    if (effects.unknown != copy)
      diag.attachNote(effects.unknown->getLoc()) << "the op is here";
    return failure();
  }
  if (effects.write) {
    auto &[writer, effect] = *effects.write;
    StringRef kind =
        isa<MemoryEffects::Free>(effect.getEffect()) ? "frees" : "writes";
    InFlightDiagnostic diag =
        fail(kind + " '" + effect.getResource()->getName() +
             "' again after its original did");
    if (writer != copy)
      diag.attachNote(writer->getLoc()) << "the effect is here";
    return failure();
  }
  if (effects.reads.empty())
    return success();
  if (!original) {
    fail("reads '" + effects.reads.front().getResource()->getName() +
         "' and its original is gone, so nothing shows that it reads what "
         "the original read");
    return failure();
  }
  auto [clobber, read] = findClobber(copy, original, effects.reads);
  if (clobber) {
    InFlightDiagnostic diag =
        fail("reads '" + read->getResource()->getName() +
             "', which may be written between its original and it, so it "
             "may read a different value");
    diag.attachNote(clobber->getLoc())
        << "this '" << clobber->getName() << "' may write what it reads";
    return failure();
  }
  return success();
}

LogicalResult CloneVerifier::run() {
  backward = getBackwardOp(function.getBody());
  bool failed = false;

  function.walk([&](Operation *op) {
    auto id = op->getAttrOfType<IntegerAttr>(RematDialect::kIdAttrName);
    if (!id)
      return;
    auto [it, inserted] = originals.try_emplace(id.getInt(), op);
    if (inserted)
      return;
    InFlightDiagnostic diag = op->emitOpError()
                              << "has '" << RematDialect::kIdAttrName
                              << "' = " << id.getInt()
                              << " like another op; ids are unique within a "
                                 "function";
    diag.attachNote(it->second->getLoc()) << "the other op is here";
    failed = true;
  });
  if (!backward)
    return failure(failed);

  backward.getBody().walk([&](Operation *copy) {
    auto id = copy->getAttrOfType<IntegerAttr>(RematDialect::kCloneOfAttrName);
    if (!id)
      return;
    Operation *original = originals.lookup(id.getInt());
    if (mlir::failed(checkEffects(copy, original, id.getInt()))) {
      failed = true;
      return;
    }
    if (!original) {
      // Canonicalization erases a forward op that only the backward read
      // once its clone replaced it there. A clone free of effects computes
      // the same from the same operands wherever it runs; there is nothing
      // left to compare it with.
      copy->emitRemark() << "has '" << RematDialect::kCloneOfAttrName
                         << "' = " << id.getInt() << " but no op has '"
                         << RematDialect::kIdAttrName << "' = " << id.getInt()
                         << " (removed, e.g. as dead after recomputation): "
                            "it has no memory effects; nothing to compare it "
                            "with";
      return;
    }
    DenseMap<Value, Value> inner;
    std::string mismatch = compareOps(copy, original, inner);
    if (mismatch.empty())
      return;
    InFlightDiagnostic diag = copy->emitOpError()
                              << "is not a faithful clone of its original ("
                              << RematDialect::kCloneOfAttrName << " = "
                              << id.getInt() << "): " << mismatch;
    diag.attachNote(original->getLoc())
        << "the original '" << original->getName() << "' is here";
    failed = true;
  });
  return failure(failed);
}

struct RematVerifyPass : remat::impl::RematVerifyPassBase<RematVerifyPass> {
  using RematVerifyPassBase::RematVerifyPassBase;

  void runOnOperation() override {
    if (failed(CloneVerifier(getOperation()).run()))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
