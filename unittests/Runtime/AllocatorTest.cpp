//===- AllocatorTest.cpp - The CPU runtime's counting allocator -----------===//
//
// Checks that the allocator generated code calls counts what it hands out
// and ends the process with a message, never a null pointer, when a buffer
// cannot be had; and the generator seed that remat.rng_seed reads.
//
//===----------------------------------------------------------------------===//

#include "RematRuntime.h"

#include "gtest/gtest.h"

#include <cstdint>

using namespace remat::runtime;

namespace {

TEST(AllocatorTest, CountsAlignedBuffers) {
  resetAllocStats();
  AllocStats before = getAllocStats();
  void *ptr = _mlir_memref_to_llvm_aligned_alloc(128, 100);
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 128, 0u);
  EXPECT_TRUE(isLiveAllocation(ptr));
  AllocStats during = getAllocStats();
  EXPECT_EQ(during.liveBytes, before.liveBytes + 100);
  EXPECT_EQ(during.allocCount, 1);
  _mlir_memref_to_llvm_free(ptr);
  EXPECT_FALSE(isLiveAllocation(ptr));
  EXPECT_EQ(getAllocStats().liveBytes, before.liveBytes);
}

TEST(AllocatorTest, LargeBlocksAreReusedAndStillCounted) {
  // A step's arena, freed and allocated again by the next call: the same
  // block comes back (no fresh pages to fault in), and the counters see
  // two allocations and one live buffer at a time.
  resetAllocStats();
  int64_t live = getAllocStats().liveBytes;
  const size_t size = (size_t(1) << 20) + 100;
  void *first = _mlir_memref_to_llvm_alloc(size);
  static_cast<char *>(first)[size - 1] = 1;
  _mlir_memref_to_llvm_free(first);
  EXPECT_FALSE(isLiveAllocation(first));
  void *second = _mlir_memref_to_llvm_alloc(size);
  EXPECT_TRUE(isLiveAllocation(second));
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(second, first);
#endif
  // Another size is another block, and alignment is kept.
  void *other = _mlir_memref_to_llvm_alloc(size + 4096);
  EXPECT_NE(other, second);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(other) % 64, 0u);
  AllocStats stats = getAllocStats();
  EXPECT_EQ(stats.allocCount, 3);
  EXPECT_EQ(stats.peakBytes, live + int64_t(2 * size + 4096));
  _mlir_memref_to_llvm_free(second);
  _mlir_memref_to_llvm_free(other);
  EXPECT_EQ(getAllocStats().liveBytes, live);
}

TEST(AllocatorTest, ZeroBytesIsABuffer) {
  void *ptr = _mlir_memref_to_llvm_alloc(0);
  EXPECT_NE(ptr, nullptr);
  _mlir_memref_to_llvm_free(ptr);
}

TEST(AllocatorDeathTest, SizeThatWrapsExits) {
  EXPECT_EXIT(_mlir_memref_to_llvm_alloc(SIZE_MAX),
              testing::ExitedWithCode(kAllocationFailureExitCode),
              "remat runtime: error: cannot allocate 18446744073709551615 "
              "bytes \\(aligned to 64\\) for a buffer of the step: larger "
              "than any object can be");
  EXPECT_EXIT(_mlir_memref_to_llvm_aligned_alloc(64, SIZE_MAX - 62),
              testing::ExitedWithCode(kAllocationFailureExitCode),
              "cannot allocate 18446744073709551553 bytes");
}

TEST(AllocatorDeathTest, SizeAbovePtrdiffMaxExits) {
  EXPECT_EXIT(_mlir_memref_to_llvm_alloc(size_t(PTRDIFF_MAX) - 63),
              testing::ExitedWithCode(kAllocationFailureExitCode),
              "cannot allocate 9223372036854775744 bytes \\(aligned to 64\\) "
              "for a buffer of the step: larger than any object can be");
}

// AddressSanitizer's allocator reports such a size itself unless
// ASAN_OPTIONS has allocator_may_return_null=1.
#if defined(__SANITIZE_ADDRESS__)
#define REMAT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REMAT_ASAN 1
#endif
#endif
#ifndef REMAT_ASAN
TEST(AllocatorDeathTest, FailedAllocationExits) {
  // 2^62 bytes: no address space holds it, whatever the overcommit policy.
  EXPECT_EXIT(_mlir_memref_to_llvm_alloc(size_t(1) << 62),
              testing::ExitedWithCode(kAllocationFailureExitCode),
              "cannot allocate 4611686018427387904 bytes \\(aligned to 64\\) "
              "for a buffer of the step: Cannot allocate memory");
}
#endif

TEST(AllocatorDeathTest, AlignmentNotAPowerOfTwoExits) {
  EXPECT_EXIT(_mlir_memref_to_llvm_aligned_alloc(96, 8),
              testing::ExitedWithCode(kAllocationFailureExitCode),
              "cannot allocate 8 bytes \\(aligned to 96\\) for a buffer of "
              "the step: the alignment is not a power of two");
}

TEST(RngSeedTest, HostSetsTheGeneratorSeed) {
  setRngSeed(0);
  EXPECT_EQ(remat_rng_seed(), 0);
  setRngSeed(42);
  EXPECT_EQ(remat_rng_seed(), 42);
  setRngSeed(UINT64_MAX);
  EXPECT_EQ(remat_rng_seed(), -1);
  setRngSeed(0);
}

} // namespace
