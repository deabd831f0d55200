//===- GemmOrder.h - The order in which the CPU GEMM sums k -----*- C++ -*-===//
//
// The two rules that fix in which order remat's CPU runtime adds the terms
// of each element of a matmul's result: the native kernel's blocks of k
// (Sgemm.h) and the cut of a small result's long k into parts
// (RematRuntime.cpp). Header-only, so that the compiler's
// -remat-chunk-rows, which must keep a chunked product's sums in the
// unchunked order, reads the same rules the runtime follows.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_GEMMORDER_H
#define REMAT_RUNTIME_GEMMORDER_H

#include <cstdint>

namespace remat::runtime {

/// The most steps of k whose products one sum adds before C gets them.
constexpr int64_t kSgemmBlockK = 256;

/// The steps of k in each block but the last: k cut into as few blocks of
/// at most kSgemmBlockK as it takes, of near-equal depths (288 is 144 +
/// 144, not 256 + 32: a shallow block costs a pass over C for few
/// products).
inline int64_t getSgemmBlockDepth(int64_t k) {
  int64_t blocks = (k + kSgemmBlockK - 1) / kSgemmBlockK;
  return blocks <= 1 ? k : (k + blocks - 1) / blocks;
}

/// Matmuls of at least this many multiply-adds are cut into blocks.
constexpr int64_t kMinBlockedWork = int64_t(1) << 21;

/// Products whose result has at most this many rows and columns, and at
/// least kMinSplitDepth terms per element, are cut along k (a weight
/// gradient: [features x features] summed over the batch).
constexpr int64_t kMaxSplitExtent = 256;
constexpr int64_t kMinSplitDepth = 512;
/// The parts of such a product, each summing a contiguous range of k.
constexpr int64_t kSplitParts = 4;

/// Whether the runtime computes the m x n result of a product over k in
/// kSplitParts parts along k rather than in blocks of rows or columns.
inline bool isSplitAlongDepth(int64_t m, int64_t n, int64_t k) {
  return m * n * k >= kMinBlockedWork && m <= kMaxSplitExtent &&
         n <= kMaxSplitExtent && k >= kMinSplitDepth;
}

} // namespace remat::runtime

#endif // REMAT_RUNTIME_GEMMORDER_H
