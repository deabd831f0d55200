//===- Sgemm.cpp - remat's own f32 GEMM for AVX-512 hosts -----------------===//
//
// The loops are Goto's: columns of C in blocks of kBlockN, k in blocks of
// getSgemmBlockDepth(k) (B's block packed once, kept in the last-level
// cache), rows in
// blocks of kBlockM (A's block packed, kept in L2), then kTileN-column
// panels of B (in L1) against kTileM-row panels of A. The register tile
// sums its products over one k block from 0, in k order, and adds the sum
// to C: each element of C gets the same sums in the same order whatever
// the blocking of rows and columns, so results do not depend on how a
// caller cuts a product's rows or columns. (A chain of fused multiply-adds
// from C itself would carry its error over all of k: ResNet-18's filter
// gradients drifted past 1e-4 of PyTorch's that way.)
//
//===----------------------------------------------------------------------===//

#include "Sgemm.h"
#include "Transpose.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

using namespace remat::runtime;

namespace {

/// The register tile: kTileM rows of C, kTileN columns (two 16-float
/// vectors), 16 accumulators.
constexpr int64_t kTileM = kPanelRows;
constexpr int64_t kTileN = kPanelColumns;
/// Cache blocks. A k block (at most kSgemmBlockK) x kTileN panel of B is at
/// most 32 KiB (L1), a kBlockM x k block of A 256 KiB (L2), a k block x
/// kBlockN block of B 2 MiB.
constexpr int64_t kBlockM = 256;
constexpr int64_t kBlockN = 2048;

/// A 64-byte aligned float buffer that grows to the largest size asked of
/// it; one per thread for each operand's packed block.
class PackBuffer {
public:
  float *get(int64_t floats) {
    if (floats > capacity) {
      size_t bytes = (size_t(floats) * sizeof(float) + 63) / 64 * 64;
      data.reset(static_cast<float *>(std::aligned_alloc(64, bytes)));
      if (!data)
        std::abort();
      capacity = floats;
    }
    return data.get();
  }

private:
  struct Free {
    void operator()(float *ptr) const { std::free(ptr); }
  };
  std::unique_ptr<float, Free> data;
  int64_t capacity = 0;
};

/// packPanels' copy of one whole float32 panel whose columns are contiguous:
/// row l of the panel is Width floats at m + l * lStride.
template <int64_t Width>
__attribute__((target("avx512f"))) void
copyPanel(int64_t depth, const float *m, int64_t lStride, float *panel) {
  static_assert(Width == 8 || Width % 16 == 0, "whole vectors");
  for (int64_t l = 0; l < depth; ++l, panel += Width) {
    const float *from = m + l * lStride;
    if constexpr (Width == 8) {
      _mm256_storeu_ps(panel, _mm256_loadu_ps(from));
    } else {
      for (int64_t j = 0; j < Width; j += 16)
        _mm512_storeu_ps(panel + j, _mm512_loadu_ps(from + j));
    }
  }
}

/// packPanels' transposing copy of one whole panel whose k-range is
/// contiguous: column j of the panel is depth elements at m + j * jStride,
/// widened by Format. Copies 16 steps of k at a time through transpose16
/// and returns how many it copied (the rest, under 16, are the caller's).
template <int64_t Width, typename Format>
__attribute__((target("avx512f"))) int64_t
transposePanel(int64_t depth, const typename Format::Element *m,
               int64_t jStride, float *panel) {
  static_assert(Width == 8 || Width % 16 == 0, "whole vectors");
  constexpr int kRows = Width < 16 ? Width : 16;
  int64_t l0 = 0;
  for (; l0 + 16 <= depth; l0 += 16) {
    for (int64_t j0 = 0; j0 < Width; j0 += 16) {
      __m512 v[16];
      for (int r = 0; r < 16; ++r)
        v[r] = r < kRows ? load16<Format>(m + (j0 + r) * jStride + l0)
                         : _mm512_setzero_ps();
      transpose16(v);
      for (int l = 0; l < 16; ++l) {
        float *to = panel + (l0 + l) * Width + j0;
        if constexpr (Width == 8)
          _mm256_storeu_ps(to, _mm512_castps512_ps256(v[l]));
        else
          _mm512_storeu_ps(to, v[l]);
      }
    }
  }
  return l0;
}

/// Copies k-range [0, depth) x columns [0, cols) of a matrix M, element
/// (l, j) at m[l * lStride + j * jStride], into Width-column panels: panel p
/// holds, for each l, M(l, p * Width + j) for j in [0, Width), with zeros
/// past the last column, each element widened to float32 by Format. B's
/// panels are B's; A's are A transposed's. Whole panels are copied a
/// vector at a time (transposePanel, and copyPanel for float32): packing,
/// one float at a time, was a sixth of GPT-2 small's matmul time.
template <int64_t Width, typename Format>
void packPanels(int64_t depth, int64_t cols, const typename Format::Element *m,
                int64_t lStride, int64_t jStride, float *out) {
  for (int64_t col0 = 0; col0 < cols; col0 += Width) {
    int64_t count = std::min(Width, cols - col0);
    float *panel = out + col0 * depth;
    if (count < Width)
      std::memset(panel, 0, sizeof(float) * Width * depth);
    // Read along whichever dimension is contiguous.
    if (jStride == 1 || lStride != 1) {
      if constexpr (std::is_same_v<Format, Float32Format>) {
        if (count == Width && jStride == 1) {
          copyPanel<Width>(depth, m + col0, lStride, panel);
          continue;
        }
      }
      for (int64_t l = 0; l < depth; ++l) {
        const typename Format::Element *from = m + l * lStride + col0 * jStride;
        for (int64_t j = 0; j < count; ++j)
          panel[l * Width + j] = Format::load(from[j * jStride]);
      }
      continue;
    }
    int64_t done = count == Width
                       ? transposePanel<Width, Format>(
                             depth, m + col0 * jStride, jStride, panel)
                       : 0;
    for (int64_t j = 0; j < count; ++j) {
      const typename Format::Element *from = m + (col0 + j) * jStride;
      for (int64_t l = done; l < depth; ++l)
        panel[l * Width + j] = Format::load(from[l]);
    }
  }
}

/// Rows [0, rows) x k-range [0, depth) of A in kTileM-row panels.
template <typename Format>
void packA(int64_t rows, int64_t depth, const typename Format::Element *a,
           int64_t rowStride, int64_t colStride, float *out) {
  packPanels<kTileM, Format>(depth, rows, a, colStride, rowStride, out);
}

/// k-range [0, depth) x columns [0, cols) of B in kTileN-column panels.
template <typename Format>
void packB(int64_t depth, int64_t cols, const typename Format::Element *b,
           int64_t rowStride, int64_t colStride, float *out) {
  packPanels<kTileN, Format>(depth, cols, b, rowStride, colStride, out);
}

/// C (a full kTileM x kTileN tile, row stride ldc) += the panels' product
/// over `depth` k steps: one fused multiply-add per step and element into
/// a sum that starts from 0, added to C at the end.
__attribute__((target("avx512f"))) void multiplyTile(int64_t depth,
                                                     const float *aPanel,
                                                     const float *bPanel,
                                                     float *c, int64_t ldc) {
  __m512 acc[kTileM][2];
#pragma clang loop unroll(full)
  for (int64_t r = 0; r < kTileM; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t l = 0; l < depth; ++l) {
    __m512 b0 = _mm512_loadu_ps(bPanel);
    __m512 b1 = _mm512_loadu_ps(bPanel + 16);
#pragma clang loop unroll(full)
    for (int64_t r = 0; r < kTileM; ++r) {
      __m512 av = _mm512_set1_ps(aPanel[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
    aPanel += kTileM;
    bPanel += kTileN;
  }
#pragma clang loop unroll(full)
  for (int64_t r = 0; r < kTileM; ++r) {
    float *row = c + r * ldc;
    _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc[r][0]));
    _mm512_storeu_ps(row + 16,
                     _mm512_add_ps(_mm512_loadu_ps(row + 16), acc[r][1]));
  }
}

/// multiplyTile on the rows x cols corner of a tile at C: through a full
/// tile on the stack, which holds C's elements where C has them.
void multiplyEdge(int64_t rows, int64_t cols, int64_t depth,
                  const float *aPanel, const float *bPanel, float *c,
                  int64_t ldc) {
  alignas(64) float tile[kTileM * kTileN] = {};
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(tile + r * kTileN, c + r * ldc, sizeof(float) * cols);
  multiplyTile(depth, aPanel, bPanel, tile, kTileN);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(c + r * ldc, tile + r * kTileN, sizeof(float) * cols);
}

bool detectNativeSgemm() {
  const char *choice = std::getenv("REMAT_GEMM");
  if (choice && std::strcmp(choice, "blas") == 0)
    return false;
  return __builtin_cpu_supports("avx512f");
}

} // namespace

bool remat::runtime::hasNativeSgemm() {
  static const bool native = detectNativeSgemm();
  return native;
}

namespace {

/// C += A * B over one k block of `depth` from packed panels: A's kTileM-row
/// panels at aPanels, `aStride` floats apart, and B's kTileN-column panels
/// at bPanels, `bStride` apart.
void multiplyPanels(int64_t m, int64_t n, int64_t depth, const float *aPanels,
                    int64_t aStride, const float *bPanels, int64_t bStride,
                    float *c, int64_t cRowStride) {
  for (int64_t j = 0; j < n; j += kTileN) {
    const float *bPanel = bPanels + j / kTileN * bStride;
    int64_t tileCols = std::min(kTileN, n - j);
    for (int64_t i = 0; i < m; i += kTileM) {
      const float *aPanel = aPanels + i / kTileM * aStride;
      float *tile = c + i * cRowStride + j;
      int64_t tileRows = std::min(kTileM, m - i);
      if (tileRows == kTileM && tileCols == kTileN)
        multiplyTile(depth, aPanel, bPanel, tile, cRowStride);
      else
        multiplyEdge(tileRows, tileCols, depth, aPanel, bPanel, tile,
                     cRowStride);
    }
  }
}

/// multiplyPanels with A strided: packed kBlockM rows at a time into
/// aPacked.
template <typename Format>
void multiplyBlock(int64_t m, int64_t n, int64_t depth,
                   const typename Format::Element *a, int64_t aRowStride,
                   int64_t aColStride, const float *bPanels, int64_t bStride,
                   float *c, int64_t cRowStride, float *aPacked) {
  for (int64_t row0 = 0; row0 < m; row0 += kBlockM) {
    int64_t rows = std::min(kBlockM, m - row0);
    packA<Format>(rows, depth, a + row0 * aRowStride, aRowStride, aColStride,
                  aPacked);
    multiplyPanels(rows, n, depth, aPacked, kTileM * depth, bPanels, bStride,
                   c + row0 * cRowStride, cRowStride);
  }
}

thread_local PackBuffer aBuffer, bBuffer;

float *getABuffer(int64_t m, int64_t k) {
  int64_t blockM = std::min(kBlockM, (m + kTileM - 1) / kTileM * kTileM);
  return aBuffer.get(blockM * getSgemmBlockDepth(k));
}

} // namespace

template <typename Format>
void remat::runtime::nativeSgemm(int64_t m, int64_t n, int64_t k,
                                 const typename Format::Element *a,
                                 int64_t aRowStride, int64_t aColStride,
                                 const typename Format::Element *b,
                                 int64_t bRowStride, int64_t bColStride,
                                 float *c, int64_t cRowStride) {
  if (m <= 0 || n <= 0 || k <= 0)
    return;
  int64_t blockK = getSgemmBlockDepth(k);
  int64_t blockN = std::min(kBlockN, (n + kTileN - 1) / kTileN * kTileN);
  float *aPacked = getABuffer(m, k);
  float *bPacked = bBuffer.get(blockK * blockN);
  for (int64_t col0 = 0; col0 < n; col0 += kBlockN) {
    int64_t cols = std::min(kBlockN, n - col0);
    for (int64_t l0 = 0; l0 < k; l0 += blockK) {
      int64_t depth = std::min(blockK, k - l0);
      packB<Format>(depth, cols, b + l0 * bRowStride + col0 * bColStride,
                    bRowStride, bColStride, bPacked);
      multiplyBlock<Format>(m, cols, depth, a + l0 * aColStride, aRowStride,
                            aColStride, bPacked, depth * kTileN, c + col0,
                            cRowStride, aPacked);
    }
  }
}

template <typename Format>
void remat::runtime::nativeSgemmPacked(int64_t m, int64_t n, int64_t k,
                                       const typename Format::Element *a,
                                       int64_t aRowStride, int64_t aColStride,
                                       const float *bPacked, float *c,
                                       int64_t cRowStride) {
  if (m <= 0 || n <= 0 || k <= 0)
    return;
  int64_t blockK = getSgemmBlockDepth(k);
  float *aPacked = getABuffer(m, k);
  for (int64_t l0 = 0; l0 < k; l0 += blockK)
    multiplyBlock<Format>(m, n, std::min(blockK, k - l0), a + l0 * aColStride,
                          aRowStride, aColStride, bPacked + l0 * kTileN,
                          k * kTileN, c, cRowStride, aPacked);
}

template <typename Format>
void remat::runtime::packSgemmA(int64_t m, int64_t k,
                                const typename Format::Element *a,
                                int64_t rowStride, int64_t colStride,
                                float *aPacked) {
  packA<Format>(m, k, a, rowStride, colStride, aPacked);
}

void remat::runtime::nativeSgemmPrepacked(int64_t m, int64_t n, int64_t k,
                                          const float *aPacked,
                                          const float *bPacked, float *c,
                                          int64_t cRowStride) {
  if (m <= 0 || n <= 0 || k <= 0)
    return;
  int64_t blockK = getSgemmBlockDepth(k);
  for (int64_t l0 = 0; l0 < k; l0 += blockK)
    for (int64_t row0 = 0; row0 < m; row0 += kBlockM)
      multiplyPanels(std::min(kBlockM, m - row0), n, std::min(blockK, k - l0),
                     aPacked + row0 * k + l0 * kTileM, kTileM * k,
                     bPacked + l0 * kTileN, k * kTileN, c + row0 * cRowStride,
                     cRowStride);
}

// The element formats of the runtime's GEMMs (HalfFloat.h).
#define REMAT_INSTANTIATE_SGEMM(Format)                                        \
  template void remat::runtime::nativeSgemm<Format>(                           \
      int64_t, int64_t, int64_t, const Format::Element *, int64_t, int64_t,    \
      const Format::Element *, int64_t, int64_t, float *, int64_t);            \
  template void remat::runtime::nativeSgemmPacked<Format>(                     \
      int64_t, int64_t, int64_t, const Format::Element *, int64_t, int64_t,    \
      const float *, float *, int64_t);                                        \
  template void remat::runtime::packSgemmA<Format>(                            \
      int64_t, int64_t, const Format::Element *, int64_t, int64_t, float *);
REMAT_INSTANTIATE_SGEMM(Float32Format)
REMAT_INSTANTIATE_SGEMM(BFloat16Format)
REMAT_INSTANTIATE_SGEMM(Float16Format)
#undef REMAT_INSTANTIATE_SGEMM
