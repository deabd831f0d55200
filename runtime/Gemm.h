//===- Gemm.h - How a BLAS reads a strided matrix operand -------*- C++ -*-===//
//
// The one rule by which remat's CPU runtime (cblas_sgemm) and CUDA runtime
// (cuBLAS) pass a strided memref to a GEMM: as it is or transposed.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_GEMM_H
#define REMAT_RUNTIME_GEMM_H

#include <algorithm>
#include <cstdint>
#include <optional>

namespace remat::runtime {

/// A rows x cols operand as a row-major GEMM reads it: as it is, or as the
/// transpose of a row-major matrix (a transposed view), with the leading
/// dimension of what is stored.
struct GemmLayout {
  bool transposed;
  int64_t leading;
};

/// How a GEMM reads a rows x cols operand with strides (rowStride,
/// colStride): as it is when its rows are contiguous, transposed when its
/// columns are, and not at all otherwise (a broadcast, say). A dimension of
/// 1 is never stepped over, so its stride does not matter.
inline std::optional<GemmLayout> getGemmLayout(int64_t rows, int64_t cols,
                                               int64_t rowStride,
                                               int64_t colStride) {
  if ((cols == 1 || colStride == 1) &&
      (rows == 1 || rowStride >= std::max<int64_t>(1, cols)))
    return GemmLayout{false,
                      rows == 1 ? std::max<int64_t>(1, cols) : rowStride};
  if ((rows == 1 || rowStride == 1) &&
      (cols == 1 || colStride >= std::max<int64_t>(1, rows)))
    return GemmLayout{true, cols == 1 ? std::max<int64_t>(1, rows) : colStride};
  return std::nullopt;
}

} // namespace remat::runtime

#endif // REMAT_RUNTIME_GEMM_H
