//===- ApplyCheckpointPlan.cpp - Carry out a checkpoint plan --------------===//
//
// This file implements the rewrite of -remat-checkpoint: it creates a plan's
// barriers and clones in the backward region, redirects the planned uses, and
// separates backward ops that CSE could merge into forward ones. The plan
// itself (lib/Analysis/CheckpointPlan.cpp) only reads the IR.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/Transforms/ApplyCheckpointPlan.h"

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVectorExtras.h"

using namespace mlir;

namespace remat {

//===----------------------------------------------------------------------===//
// Applying a plan
//===----------------------------------------------------------------------===//

void stripForwardAttrs(Operation *clone) {
  clone->walk([](Operation *op) {
    // Most ops carry no discardable attribute: look before rebuilding.
    auto isForwardAttr = [](NamedAttribute attr) {
      StringRef name = attr.getName().getValue();
      return name == RematDialect::kSegmentAttrName ||
             name == RematDialect::kPolicyAttrName ||
             name == RematDialect::kNameAttrName ||
             name == RematDialect::kIdAttrName ||
             name == RematDialect::kCloneOfAttrName;
    };
    if (llvm::none_of(op->getDiscardableAttrs(), isForwardAttr))
      return;
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (!isForwardAttr(attr))
        kept.push_back(attr);
    op->setDiscardableAttrs(kept);
  });
}

//===----------------------------------------------------------------------===//
// Backward twins
//===----------------------------------------------------------------------===//

/// Depth to which twin detection follows operands through their defining
/// ops: far enough for the constant and the empty tensor that a twin's
/// zero-filled destination is made of (the twin at depth 0, the fill at 1,
/// they at 2), which CSE merges before the ops that use them.
static constexpr unsigned kTwinDepth = 3;

/// Whether CSE can merge an op of the backward region with an op of the
/// forward part once it has merged their operands: `forward` and `backward`
/// are the same value, or results of the same number of two ops that are
/// equivalent (same name, attributes, types, regions) with operands of this
/// kind, up to kTwinDepth ops deep. Ops with memory effects never merge.
static bool isCseEquivalent(Value forward, Value backward, unsigned depth) {
  if (forward == backward)
    return true;
  auto forwardResult = dyn_cast<OpResult>(forward);
  auto backwardResult = dyn_cast<OpResult>(backward);
  if (depth >= kTwinDepth || !forwardResult || !backwardResult ||
      forwardResult.getResultNumber() != backwardResult.getResultNumber())
    return false;
  Operation *forwardOp = forwardResult.getOwner();
  Operation *backwardOp = backwardResult.getOwner();
  if (forwardOp->getName() != backwardOp->getName() ||
      !isMemoryEffectFree(forwardOp) || !isMemoryEffectFree(backwardOp))
    return false;
  DenseMap<Value, Value> mapped;
  return OperationEquivalence::isEquivalentTo(
      forwardOp, backwardOp,
      [&](Value lhs, Value rhs) {
        if (mapped.lookup(lhs) == rhs)
          return success();
        return success(isCseEquivalent(lhs, rhs, depth + 1));
      },
      [&](Value lhs, Value rhs) { mapped[lhs] = rhs; },
      OperationEquivalence::IgnoreLocations);
}

/// Keeps the backward region's own recomputations of forward ops apart from
/// them. A backward op G equivalent to a forward op F whose results the
/// backward region does not read (F is recomputed, or the backward computes
/// its own copy, as AOTAutograd's decompositions do) would be merged into F
/// by CSE, which makes F's results saved activations: memory the plan did not
/// predict. G's operands from the forward part are read through a barrier
/// instead, so CSE cannot merge G (nor, through G, the ops that use it).
/// Constants and free destinations are left alone.
static void separateBackwardTwins(BackwardOp backward) {
  auto isOutside = [&](Value value) {
    return !backward->isAncestor(value.getParentRegion()->getParentOp());
  };
  auto isConstant = [](Value value) {
    Operation *def = value.getDefiningOp();
    return def && def->hasTrait<OpTrait::ConstantLike>();
  };
  auto readByBackward = [&](Operation *op) {
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (backward->isAncestor(user))
          return true;
    return false;
  };
  // A twin reads an outside value directly, and so does its forward op (or
  // an op equivalent to it, which CSE would have to merge first: not looked
  // for). At most this many forward users of that value are compared, which
  // keeps the pass linear on values with many users.
  constexpr unsigned kMaxCandidates = 16;

  OpBuilder builder(backward.getContext());
  for (Operation &op : backward.getBody().front()) {
    if (op.getNumResults() == 0 || isa<BarrierOp>(op) ||
        op.hasAttr(RematDialect::kCloneOfAttrName) || !isMemoryEffectFree(&op))
      continue;
    SmallVector<unsigned> outside;
    for (OpOperand &operand : op.getOpOperands())
      if (isOutside(operand.get()) && !isConstant(operand.get()))
        outside.push_back(operand.getOperandNumber());
    if (outside.empty())
      continue;
    unsigned compared = 0;
    bool isTwin = false;
    for (Operation *user : op.getOperand(outside.front()).getUsers()) {
      // A forward op: before the backward region in its block.
      if (user->getName() != op.getName() ||
          user->getBlock() != backward->getBlock() ||
          !user->isBeforeInBlock(backward))
        continue;
      if (++compared > kMaxCandidates)
        break;
      if (isCseEquivalent(user->getResult(0), op.getResult(0), 0) &&
          !readByBackward(user)) {
        isTwin = true;
        break;
      }
    }
    if (!isTwin)
      continue;
    builder.setInsertionPoint(&op);
    SmallVector<Value> inputs = llvm::map_to_vector(
        outside, [&](unsigned number) { return op.getOperand(number); });
    auto barrier = BarrierOp::create(builder, op.getLoc(), inputs);
    for (auto [number, result] : llvm::zip_equal(outside, barrier.getResults()))
      op.setOperand(number, result);
  }
}

/// Creates the planned barriers and clones and redirects the planned uses.
void applyCheckpointPlan(const CheckpointPlan &plan) {
  ArrayRef<PlannedClone> clones = plan.getClones();
  ArrayRef<PlannedBarrier> barriers = plan.getBarriers();
  SmallVector<Operation *, 0> cloneOps;
  SmallVector<Operation *, 0> barrierOps;
  cloneOps.reserve(clones.size());
  barrierOps.reserve(barriers.size());
  auto resolve = [&](const PlannedValue &value) -> Value {
    switch (value.kind) {
    case PlannedValue::Kind::Forward:
      return value.value;
    case PlannedValue::Kind::Clone:
      return cloneOps[value.index]->getResult(value.number);
    case PlannedValue::Kind::Barrier:
      return barrierOps[value.index]->getResult(value.number);
    }
    llvm_unreachable("unknown planned value kind");
  };

  // Even with nothing to recompute: CSE would otherwise merge the backward
  // region's own recomputations into forward ops and make them saved.
  if (clones.empty()) {
    if (auto backward = dyn_cast_or_null<BackwardOp>(plan.getBackwardOp()))
      separateBackwardTwins(backward);
    return;
  }
  Builder attrBuilder(clones.front().original->getContext());
  for (const PlannedClone &clone : clones)
    if (clone.id >= 0)
      clone.original->setAttr(RematDialect::kIdAttrName,
                              attrBuilder.getI64IntegerAttr(clone.id));

  OpBuilder builder(attrBuilder.getContext());
  size_t nextBarrier = 0;
  for (const PlannedClone &clone : clones) {
    builder.setInsertionPoint(clone.insertBefore);
    // Each (insertion point, level) group's barrier precedes its clones; the
    // plan orders both lists by group, and a group has a barrier only if one
    // of its clones reads a saved input.
    if (nextBarrier < barriers.size() &&
        barriers[nextBarrier].insertBefore == clone.insertBefore &&
        barriers[nextBarrier].level == clone.level) {
      SmallVector<Value> inputs =
          llvm::map_to_vector(barriers[nextBarrier].inputs, resolve);
      barrierOps.push_back(
          BarrierOp::create(builder, clone.insertBefore->getLoc(), inputs));
      ++nextBarrier;
    }

    IRMapping mapping;
    for (auto [value, source] :
         llvm::zip_equal(plan.getExternalValues(clone.original), clone.sources))
      mapping.map(value, resolve(source));
    Operation *copy = builder.clone(*clone.original, mapping);
    stripForwardAttrs(copy);
    if (clone.id >= 0)
      copy->setAttr(RematDialect::kCloneOfAttrName,
                    builder.getI64IntegerAttr(clone.id));
    cloneOps.push_back(copy);
  }
  assert(nextBarrier == barriers.size() && "barrier without clones");

  for (const PlannedUse &use : plan.getUses())
    use.operand->set(resolve(use.value));
  separateBackwardTwins(cast<BackwardOp>(plan.getBackwardOp()));
}

} // namespace remat
