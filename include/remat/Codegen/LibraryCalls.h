//===- LibraryCalls.h - What the runtime's libraries compute ---*- C++ -*-===//
//
// The matmuls and convolutions on buffers that the runtime's libraries
// compute (the CPU's BLAS and convolution kernels, cuBLAS), recognised once
// for both targets, and the calls both targets' patterns build.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CODEGEN_LIBRARYCALLS_H
#define REMAT_CODEGEN_LIBRARYCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <array>

namespace remat {

/// The private declaration of the runtime function `name` of type `type`
/// in the module around `op`, with its C interface (the runtime's entry
/// points take memref descriptors by pointer); `rewriter` declares it at
/// the module's end if it is missing.
mlir::func::FuncOp getOrDeclareRuntimeFunction(mlir::RewriterBase &rewriter,
                                               mlir::Operation *op,
                                               llvm::StringRef name,
                                               mlir::FunctionType type);

/// The suffix of the runtime's entry points for products of inputs of
/// `inputType` (f32, bf16, f16 or f64): "f32", "bf16", "f16" or "f64".
llvm::StringRef getRuntimeTypeSuffix(mlir::Type inputType);

/// Applies `patterns`, library-call patterns that each replace the linalg
/// op they match, once to each op nested in `root`, in the order of a
/// post-order walk and without folding (walkAndApplyPatterns), so that ops
/// the patterns create are left for the next patterns' pass. Returns how
/// many linalg ops they replaced.
unsigned applyLibraryCallPatterns(mlir::Operation *root,
                                  mlir::RewritePatternSet &&patterns);

//===----------------------------------------------------------------------===//
// Matmuls
//===----------------------------------------------------------------------===//

/// Returns true if `op` is a (batch) matmul on buffers that the runtime's
/// GEMMs compute: f32, bf16 or f16 inputs (both of one type) into an f32
/// result (autocast's), or f64 (a float64 step's; the CPU runtime's
/// only), each input read as it is or transposed.
bool isBlasMatmul(mlir::linalg::LinalgOp op);

/// Replaces `op`, a BLAS matmul (isBlasMatmul), with a call to the runtime's
/// `<prefix>matmul_<type>` or `<prefix>batch_matmul_<type>` (type f32, bf16,
/// f16 or f64: the inputs'), which computes C += A * B: each operand is cast to
/// a memref of dynamic sizes and strides, a transposed input passed as a
/// transposed view.
void replaceMatmulWithCall(mlir::RewriterBase &rewriter,
                           mlir::linalg::LinalgOp op, llvm::StringRef prefix);

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// The roles a loop dimension of a 2-D convolution plays. The image X is
/// indexed [N, G, C, H, W], the filter W [G, F, C, KH, KW] and the response
/// Y [N, G, F, OH, OW], with H = OH * strideH + KH * dilationH (and so for
/// W); Y = conv(X, W) sums over C, KH and KW, the filter gradient
/// W = conv(X, Y) over N, OH and OW. A role no loop dimension plays has
/// extent 1.
enum ConvolutionRole : unsigned {
  kN,
  kG,
  kF,
  kC,
  kOH,
  kOW,
  kKH,
  kKW,
  kNumRoles
};

/// A linalg op recognised as a 2-D convolution: which operand is the image,
/// the filter and the response, and which loop dimension plays each role.
struct Convolution {
  unsigned image, filter, response;
  /// The loop dimension of each role, or -1.
  std::array<int64_t, kNumRoles> dims;
  /// The result of the image's map that reads each spatial pair (0: H,
  /// 1: W), or -1 for a missing pair.
  std::array<int64_t, 2> imageSpatial;
  std::array<int64_t, 2> strides, dilations;
  /// True if the op writes the filter (a filter gradient), false if it
  /// writes the response (a forward convolution).
  bool writesFilter;
  /// The element type of the inputs: f32, bf16 or f16.
  mlir::Type inputType;
};

/// Recognises `op` as a 2-D (or 1-D) convolution from its indexing maps,
/// iterator types and body alone, so named convolutions
/// (`linalg.conv_2d_nchw_fchw`, `conv_2d_ngchw_gfchw`, depthwise ones) and
/// generics that compute the same sums (a filter gradient) are all found:
/// `out += a * b` on static buffers, all f32 or bf16 or f16 inputs (both of
/// one type, widened by `arith.extf` in the body) into an f32 output, the
/// image the input read through compound results `oh * s + kh * d`, and
/// each other loop dimension a batch, group, output or input channel by the
/// operands it indexes. Fails for anything else.
llvm::FailureOr<Convolution> matchConvolution(mlir::linalg::LinalgOp op);

} // namespace remat

#endif // REMAT_CODEGEN_LIBRARYCALLS_H
