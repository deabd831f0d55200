//===- FoldTransposes.cpp - Transposes into matmul indexing maps ----------===//
//
// This file implements -remat-fold-transposes, which lets a (batch) matmul
// read the source of a `linalg.transpose` through its indexing map instead
// of a transposed copy.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATFOLDTRANSPOSESPASS
#include "remat/Memory/Passes.h.inc"
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

/// Returns true if `op` can read `transpose`'s input through a permuted
/// map: a matmul any 2-D transpose, a batch matmul one that keeps the
/// batch dimension first (its maps must read the batch as d0: a transpose
/// that moves it, [1, 0, 2] in multi-head attention's [T, B * H, D] to
/// [B * H, T, D], stays a copy).
bool canFoldInto(Operation *op, linalg::TransposeOp transpose) {
  return !isa<linalg::BatchMatmulOp>(op) ||
         transpose.getPermutation().front() == 0;
}

/// Replaces `op` (a matmul or batch matmul) by one with `maps` and
/// `inputs`, its discardable attributes (remat's marks) carried over.
template <typename OpTy>
void replaceContraction(OpTy op, ArrayRef<AffineMap> maps, ValueRange inputs,
                        PatternRewriter &rewriter) {
  SmallVector<NamedAttribute> attributes =
      llvm::to_vector(op->getDiscardableAttrs());
  attributes.push_back(rewriter.getNamedAttr(
      "indexing_maps", rewriter.getAffineMapArrayAttr(maps)));
  rewriter.setInsertionPoint(op);
  auto replacement = OpTy::create(rewriter, op.getLoc(), op->getResultTypes(),
                                  inputs, op.getDpsInits(), attributes);
  rewriter.replaceOp(op, replacement->getResults());
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
      if (!transpose || !transpose.hasPureTensorSemantics() ||
          !canFoldInto(op, transpose))
        continue;
      maps[index] = foldIntoMap(maps[index], transpose);
      input = transpose.getInput();
      folded = true;
    }
    if (!folded)
      return failure();
    replaceContraction(op, maps, inputs, rewriter);
    return success();
  }
};

/// Returns true if every use of `value` is an input of a (batch) matmul on
/// tensors that FoldTransposeIntoContraction would let read `transpose`'s
/// input instead.
bool isReadByContractionsOnly(Value value, linalg::TransposeOp transpose) {
  return !value.use_empty() &&
         llvm::all_of(value.getUses(), [&](OpOperand &use) {
           auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
           return op && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
                  op.hasPureTensorSemantics() && op.isDpsInput(&use) &&
                  canFoldInto(op, transpose);
         });
}

/// Rewrites `op` (a matmul or batch matmul) to read `to` where it read
/// `from`, through maps permuted by `transpose`.
template <typename OpTy>
void rewriteToReadThrough(OpTy op, Value from, Value to,
                          linalg::TransposeOp transpose,
                          PatternRewriter &rewriter) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> inputs = op.getDpsInputs();
  for (auto [index, input] : llvm::enumerate(inputs)) {
    if (input != from)
      continue;
    maps[index] = foldIntoMap(maps[index], transpose);
    input = to;
  }
  replaceContraction(op, maps, inputs, rewriter);
}

/// A recomputed matmul reads its inputs through a barrier: when a barrier
/// passes a transpose to contractions only, it passes the transpose's input
/// instead and they read it with permuted maps, as the forward matmul they
/// recompute does after FoldTransposeIntoContraction. Original and clone then
/// make the same BLAS call (a transposed operand is rounded differently
/// from a row-major copy of it), and the transposed copy is not kept alive
/// for the backward.
struct FoldTransposeThroughBarrier : OpRewritePattern<remat::BarrierOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(remat::BarrierOp barrier,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> inputs(barrier.getInputs());
    SmallVector<std::pair<unsigned, linalg::TransposeOp>> folded;
    for (auto [index, input] : llvm::enumerate(inputs)) {
      auto transpose = input.getDefiningOp<linalg::TransposeOp>();
      if (!transpose || !transpose.hasPureTensorSemantics() ||
          !isReadByContractionsOnly(barrier.getResult(index), transpose))
        continue;
      input = transpose.getInput();
      folded.emplace_back(index, transpose);
    }
    if (folded.empty())
      return failure();
    auto replacement =
        remat::BarrierOp::create(rewriter, barrier.getLoc(), inputs);
    replacement->setDiscardableAttrs(barrier->getDiscardableAttrDictionary());
    for (auto [index, transpose] : folded) {
      Value from = barrier.getResult(index);
      Value to = replacement.getResult(index);
      SetVector<Operation *> users(llvm::from_range, from.getUsers());
      for (Operation *user : users) {
        if (auto matmul = dyn_cast<linalg::MatmulOp>(user))
          rewriteToReadThrough(matmul, from, to, transpose, rewriter);
        else
          rewriteToReadThrough(cast<linalg::BatchMatmulOp>(user), from, to,
                               transpose, rewriter);
      }
    }
    for (auto [from, to] :
         llvm::zip(barrier.getResults(), replacement.getResults()))
      if (!from.use_empty())
        rewriter.replaceAllUsesWith(from, to);
    rewriter.eraseOp(barrier);
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
               FoldTransposeIntoContraction<linalg::BatchMatmulOp>,
               FoldTransposeThroughBarrier>(patterns.getContext());
}
