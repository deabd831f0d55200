//===- Transpose.h - 16 x 16 float transposes in AVX-512 registers -*- C++
//-*-===//
//
// What the runtime's packing loops share: loading 16 elements widened to
// float32, and transposing 16 such vectors in registers. The convolution
// kernels transpose im2col blocks with it (RematRuntime.cpp), the native
// GEMM the panels of an operand contiguous along k (Sgemm.cpp). Only on
// hosts with AVX-512F.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_TRANSPOSE_H
#define REMAT_RUNTIME_TRANSPOSE_H

#include "HalfFloat.h"

#include <immintrin.h>

#include <type_traits>

namespace remat::runtime {

/// The 16 elements at `from`, widened by Format.
template <typename Format>
__attribute__((target("avx512f"))) inline __m512
load16(const typename Format::Element *from) {
  if constexpr (std::is_same_v<Format, Float32Format>) {
    return _mm512_loadu_ps(from);
  } else {
    alignas(64) float widened[16];
    for (int q = 0; q < 16; ++q)
      widened[q] = Format::load(from[q]);
    return _mm512_load_ps(widened);
  }
}

/// The 64-bit halves of each 128-bit quarter of a and b, interleaved.
__attribute__((target("avx512f"))) inline __m512 unpackLow64(__m512 a,
                                                             __m512 b) {
  return _mm512_castpd_ps(
      _mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
__attribute__((target("avx512f"))) inline __m512 unpackHigh64(__m512 a,
                                                              __m512 b) {
  return _mm512_castpd_ps(
      _mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

/// Transposes the 16 x 16 floats of `r` in place: r[i][j] becomes r[j][i].
/// Pairs of rows are interleaved by 32-bit, then 64-bit elements, then
/// their 128-bit quarters exchanged twice.
__attribute__((target("avx512f"))) inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int q = 0; q < 16; q += 2) {
    t[q] = _mm512_unpacklo_ps(r[q], r[q + 1]);
    t[q + 1] = _mm512_unpackhi_ps(r[q], r[q + 1]);
  }
  for (int q = 0; q < 16; q += 4) {
    r[q] = unpackLow64(t[q], t[q + 2]);
    r[q + 1] = unpackHigh64(t[q], t[q + 2]);
    r[q + 2] = unpackLow64(t[q + 1], t[q + 3]);
    r[q + 3] = unpackHigh64(t[q + 1], t[q + 3]);
  }
  for (int q = 0; q < 16; q += 8)
    for (int p = 0; p < 4; ++p) {
      t[q + p] = _mm512_shuffle_f32x4(r[q + p], r[q + p + 4], 0x88);
      t[q + p + 4] = _mm512_shuffle_f32x4(r[q + p], r[q + p + 4], 0xdd);
    }
  for (int p = 0; p < 8; ++p) {
    r[p] = _mm512_shuffle_f32x4(t[p], t[p + 8], 0x88);
    r[p + 8] = _mm512_shuffle_f32x4(t[p], t[p + 8], 0xdd);
  }
}

} // namespace remat::runtime

#endif // REMAT_RUNTIME_TRANSPOSE_H
