//===- Checkpoint.cpp - Recompute checkpoint segments ---------------------===//
//
// This file implements -remat-checkpoint: it computes the CheckpointPlan of a
// function and applies it, creating the planned barriers and clones in the
// backward region and redirecting the planned backward uses to the clones.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CheckpointPlan.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/ApplyCheckpointPlan.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"

namespace remat {
#define GEN_PASS_DEF_REMATCHECKPOINTPASS
#include "remat/Dialect/Remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct RematCheckpointPass
    : remat::impl::RematCheckpointPassBase<RematCheckpointPass> {
  using RematCheckpointPassBase::RematCheckpointPassBase;

  void runOnOperation() override {
    if (failed(verifyMarksTakeEffect(getOperation())))
      return signalPassFailure();
    CheckpointOptions options;
    options.earlyStop = earlyStop;
    CheckpointPlan plan = CheckpointPlan::compute(getOperation(), options);

    if (!plan.getStatefulRandomOps().empty()) {
      for (Operation *op : plan.getStatefulRandomOps())
        op->emitOpError()
            << "is a stateful random op in checkpoint segment "
            << formatSegmentPath(getSegmentPath(op))
            << ": a recomputed copy would draw different numbers; run "
               "-remat-thread-rng first";
      return signalPassFailure();
    }

    for (const UnclonableOp &unclonable : plan.getUnclonableOps())
      unclonable.op->emitRemark()
          << "'" << unclonable.op->getName() << "' in checkpoint segment "
          << formatSegmentPath(getSegmentPath(unclonable.op))
          << " cannot be recomputed (" << unclonable.reason
          << "); its results stay saved";
    numUnclonable += plan.getUnclonableOps().size();

    applyCheckpointPlan(plan);
    numCloned += plan.getClones().size();
  }
};

} // namespace
