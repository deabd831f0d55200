//===- Sgemm.h - remat's own f32 GEMM for AVX-512 hosts ---------*- C++ -*-===//
//
// A packed GEMM in the manner of BLIS and IREE's CPU microkernels: the
// operands are copied into panels an 8 x 32 register tile reads in order,
// 2-byte operands (HalfFloat.h) widened to float32 as they are copied.
// k is cut into getSgemmBlockDepth(k)-step blocks, and each element of C
// gets, block by block in order, one chain of fused multiply-adds from 0
// over the block's steps, added to C. That depends on nothing but the
// operands and k, so a product cut into blocks of rows or columns (by a
// caller or its threads) gives every element bit for bit what one call
// gives it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_SGEMM_H
#define REMAT_RUNTIME_SGEMM_H

#include "GemmOrder.h"
#include "HalfFloat.h"

#include <cstdint>

namespace remat::runtime {

/// Whether this host runs the native kernel (AVX-512F) and the environment
/// does not ask for BLAS instead (REMAT_GEMM=blas).
bool hasNativeSgemm();

/// C += A * B, A m x k and B k x n with any strides (element (i, l) of A at
/// a[i * aRowStride + l * aColStride]), C m x n with unit column stride.
/// A and B hold float32, or with Format a 2-byte float format (defined in
/// Sgemm.cpp for Float32Format, BFloat16Format and Float16Format) the
/// 2-byte floats whose float32 values the product multiplies: the same
/// bits as the product of their float32 copies. Only where
/// hasNativeSgemm().
template <typename Format = Float32Format>
void nativeSgemm(int64_t m, int64_t n, int64_t k,
                 const typename Format::Element *a, int64_t aRowStride,
                 int64_t aColStride, const typename Format::Element *b,
                 int64_t bRowStride, int64_t bColStride, float *c,
                 int64_t cRowStride);

/// The columns of one panel of a packed B: B's columns [32p, 32p + 32)
/// over all of k, row by row; and the rows of one panel of a packed A: A's
/// rows [8p, 8p + 8) over all of k, column by column.
constexpr int64_t kPanelColumns = 32;
constexpr int64_t kPanelRows = 8;

/// Floats an m x k matrix A takes packed (packSgemmA; the last panel
/// padded).
inline int64_t getPackedAFloats(int64_t m, int64_t k) {
  return (m + kPanelRows - 1) / kPanelRows * kPanelRows * k;
}

/// Packs a strided m x k matrix A (of Format's elements) into panels for
/// nativeSgemmPrepacked: an operand many products share (a convolution's
/// filter) is packed once.
template <typename Format = Float32Format>
void packSgemmA(int64_t m, int64_t k, const typename Format::Element *a,
                int64_t rowStride, int64_t colStride, float *aPacked);

/// Floats a k x n matrix B takes packed in panels (the last one padded).
inline int64_t getPackedFloats(int64_t k, int64_t n) {
  return (n + kPanelColumns - 1) / kPanelColumns * kPanelColumns * k;
}

/// Where element (l, j) of a packed k x n matrix B lies.
inline int64_t getPackedIndex(int64_t k, int64_t l, int64_t j) {
  return j / kPanelColumns * kPanelColumns * k + l * kPanelColumns +
         j % kPanelColumns;
}

/// nativeSgemm with B packed already (getPackedIndex; padding columns are
/// read and their products dropped), for callers that build B in place:
/// the im2col tiles of a convolution.
template <typename Format = Float32Format>
void nativeSgemmPacked(int64_t m, int64_t n, int64_t k,
                       const typename Format::Element *a, int64_t aRowStride,
                       int64_t aColStride, const float *bPacked, float *c,
                       int64_t cRowStride);

/// nativeSgemm with both operands packed already: A by packSgemmA, B as
/// nativeSgemmPacked reads it. Rows [8p, m) of A start at aPacked +
/// 8p * k, so a caller may cut A's rows at multiples of 8.
void nativeSgemmPrepacked(int64_t m, int64_t n, int64_t k, const float *aPacked,
                          const float *bPacked, float *c, int64_t cRowStride);

} // namespace remat::runtime

#endif // REMAT_RUNTIME_SGEMM_H
