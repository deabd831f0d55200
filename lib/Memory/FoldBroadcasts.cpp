//===- FoldBroadcasts.cpp - Broadcasts into generic indexing maps ---------===//
//
// This file implements -remat-fold-broadcasts, which lets a linalg.generic
// read the source of a `linalg.broadcast` through its indexing map instead
// of a broadcast copy.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace remat {
#define GEN_PASS_DEF_REMATFOLDBROADCASTSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns the map that reads `broadcast`'s input where `map` read its
/// result: the input has the result's dimensions but the broadcast ones.
AffineMap foldIntoMap(AffineMap map, linalg::BroadcastOp broadcast) {
  ArrayRef<int64_t> added = broadcast.getDimensions();
  SmallVector<AffineExpr> exprs;
  for (auto [index, expr] : llvm::enumerate(map.getResults()))
    if (!llvm::is_contained(added, int64_t(index)))
      exprs.push_back(expr);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs,
                        map.getContext());
}

/// Rewrites a generic op on tensors whose inputs are broadcasts to read the
/// broadcasts' inputs with maps that drop the broadcast dimensions.
struct FoldBroadcastIntoGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<std::pair<OpOperand *, Value>> folds;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto broadcast = input->get().getDefiningOp<linalg::BroadcastOp>();
      if (!broadcast || !broadcast.hasPureTensorSemantics())
        continue;
      unsigned index = input->getOperandNumber();
      AffineMap unfolded = maps[index];
      maps[index] = foldIntoMap(unfolded, broadcast);
      // A loop dimension that only this operand's broadcast dimensions
      // index (a cumsum's reduction over a broadcast axis) would be left
      // with no extent: keep that broadcast.
      if (!inversePermutation(concatAffineMaps(maps, op.getContext()))) {
        maps[index] = unfolded;
        continue;
      }
      folds.push_back({input, broadcast.getInput()});
    }
    if (folds.empty())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (auto [operand, source] : folds)
        operand->set(source);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct RematFoldBroadcastsPass
    : remat::impl::RematFoldBroadcastsPassBase<RematFoldBroadcastsPass> {
  using RematFoldBroadcastsPassBase::RematFoldBroadcastsPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    remat::populateRematFoldBroadcastsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void remat::populateRematFoldBroadcastsPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldBroadcastIntoGeneric>(patterns.getContext());
}
