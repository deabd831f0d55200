//===- FuseElementwise.cpp - Elementwise fusion that keeps windows whole --===//
//
// This file implements -remat-fuse-elementwise: upstream's elementwise fusion
// of linalg ops on tensors, also into sums (linalg.reduce), except into ops
// that read an operand through a window (convolutions, pooling) and where
// fusing keeps an operand larger than the result it removes alive longer.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Passes.h"

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace remat {
#define GEN_PASS_DEF_REMATFUSEELEMENTWISEPASS
#include "remat/Memory/Passes.h.inc"
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

/// Returns true if fusing `producer` into `consumer` would keep an operand
/// larger than the producer's result alive longer. The fused consumer reads
/// the producer's operands where the producer read them before: an operand
/// no op reads at or after the consumer then lives until the consumer
/// instead of dying at its last reader, and the schedule (-remat-schedule)
/// can no longer run the producer early and free it. A ReLU's backward reads
/// its forward output only through `arith.cmpf ole, %out, 0`: unfused, the
/// comparison runs in the forward and the step keeps one byte an element
/// instead of four; fused into the backward's select, it keeps the output.
static bool extendsLargerOperand(Operation *producer, Operation *consumer) {
  Block *block = producer->getBlock();
  Operation *at = block->findAncestorOpInBlock(*consumer);
  std::optional<int64_t> resultBytes =
      remat::getValueBytes(producer->getResult(0));
  if (!at || !resultBytes)
    return false;
  return llvm::any_of(producer->getOperands(), [&](Value operand) {
    Operation *definer = operand.getDefiningOp();
    if (!definer || isa<tensor::EmptyOp>(definer) ||
        matchPattern(definer, m_Constant()) ||
        remat::getValueBytes(operand).value_or(0) <= *resultBytes)
      return false;
    return llvm::none_of(operand.getUsers(), [&](Operation *user) {
      Operation *reader = block->findAncestorOpInBlock(*user);
      return !reader || reader == at || at->isBeforeInBlock(reader);
    });
  });
}

/// Upstream's default (fuse a producer into its only user), refusing users
/// that read a window: each output of such an op reads each input element
/// many times, so a fused producer would be recomputed that many times, and
/// the runtime's convolution kernels read operands, not fused bodies; and
/// refusing fusions that keep a larger operand alive longer
/// (extendsLargerOperand).
static bool shouldFuse(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  return producer && producer->hasOneUse() &&
         !readsWindow(fusedOperand->getOwner()) &&
         !extendsLargerOperand(producer, fusedOperand->getOwner());
}

namespace {

struct RematFuseElementwisePass
    : remat::impl::RematFuseElementwisePassBase<RematFuseElementwisePass> {
  using RematFuseElementwisePassBase::RematFuseElementwisePassBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Upstream's fusion takes generic consumers only: a sum whose terms an
    // elementwise op makes (a batch norm's variance, a loss's sum of
    // squares) becomes a generic, so that the terms are computed inside the
    // sum instead of in a buffer of their own. The terms are the same
    // float32 values either way.
    SmallVector<linalg::ReduceOp> sums;
    getOperation()->walk([&](linalg::ReduceOp reduce) {
      if (llvm::any_of(reduce.getDpsInputOperands(), [](OpOperand *operand) {
            auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
            return producer &&
                   producer.getNumParallelLoops() == producer.getNumLoops() &&
                   shouldFuse(operand);
          }))
        sums.push_back(reduce);
    });
    IRRewriter rewriter(context);
    for (linalg::ReduceOp reduce : sums) {
      rewriter.setInsertionPoint(reduce);
      (void)linalg::generalizeNamedOp(rewriter, reduce);
    }

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
