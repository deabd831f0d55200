//===- FoldTransposes.cpp - Transposes into matmul indexing maps ----------===//
//
// This file implements -remat-fold-transposes, which lets a (batch) matmul
// read the source of a `linalg.transpose` through its indexing map instead
// of a transposed copy.
//
//===----------------------------------------------------------------------===//

#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace remat {
#define GEN_PASS_DEF_REMATFOLDTRANSPOSESPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns the map that reads `transpose`'s input where `map` read its
/// result: result dimension i of the transpose is input dimension
/// permutation[i].
AffineMap foldIntoMap(AffineMap map, linalg::TransposeOp transpose) {
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  SmallVector<AffineExpr> exprs(map.getNumResults());
  for (auto [index, expr] : llvm::enumerate(map.getResults()))
    exprs[permutation[index]] = expr;
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), exprs,
                        map.getContext());
}

/// Rewrites a matmul or batch matmul on tensors whose inputs are
/// transposes to read the transposes' inputs with permuted maps.
template <typename OpTy>
struct FoldTransposeIntoContraction : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs = op.getDpsInputs();
    bool folded = false;
    for (auto [index, input] : llvm::enumerate(inputs)) {
      auto transpose = input.template getDefiningOp<linalg::TransposeOp>();
      if (!transpose || !transpose.hasPureTensorSemantics())
        continue;
      maps[index] = foldIntoMap(maps[index], transpose);
      input = transpose.getInput();
      folded = true;
    }
    if (!folded)
      return failure();
    // The discardable attributes (remat's marks) carry over.
    SmallVector<NamedAttribute> attributes =
        llvm::to_vector(op->getDiscardableAttrs());
    attributes.push_back(rewriter.getNamedAttr(
        "indexing_maps", rewriter.getAffineMapArrayAttr(maps)));
    auto replacement = OpTy::create(rewriter, op.getLoc(), op->getResultTypes(),
                                    inputs, op.getDpsInits(), attributes);
    rewriter.replaceOp(op, replacement->getResults());
    return success();
  }
};

struct RematFoldTransposesPass
    : remat::impl::RematFoldTransposesPassBase<RematFoldTransposesPass> {
  using RematFoldTransposesPassBase::RematFoldTransposesPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    remat::populateRematFoldTransposesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void remat::populateRematFoldTransposesPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldTransposeIntoContraction<linalg::MatmulOp>,
               FoldTransposeIntoContraction<linalg::BatchMatmulOp>>(
      patterns.getContext());
}
