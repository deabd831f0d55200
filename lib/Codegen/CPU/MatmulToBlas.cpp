//===- MatmulToBlas.cpp - linalg matmuls as BLAS calls --------------------===//
//
// This file implements the CPU's matmul calls and -remat-matmul-to-blas:
// f32 matmuls on buffers become calls into the runtime's BLAS glue, which
// calls cblas_sgemm; matmuls of bf16 or f16 inputs into an f32 result
// (autocast's) call its 2-byte entry points, which convert the inputs to f32
// first; f64 matmuls (a float64 step's) call its f64 entry points, loops
// in the order of k whatever the operands' layout.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/LibraryCalls.h"
#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATMATMULTOBLASPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// A BLAS matmul (isBlasMatmul) to a call of the CPU runtime's
/// `remat_matmul_<type>` / `remat_batch_matmul_<type>`.
struct MatmulToBlas : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!remat::isBlasMatmul(op))
      return rewriter.notifyMatchFailure(op, "not a matmul the BLAS computes");
    remat::replaceMatmulWithCall(rewriter, op, "remat_");
    return success();
  }
};

struct RematMatmulToBlasPass
    : remat::impl::RematMatmulToBlasPassBase<RematMatmulToBlasPass> {
  using RematMatmulToBlasPassBase::RematMatmulToBlasPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    remat::populateMatmulToBlasPatterns(patterns);
    numMatmuls +=
        remat::applyLibraryCallPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void remat::populateMatmulToBlasPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulToBlas>(patterns.getContext());
}
