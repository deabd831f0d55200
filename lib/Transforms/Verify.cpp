//===- Verify.cpp - Check recomputed ops against their originals ----------===//
//
// This file implements -remat-verify, the determinism check: every op marked
// `remat.clone_of = N` must be the same computation as the forward op marked
// `remat.id = N` (same op, attributes, result types, regions, and equivalent
// operands).
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

namespace remat {
#define GEN_PASS_DEF_REMATVERIFYPASS
#include "remat/Transforms/Passes.h.inc"
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
         name == RematDialect::kCloneOfAttrName;
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
    return llvm::make_filter_range(op->getDiscardableAttrs(),
                                   [](NamedAttribute attr) {
                                     return !isBookkeeping(
                                         attr.getName().getValue());
                                   });
  };
  return llvm::equal(computeAttrs(copy), computeAttrs(original));
}

/// Returns a description of the first attribute in which `copy` and
/// `original` differ, or an empty string if their attributes agree.
std::string describeAttrDifference(Operation *copy,
                                          Operation *original) {
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
  bool isEquivalent(Value copy, Value original);
  std::string compareOps(Operation *copy, Operation *original,
                         DenseMap<Value, Value> &inner);
  std::string compareTypesAndOperands(Operation *copy, Operation *original,
                                      DenseMap<Value, Value> &inner);
  std::string compareRegions(Operation *copy, Operation *original,
                             DenseMap<Value, Value> &inner);

  func::FuncOp function;
  DenseMap<int64_t, Operation *> originals;
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

  equivalent[{copy, original}] = result;
  return result;
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

std::string CloneVerifier::compareTypesAndOperands(
    Operation *copy, Operation *original, DenseMap<Value, Value> &inner) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (copy->getNumResults() != original->getNumResults()) {
    os << "it has " << copy->getNumResults() << " results but its original has "
       << original->getNumResults();
    return text;
  }
  for (auto [number, types] : llvm::enumerate(
           llvm::zip(copy->getResultTypes(), original->getResultTypes()))) {
    auto [copyType, originalType] = types;
    if (copyType != originalType) {
      os << "its result #" << number << " has type '" << copyType
         << "' but its original's has type '" << originalType << "'";
      return text;
    }
  }

  if (copy->getNumOperands() != original->getNumOperands()) {
    os << "it has " << copy->getNumOperands()
       << " operands but its original has " << original->getNumOperands();
    return text;
  }
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
  if (copy->getNumRegions() != original->getNumRegions()) {
    os << "it has " << copy->getNumRegions() << " regions but its original has "
       << original->getNumRegions();
    return text;
  }
  for (auto [index, regions] : llvm::enumerate(
           llvm::zip(copy->getRegions(), original->getRegions()))) {
    auto &[copyRegion, originalRegion] = regions;
    if (copyRegion.getBlocks().size() != originalRegion.getBlocks().size()) {
      os << "its region #" << index
         << " has a different number of blocks than its original's";
      return text;
    }
    for (auto [copyBlock, originalBlock] : llvm::zip(copyRegion, originalRegion)) {
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

LogicalResult CloneVerifier::run() {
  BackwardOp backward = getBackwardOp(function.getBody());
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
    if (!original) {
      copy->emitOpError() << "has '" << RematDialect::kCloneOfAttrName
                          << "' = " << id.getInt() << " but no op has '"
                          << RematDialect::kIdAttrName << "' = " << id.getInt();
      failed = true;
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
