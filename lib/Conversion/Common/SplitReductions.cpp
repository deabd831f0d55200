//===- SplitReductions.cpp - Long sums as sums of partial sums ------------===//
//
// This file implements -remat-split-reductions: a linalg sum on buffers over
// many elements becomes a sum over blocks into a buffer of partial sums, then
// a sum of the partial sums (cascade summation), so that rounding error grows
// with the block sizes, not with the number of elements summed.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/MathExtras.h"

namespace remat {
#define GEN_PASS_DEF_REMATSPLITREDUCTIONSPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// Returns true if `op` is a floating-point sum on static buffers that this
/// pass can split: one init accumulated into by `arith.addf`, every operand
/// read through a projected permutation (no windows: those are the runtime's
/// convolution kernels'), no input that is the init, and a body that reads
/// no loop index.
static bool isSplittableSum(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || !op.hasOnlyProjectedPermutations() ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()) ||
      llvm::is_contained(op.getDpsInputs(), op.getDpsInits().front()))
    return false;
  if (!isa<FloatType>(getElementTypeOrSelf(op.getDpsInits().front())))
    return false;
  Block *body = op.getBlock();
  if (!body->getOps<linalg::IndexOp>().empty())
    return false;
  BlockArgument acc = op.getRegionOutputArgs().front();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  return add && acc.hasOneUse() && (add.getLhs() == acc || add.getRhs() == acc);
}

namespace {

/// Where a sum is split: the reduction loops from the one at `position` in,
/// that loop itself viewed as (extent / inner, inner) first if `inner` is
/// less than its extent, are summed into one partial sum per value of the
/// loops before.
struct Split {
  unsigned position; // index into the op's reduction dims, in loop order
  int64_t inner;     // the part of that loop summed into each partial sum
  int64_t blockSize; // elements summed into each partial sum
};

} // namespace

/// Returns the split of the reduction loops `extents` (in loop order, all
/// positive, `total` elements) into blocks of at most `maxBlock` elements
/// with the fewest blocks (the partial sums are a buffer), a split between
/// loops winning ties; a block size of 1 if there is none. O(maxBlock) per
/// loop.
static Split chooseSplit(ArrayRef<int64_t> extents, int64_t total,
                         int64_t maxBlock) {
  Split best{0, 1, 1};
  std::pair<int64_t, bool> bestCost{total, true};
  int64_t suffix = total;
  for (auto [position, extent] : llvm::enumerate(extents)) {
    suffix /= extent;
    for (int64_t inner = std::min(extent, maxBlock / suffix); inner >= 1;
         --inner) {
      int64_t block = inner * suffix;
      if (extent % inner != 0)
        continue;
      std::pair<int64_t, bool> cost{total / block,
                                    inner != extent && inner != 1};
      if (cost >= bestCost)
        continue;
      bestCost = cost;
      // Summing none of this loop per block is summing all of the next.
      if (inner == 1 && position + 1 < extents.size())
        best = {static_cast<unsigned>(position + 1), extents[position + 1],
                block};
      else
        best = {static_cast<unsigned>(position), inner, block};
    }
  }
  return best;
}

namespace {

/// An input viewed with one dimension split in two.
struct SplitView {
  MemRefType type;
  SmallVector<ReassociationIndices> groups;
};

} // namespace

/// Returns, per input of `op`, the view with loop `dim` split into
/// (extent / inner, inner), or none where the input is not indexed by it;
/// failure if some view cannot be formed.
static FailureOr<SmallVector<std::optional<SplitView>>>
getSplitViews(linalg::LinalgOp op, unsigned dim, int64_t inner) {
  int64_t outer = op.getStaticLoopRanges()[dim] / inner;
  SmallVector<std::optional<SplitView>> views;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    std::optional<unsigned> position =
        op.getMatchingIndexingMap(operand).getResultPosition(
            getAffineDimExpr(dim, op->getContext()));
    if (!type || !position) {
      views.push_back(std::nullopt);
      continue;
    }
    SplitView view;
    SmallVector<int64_t> shape;
    for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
      ReassociationIndices group{static_cast<int64_t>(shape.size())};
      if (i == *position) {
        group.push_back(group.front() + 1);
        shape.append({outer, inner});
      } else {
        shape.push_back(type.getDimSize(i));
      }
      view.groups.push_back(group);
    }
    FailureOr<MemRefType> expanded =
        memref::ExpandShapeOp::computeExpandedType(type, shape, view.groups);
    if (failed(expanded))
      return failure();
    view.type = *expanded;
    views.push_back(std::move(view));
  }
  return views;
}

/// Splits loop `dim` of `op` (extent outer * inner) into two loops, outer
/// then inner, reading the inputs through `views` (getSplitViews). Returns
/// the new op.
static linalg::GenericOp splitLoop(RewriterBase &rewriter, linalg::GenericOp op,
                                   unsigned dim,
                                   ArrayRef<std::optional<SplitView>> views) {
  MLIRContext *context = op.getContext();
  unsigned numLoops = op.getNumLoops();
  SmallVector<Value> inputs;
  for (auto [operand, view] : llvm::zip(op.getDpsInputOperands(), views))
    inputs.push_back(
        view ? memref::ExpandShapeOp::create(rewriter, op.getLoc(), view->type,
                                             operand->get(), view->groups)
                   .getResult()
             : operand->get());
  // Loop d > dim moves to d + 1; dim becomes (dim, dim + 1).
  SmallVector<AffineMap> maps;
  for (AffineMap map : op.getIndexingMapsArray()) {
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      unsigned d = cast<AffineDimExpr>(expr).getPosition();
      results.push_back(getAffineDimExpr(d > dim ? d + 1 : d, context));
      if (d == dim)
        results.push_back(getAffineDimExpr(dim + 1, context));
    }
    maps.push_back(AffineMap::get(numLoops + 1, 0, results, context));
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + dim + 1, utils::IteratorType::reduction);
  auto split =
      linalg::GenericOp::create(rewriter, op.getLoc(), TypeRange{}, inputs,
                                op.getDpsInits(), maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), split.getRegion(),
                              split.getRegion().begin());
  rewriter.eraseOp(op);
  return split;
}

/// Sums the reduction loops of `op` before `dims[position]` into partial
/// sums (those loops become parallel and index a buffer of partial sums
/// that extends the init), then sums the partial sums into the init; the
/// partial sums' buffer is freed right after.
static void splitAt(RewriterBase &rewriter, linalg::GenericOp op,
                    ArrayRef<unsigned> dims, unsigned position) {
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  OpOperand &init = op.getDpsInitsMutable()[0];
  auto initType = cast<MemRefType>(init.get().getType());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();

  // Partial sums: the init's dimensions, then one per outer reduction loop.
  SmallVector<int64_t> shape(initType.getShape());
  SmallVector<AffineExpr> results(
      op.getMatchingIndexingMap(&init).getResults());
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> combined;
  for (unsigned d : dims.take_front(position)) {
    combined.push_back(shape.size());
    shape.push_back(ranges[d]);
    results.push_back(getAffineDimExpr(d, context));
    iterators[d] = utils::IteratorType::parallel;
  }
  Type elementType = initType.getElementType();
  Value partials = memref::AllocOp::create(rewriter, loc,
                                           MemRefType::get(shape, elementType));
  // -0.0 is the identity of addf: x + -0.0 is x, signed zeros included.
  Value zero = arith::ConstantOp::create(
      rewriter, loc, elementType, rewriter.getFloatAttr(elementType, -0.0));
  linalg::FillOp::create(rewriter, loc, zero, partials);

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(op.getNumLoops(), 0, results, context);
  auto partial =
      linalg::GenericOp::create(rewriter, loc, TypeRange{}, op.getDpsInputs(),
                                ValueRange{partials}, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().begin());
  linalg::ReduceOp::create(
      rewriter, loc, ValueRange{partials}, ValueRange{init.get()}, combined,
      [](OpBuilder &b, Location loc, ValueRange args) {
        Value added = arith::AddFOp::create(b, loc, args[0], args[1]);
        linalg::YieldOp::create(b, loc, added);
      });
  memref::DeallocOp::create(rewriter, loc, partials);
  rewriter.eraseOp(op);
}

namespace {

/// Splits one sum over more than `blockSize` elements into sums over blocks
/// of at most `blockSize`; a sum of the partial sums over more is split
/// again.
struct SplitSum : OpInterfaceRewritePattern<linalg::LinalgOp> {
  SplitSum(MLIRContext *context, int64_t blockSize)
      : OpInterfaceRewritePattern(context), blockSize(blockSize) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<linalg::GenericOp, linalg::ReduceOp>(op.getOperation()) ||
        !isSplittableSum(op))
      return rewriter.notifyMatchFailure(op, "not a splittable sum");
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<int64_t> extents;
    int64_t total = 1;
    for (unsigned d : dims) {
      extents.push_back(ranges[d]);
      if (llvm::MulOverflow(total, ranges[d], total))
        return rewriter.notifyMatchFailure(op, "more elements than int64_t");
    }
    if (total <= blockSize)
      return rewriter.notifyMatchFailure(op, "a short sum");
    Split split = chooseSplit(extents, total, blockSize);
    // Nothing to gain: one loop of prime extent, say.
    if (split.blockSize == 1)
      return rewriter.notifyMatchFailure(op, "no split shortens the chain");

    unsigned position = split.position;
    unsigned dim = dims[position];
    bool reshape = split.inner != extents[position];
    SmallVector<std::optional<SplitView>> views;
    if (reshape) {
      FailureOr<SmallVector<std::optional<SplitView>>> splitViews =
          getSplitViews(op, dim, split.inner);
      if (failed(splitViews))
        return rewriter.notifyMatchFailure(op, "cannot view a loop as two");
      views = std::move(*splitViews);
    }

    linalg::GenericOp generic;
    if (auto named = dyn_cast<linalg::ReduceOp>(op.getOperation())) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, named);
      if (failed(generalized))
        return rewriter.notifyMatchFailure(op, "cannot generalize");
      generic = *generalized;
    } else {
      generic = cast<linalg::GenericOp>(op.getOperation());
    }
    if (reshape) {
      generic = splitLoop(rewriter, generic, dim, views);
      // The loops after `dim` moved by one; the outer part of `dim` stays
      // with the partial sums' loops.
      for (unsigned &d : dims)
        if (d > dim)
          ++d;
      dims.insert(dims.begin() + position + 1, dim + 1);
      ++position;
    }
    splitAt(rewriter, generic, dims, position);
    return success();
  }

  int64_t blockSize;
};

struct RematSplitReductionsPass
    : remat::impl::RematSplitReductionsPassBase<RematSplitReductionsPass> {
  using RematSplitReductionsPassBase::RematSplitReductionsPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitSum>(&getContext(), blockSize);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
