//===- AllocationCounter.h - Bookkeeping of a counting allocator -*- C++
//-*-===//
//
// The live allocations and counters that remat's CPU and CUDA allocators
// keep, so that a host reads the same figures from either target, and the
// freed blocks both keep for reuse.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_ALLOCATIONCOUNTER_H
#define REMAT_RUNTIME_ALLOCATIONCOUNTER_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace remat::runtime {

/// Exit status of a process whose generated code could not allocate a
/// buffer, on either target: remat-run's status for a step too large to run.
constexpr int kAllocationFailureExitCode = 2;

/// Counters of an allocator since the last reset.
struct AllocStats {
  int64_t liveBytes = 0;      ///< bytes allocated and not yet freed
  int64_t peakBytes = 0;      ///< maximum of liveBytes
  int64_t allocatedBytes = 0; ///< sum of all allocation sizes
  int64_t allocCount = 0;     ///< number of allocations
};

/// Live allocations with their requested sizes, and the counters. A map
/// rather than a size header lets the host tell generated buffers from its
/// own (isLive) and keeps every buffer's alignment untouched. Not
/// synchronized: the allocator holds its own lock around every call.
class AllocationCounter {
public:
  void allocated(const void *ptr, size_t size) {
    live.emplace(ptr, size);
    stats.liveBytes += static_cast<int64_t>(size);
    stats.peakBytes = std::max(stats.peakBytes, stats.liveBytes);
    stats.allocatedBytes += static_cast<int64_t>(size);
    ++stats.allocCount;
  }

  /// Forgets `ptr`; a pointer the counter never saw is ignored.
  void freed(const void *ptr) {
    auto it = live.find(ptr);
    if (it == live.end())
      return;
    stats.liveBytes -= static_cast<int64_t>(it->second);
    live.erase(it);
  }

  bool isLive(const void *ptr) const { return live.count(ptr) != 0; }
  /// The size `ptr` was allocated with, or 0 for a pointer not live.
  size_t getSize(const void *ptr) const {
    auto it = live.find(ptr);
    return it == live.end() ? 0 : it->second;
  }
  const AllocStats &getStats() const { return stats; }

  /// Resets peak, allocated bytes and count; live bytes (still-held
  /// buffers) carry over, so the next peak starts from them.
  void reset() { stats = {stats.liveBytes, stats.liveBytes, 0, 0}; }

private:
  std::unordered_map<const void *, size_t> live;
  AllocStats stats;
};

/// Freed blocks kept for the next allocation of the same size, at most
/// kMaxBlocks, the oldest given back first. A step allocates its arena and
/// its returned buffers anew on every call, and a fresh allocation is
/// mapped page by page as it is first touched (glibc's mmap of a large
/// block), or costs a driver call (cuMemAlloc); a cached block is free to the
/// counter, so counted bytes do not change. Not synchronized, as the
/// counter.
class BlockCache {
public:
  static constexpr size_t kMaxBlocks = 8;

  /// Takes a kept block of `size` bytes, or returns null.
  void *take(size_t size) {
    auto it =
        std::find_if(blocks.begin(), blocks.end(),
                     [&](const auto &block) { return block.second == size; });
    if (it == blocks.end())
      return nullptr;
    void *ptr = it->first;
    blocks.erase(it);
    return ptr;
  }

  /// Keeps `ptr` of `size` bytes; returns the block to give back now (the
  /// oldest, when more than kMaxBlocks are kept), or null.
  void *keep(void *ptr, size_t size) {
    blocks.emplace_back(ptr, size);
    if (blocks.size() <= kMaxBlocks)
      return nullptr;
    void *oldest = blocks.front().first;
    blocks.erase(blocks.begin());
    return oldest;
  }

private:
  std::vector<std::pair<void *, size_t>> blocks;
};

} // namespace remat::runtime

#endif // REMAT_RUNTIME_ALLOCATIONCOUNTER_H
