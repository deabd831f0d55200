//===- MatmulToCublas.cpp - linalg matmuls as cuBLAS calls ----------------===//
//
// This file implements the CUDA target's matmul calls and
// -remat-matmul-to-cublas: f32 matmuls on device buffers become calls into
// the CUDA runtime's cuBLAS glue (cublasSgemm), and matmuls of bf16 or f16
// inputs into an f32 result (autocast's) calls of its 2-byte entry points
// (cublasGemmEx with f32 compute).
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/LibraryCalls.h"
#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

namespace remat {
#define GEN_PASS_DEF_REMATMATMULTOCUBLASPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// Returns true if every operand's innermost stride is statically 1, the
/// layouts cuBLAS takes (its leading dimension is the row stride; a
/// transposed input is a view of such a buffer with the strides swapped).
static bool hasUnitInnermostStrides(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto memref = cast<MemRefType>(type);
    SmallVector<int64_t> strides;
    int64_t offset;
    return succeeded(memref.getStridesAndOffset(strides, offset)) &&
           !strides.empty() && strides.back() == 1;
  });
}

namespace {

/// A BLAS matmul (isBlasMatmul) whose operands cuBLAS takes to a call of
/// the CUDA runtime's `remat_cuda_matmul_<type>` /
/// `remat_cuda_batch_matmul_<type>`. cuBLAS has no fallback loop nest for
/// other layouts: they stay linalg ops, which become GPU kernels. The CUDA
/// runtime has no f64 entry points (-remat-lower-cuda refuses float64
/// steps).
struct MatmulToCublas : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!remat::isBlasMatmul(op) || !hasUnitInnermostStrides(op) ||
        getElementTypeOrSelf(op->getOperand(2).getType()).isF64())
      return rewriter.notifyMatchFailure(op, "not a matmul cuBLAS computes");
    remat::replaceMatmulWithCall(rewriter, op, "remat_cuda_");
    return success();
  }
};

struct RematMatmulToCublasPass
    : remat::impl::RematMatmulToCublasPassBase<RematMatmulToCublasPass> {
  using RematMatmulToCublasPassBase::RematMatmulToCublasPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    remat::populateMatmulToCublasPatterns(patterns);
    numMatmuls +=
        remat::applyLibraryCallPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void remat::populateMatmulToCublasPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulToCublas>(patterns.getContext());
}
