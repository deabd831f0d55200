//===- Checkpoint.cpp - Recompute checkpoint segments ---------------------===//
//
// This file implements -remat-checkpoint: it computes the CheckpointPlan of a
// function and applies it, creating the planned barriers and clones in the
// backward region and redirecting the planned backward uses to the clones.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CheckpointPlan.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace remat {
#define GEN_PASS_DEF_REMATCHECKPOINTPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Formats a segment path as the attribute reads: `0` or `[0, 1]`.
std::string formatSegment(ArrayRef<int64_t> path) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (path.size() == 1) {
    os << path.front();
  } else {
    os << '[';
    llvm::interleaveComma(path, os);
    os << ']';
  }
  return text;
}

/// Removes remat's per-op attributes from `clone` and the ops nested in it:
/// segment membership and policies describe the forward ops only, and the
/// dialect rejects `remat.segment` in the backward region.
void stripForwardAttrs(Operation *clone) {
  clone->walk([](Operation *op) {
    for (StringRef name :
         {RematDialect::kSegmentAttrName, RematDialect::kPolicyAttrName,
          RematDialect::kNameAttrName, RematDialect::kIdAttrName,
          RematDialect::kCloneOfAttrName})
      op->removeAttr(name);
  });
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

  if (clones.empty())
    return;
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
}

struct RematCheckpointPass
    : remat::impl::RematCheckpointPassBase<RematCheckpointPass> {
  using RematCheckpointPassBase::RematCheckpointPassBase;

  void runOnOperation() override {
    CheckpointOptions options;
    options.earlyStop = earlyStop;
    CheckpointPlan plan = CheckpointPlan::compute(getOperation(), options);

    if (!plan.getStatefulRandomOps().empty()) {
      for (Operation *op : plan.getStatefulRandomOps())
        op->emitOpError()
            << "is a stateful random op in checkpoint segment "
            << formatSegment(getSegmentPath(op))
            << ": a recomputed copy would draw different numbers; run "
               "-remat-thread-rng first";
      return signalPassFailure();
    }

    for (const UnclonableOp &unclonable : plan.getUnclonableOps())
      unclonable.op->emitRemark()
          << "'" << unclonable.op->getName() << "' in checkpoint segment "
          << formatSegment(getSegmentPath(unclonable.op))
          << " cannot be recomputed (" << unclonable.reason
          << "); its results stay saved";
    numUnclonable += plan.getUnclonableOps().size();

    applyCheckpointPlan(plan);
    numCloned += plan.getClones().size();
  }
};

} // namespace
