//===- FuseElementwise.cpp - Elementwise fusion that keeps windows whole --===//
//
// This file implements -remat-fuse-elementwise: upstream's elementwise fusion
// of linalg ops on tensors, except into ops that read an operand through a
// window (convolutions, pooling).
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace remat {
#define GEN_PASS_DEF_REMATFUSEELEMENTWISEPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// Returns true if `op` reads some operand through a window, a result such
/// as `oh + kh` that combines loop dimensions.
static bool readsWindow(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp &&
         llvm::any_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
           return !map.isProjectedPermutation();
         });
}

/// Upstream's default (fuse a producer into its only user), refusing users
/// that read a window: each output of such an op reads each input element
/// many times, so a fused producer would be recomputed that many times, and
/// the runtime's convolution kernels read operands, not fused bodies.
static bool shouldFuse(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  return producer && producer->hasOneUse() &&
         !readsWindow(fusedOperand->getOwner());
}

namespace {

struct RematFuseElementwisePass
    : remat::impl::RematFuseElementwisePassBase<RematFuseElementwisePass> {
  using RematFuseElementwisePassBase::RematFuseElementwisePassBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // The patterns and order of upstream's -linalg-fuse-elementwise-ops,
    // with shouldFuse as the control function.
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, shouldFuse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, shouldFuse);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal());
  }
};

} // namespace
