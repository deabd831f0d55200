//===- StripBarriers.cpp - Drop barriers once buffers are in place --------===//
//
// This file implements -remat-strip-barriers, which replaces every
// remat.barrier by its operands after bufferization, when recomputed ops are
// distinct writes into distinct buffers and nothing can merge them with
// their originals any more.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATSTRIPBARRIERSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct RematStripBarriersPass
    : remat::impl::RematStripBarriersPassBase<RematStripBarriersPass> {
  using RematStripBarriersPassBase::RematStripBarriersPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](BarrierOp barrier) {
      rewriter.replaceOp(barrier, barrier.getInputs());
    });
  }
};

} // namespace
