//===- WidenSums.cpp - Float32 sums accumulated in float64 ----------------===//
//
// This file implements -remat-widen-sums: a linalg sum of float32 values on
// buffers accumulates in a float64 buffer of the result's shape, which is
// rounded to float32 once and added to the original init.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/MathExtras.h"

namespace remat {
#define GEN_PASS_DEF_REMATWIDENSUMSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// Returns true if `op` is a float32 sum on static buffers this pass can
/// widen: one init, every operand read through a projected permutation (no
/// windows: those are the runtime's convolution kernels'), no input that is
/// the init, and a body whose only use of the accumulator is an `arith.addf`
/// that it yields.
static bool isWidenableSum(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || !op.hasOnlyProjectedPermutations() ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()) ||
      llvm::is_contained(op.getDpsInputs(), op.getDpsInits().front()) ||
      !getElementTypeOrSelf(op.getDpsInits().front()).isF32())
    return false;
  BlockArgument acc = op.getRegionOutputArgs().front();
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  return add && acc.hasOneUse() && (add.getLhs() == acc || add.getRhs() == acc);
}

namespace {

/// Widens one sum over more than `minElements` elements.
struct WidenSum : OpInterfaceRewritePattern<linalg::LinalgOp> {
  WidenSum(MLIRContext *context, int64_t minElements)
      : OpInterfaceRewritePattern(context), minElements(minElements) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<linalg::GenericOp, linalg::ReduceOp>(op.getOperation()) ||
        !isWidenableSum(op))
      return rewriter.notifyMatchFailure(op, "not a float32 sum");
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t elements = 1;
    for (unsigned d : dims)
      if (llvm::MulOverflow(elements, ranges[d], elements))
        return rewriter.notifyMatchFailure(op, "more elements than int64_t");
    if (elements <= minElements)
      return rewriter.notifyMatchFailure(op, "a short sum");

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

    Location loc = generic.getLoc();
    Value init = generic.getDpsInits().front();
    auto initType = cast<MemRefType>(init.getType());
    Type wide = rewriter.getF64Type();
    // The float64 sums start at -0.0, the exact identity of addf.
    Value sums = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(initType.getShape(), wide));
    Value zero = arith::ConstantOp::create(rewriter, loc, wide,
                                           rewriter.getFloatAttr(wide, -0.0));
    linalg::FillOp::create(rewriter, loc, zero, sums);

    // The same loops and body, the accumulator and its addition in float64.
    auto widened = linalg::GenericOp::create(
        rewriter, loc, TypeRange{}, generic.getDpsInputs(), ValueRange{sums},
        generic.getIndexingMapsArray(), generic.getIteratorTypesArray());
    rewriter.inlineRegionBefore(generic.getRegion(), widened.getRegion(),
                                widened.getRegion().begin());
    BlockArgument acc = widened.getRegionOutputArgs().front();
    acc.setType(wide);
    auto add = cast<arith::AddFOp>(
        cast<linalg::YieldOp>(widened.getBlock()->getTerminator())
            .getValues()
            .front()
            .getDefiningOp());
    Value term = add.getLhs() == acc ? add.getRhs() : add.getLhs();
    rewriter.setInsertionPoint(add);
    Value extended = arith::ExtFOp::create(rewriter, add.getLoc(), wide, term);
    rewriter.replaceOpWithNewOp<arith::AddFOp>(add, extended, acc,
                                               add.getFastmathAttr());

    // init += the float64 sums, rounded once.
    rewriter.setInsertionPointAfter(widened);
    unsigned rank = initType.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    linalg::GenericOp::create(
        rewriter, loc, TypeRange{}, ValueRange{sums}, ValueRange{init},
        ArrayRef<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value sum = arith::AddFOp::create(
              b, loc, args[0], arith::ExtFOp::create(b, loc, wide, args[1]));
          linalg::YieldOp::create(
              b, loc,
              arith::TruncFOp::create(b, loc, initType.getElementType(), sum)
                  .getResult());
        });
    memref::DeallocOp::create(rewriter, loc, sums);
    rewriter.eraseOp(generic);
    return success();
  }

  int64_t minElements;
};

struct RematWidenSumsPass
    : remat::impl::RematWidenSumsPassBase<RematWidenSumsPass> {
  using RematWidenSumsPassBase::RematWidenSumsPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WidenSum>(&getContext(), minElements);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
