//===- ThreadRng.cpp - Stateful random ops to counter-based ones ----------===//
//
// This file implements -remat-thread-rng, which gives every random op of a
// training step an explicit (seed, offset) so that it can be recomputed.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATTHREADRNGPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Returns the seed of `function`: its `{remat.rng_seed}` argument, else its
/// first `remat.rng_seed` op, moved to the entry so that it dominates every
/// random op. Null if it has neither.
Value findSeed(func::FuncOp function) {
  for (BlockArgument arg : function.getArguments())
    if (function.getArgAttr(arg.getArgNumber(), RematDialect::kRngSeedAttrName))
      return arg;
  RngSeedOp seedOp;
  function.walk([&](RngSeedOp op) {
    seedOp = op;
    return WalkResult::interrupt();
  });
  if (!seedOp)
    return {};
  // The seed is the generator's key, which draws do not change, so reading
  // it first is the same as reading it where it was.
  seedOp->moveBefore(&function.getBody().front().front());
  return seedOp.getSeed();
}

struct RematThreadRngPass
    : remat::impl::RematThreadRngPassBase<RematThreadRngPass> {
  using RematThreadRngPassBase::RematThreadRngPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    // Pre-order is program order: the forward ops, then the backward
    // region's ops when the walk reaches remat.backward.
    SmallVector<RngUniformOp> randomOps;
    function.walk<WalkOrder::PreOrder>(
        [&](RngUniformOp op) { randomOps.push_back(op); });
    if (randomOps.empty())
      return;

    Value seed = findSeed(function);
    if (!seed) {
      randomOps.front().emitOpError()
          << "has no seed to thread: mark an i64 argument of @"
          << function.getSymName() << " with {"
          << RematDialect::kRngSeedAttrName << "} or add a 'remat.rng_seed' op";
      return signalPassFailure();
    }

    IRRewriter rewriter(&getContext());
    uint64_t offset = 0;
    for (RngUniformOp op : randomOps) {
      auto type = cast<RankedTensorType>(op.getType());
      uint64_t words = (static_cast<uint64_t>(type.getNumElements()) + 3) / 4 * 4;
      if (offset + words < offset) {
        op.emitOpError("exhausts the 2^64 random words of the step's stream");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      auto offsetOp = arith::ConstantOp::create(
          rewriter, op.getLoc(), rewriter.getI64IntegerAttr(offset));
      if (Attribute segment = op->getAttr(RematDialect::kSegmentAttrName))
        offsetOp->setAttr(RematDialect::kSegmentAttrName, segment);
      auto philox = PhiloxUniformOp::create(rewriter, op.getLoc(), type, seed,
                                            offsetOp.getResult());
      philox->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      rewriter.replaceOp(op, philox.getResult());
      offset += words;
      ++numThreaded;
    }
  }
};

} // namespace
