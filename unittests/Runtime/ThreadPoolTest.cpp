//===- ThreadPoolTest.cpp - The CPU runtime's worker threads --------------===//
//
// Checks that the runtime's pool runs every unit of a parallelFor exactly
// once at any thread count (nested loops in place), also through the entry
// point generated parallel loops call (remat_parallel_for), and that the matmul
// kernels, which split their work over it, give bit-identical outputs at 1,
// 2 and 3 threads.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"
#include "RematRuntime.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace remat::runtime;

namespace {

TEST(ThreadPoolTest, RunsEveryUnitOnce) {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.getThreads(), threads);
    for (int64_t count : {0, 1, 2, 3, 7, 1000}) {
      std::vector<std::atomic<int>> runs(count);
      pool.parallelFor(count, [&](int64_t unit) { ++runs[unit]; });
      for (int64_t unit = 0; unit < count; ++unit)
        ASSERT_EQ(runs[unit].load(), 1)
            << "unit " << unit << " of " << count << " at " << threads;
    }
  }
}

TEST(ThreadPoolTest, NestedLoopsRunEveryUnitOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> runs(5 * 7);
  pool.parallelFor(5, [&](int64_t outer) {
    pool.parallelFor(7, [&](int64_t inner) { ++runs[outer * 7 + inner]; });
  });
  for (std::atomic<int> &count : runs)
    EXPECT_EQ(count.load(), 1);
  // A single outer unit leaves the pool to its inner loop.
  std::vector<std::atomic<int>> single(9);
  pool.parallelFor(1, [&](int64_t) {
    pool.parallelFor(9, [&](int64_t inner) { ++single[inner]; });
  });
  for (std::atomic<int> &count : single)
    EXPECT_EQ(count.load(), 1);
}

TEST(ThreadPoolTest, SingleUnitLeavesItsLoopsThePool) {
  // The inner loop of a single outer unit runs on the pool's threads: its
  // first unit waits (up to a minute) for another thread to take one.
  ThreadPool pool(2);
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> helped{false};
  pool.parallelFor(1, [&](int64_t) {
    pool.parallelFor(2, [&](int64_t inner) {
      if (std::this_thread::get_id() != caller) {
        helped = true;
        return;
      }
      auto start = std::chrono::steady_clock::now();
      while (inner == 0 && !helped &&
             std::chrono::steady_clock::now() - start < std::chrono::minutes(1))
        std::this_thread::yield();
    });
  });
  EXPECT_TRUE(helped.load());
}

TEST(ThreadPoolTest, ManyLoopsInARow) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int loop = 0; loop < 2000; ++loop)
    pool.parallelFor(3, [&](int64_t unit) { sum += unit + 1; });
  EXPECT_EQ(sum.load(), 2000 * 6);
}

TEST(ThreadPoolTest, JobsOfEverySizeBackToBack) {
  // More threads than this machine may have cores, so that workers are
  // preempted between reading a job's number and taking a unit: one late
  // for a job must take no unit of the next, under either job's function
  // (each job's counts live on the heap, freed when it ends; the sanitized
  // build reports a unit that touches them after).
  ThreadPool pool(4);
  for (int job = 0; job < 20000; ++job) {
    int64_t units = 2 + job % 7;
    auto runs = std::make_unique<std::vector<std::atomic<int>>>(units);
    std::vector<std::atomic<int>> *counts = runs.get();
    pool.parallelFor(units, [counts](int64_t unit) { ++(*counts)[unit]; });
    for (int64_t unit = 0; unit < units; ++unit)
      ASSERT_EQ((*runs)[unit].load(), 1) << "job " << job << ", unit " << unit;
  }
}

TEST(ThreadPoolTest, IdleThreadsTakeUnitsOfABusyOnesShare) {
  // The caller's share is units 0-3, the worker's 4-7. The caller stays in
  // the first unit it runs long enough for the worker to run its own share
  // and then take the rest of the caller's from its back: the caller runs
  // one unit (none, if the worker took them all before the caller began).
  ThreadPool pool(2);
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> callerUnits{0};
  pool.parallelFor(8, [&](int64_t) {
    if (std::this_thread::get_id() == caller && callerUnits++ == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  EXPECT_LE(callerUnits.load(), 1);
}

/// What generated code passes remat_parallel_for: a unit function and its
/// context.
struct UnitCounts {
  std::vector<std::atomic<int>> runs;
};
void countUnit(void *context, int64_t unit) {
  ++static_cast<UnitCounts *>(context)->runs[unit];
}

TEST(ThreadPoolTest, ParallelForEntryRunsEveryUnitOnce) {
  for (unsigned threads : {1u, 2u, 3u}) {
    setPoolThreads(threads);
    for (int64_t count : {0, 1, 5, 256}) {
      UnitCounts counts{std::vector<std::atomic<int>>(count)};
      remat_parallel_for(count, countUnit, &counts);
      for (int64_t unit = 0; unit < count; ++unit)
        ASSERT_EQ(counts.runs[unit].load(), 1)
            << "unit " << unit << " of " << count << " at " << threads;
    }
  }
  setPoolThreads(1);
}

/// A row-major rows x cols matrix of random floats.
std::vector<float> randomMatrix(std::mt19937 &rng, int64_t rows, int64_t cols) {
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::vector<float> data(rows * cols);
  for (float &value : data)
    value = real(rng);
  return data;
}

StridedMemRefType<float, 2> view2d(std::vector<float> &data, int64_t rows,
                                   int64_t cols, bool transposed = false) {
  StridedMemRefType<float, 2> view;
  view.basePtr = view.data = data.data();
  view.offset = 0;
  view.sizes[0] = rows;
  view.sizes[1] = cols;
  view.strides[0] = transposed ? 1 : cols;
  view.strides[1] = transposed ? rows : 1;
  return view;
}

/// C += A * B at 1, 2 and 3 threads, from the same C: byte-equal results.
void checkMatmul(int64_t m, int64_t n, int64_t k, bool transposeA) {
  std::mt19937 rng(m * 31 + n * 7 + k);
  std::vector<float> a = randomMatrix(rng, m, k), b = randomMatrix(rng, k, n),
                     c0 = randomMatrix(rng, m, n), first;
  for (unsigned threads : {1u, 2u, 3u}) {
    setPoolThreads(threads);
    std::vector<float> c = c0;
    StridedMemRefType<float, 2> av = view2d(a, m, k, transposeA),
                                bv = view2d(b, k, n), cv = view2d(c, m, n);
    _mlir_ciface_remat_matmul_f32(&av, &bv, &cv);
    if (threads == 1)
      first = c;
    else
      ASSERT_EQ(std::memcmp(first.data(), c.data(), c.size() * sizeof(float)),
                0)
          << m << "x" << n << "x" << k << " at " << threads << " threads";
  }
  setPoolThreads(1);
}

TEST(ThreadPoolTest, MatmulThreadsBitIdentical) {
  // Below the blocking threshold, split by rows, split by columns (with a
  // last short block), and a transposed A.
  checkMatmul(16, 24, 40, false);
  checkMatmul(1024, 256, 64, false);
  checkMatmul(200, 1000, 33, false);
  checkMatmul(300, 130, 96, true);
  // A small result and a long k: cut along k (a weight gradient), with a
  // short last part.
  checkMatmul(32, 224, 1024, true);
  checkMatmul(64, 32, 1030, false);
}

TEST(ThreadPoolTest, MatmulCutAlongKSumsEveryTerm) {
  // Cut along k into parts added in order: every term counted once, onto
  // what C held, within float rounding of a double-precision product.
  int64_t m = 32, n = 64, k = 1030;
  std::mt19937 rng(11);
  std::vector<float> a = randomMatrix(rng, m, k), b = randomMatrix(rng, k, n),
                     c = randomMatrix(rng, m, n), c0 = c;
  StridedMemRefType<float, 2> av = view2d(a, m, k), bv = view2d(b, k, n),
                              cv = view2d(c, m, n);
  setPoolThreads(2);
  _mlir_ciface_remat_matmul_f32(&av, &bv, &cv);
  setPoolThreads(1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = c0[i * n + j];
      for (int64_t l = 0; l < k; ++l)
        expected += double(a[i * k + l]) * double(b[l * n + j]);
      EXPECT_NEAR(c[i * n + j], expected, 1e-3) << i << ", " << j;
    }
}

TEST(ThreadPoolTest, BatchMatmulThreadsBitIdentical) {
  int64_t batch = 5, m = 130, n = 70, k = 48;
  std::mt19937 rng(3);
  std::vector<float> a = randomMatrix(rng, batch * m, k),
                     b = randomMatrix(rng, batch * k, n),
                     c0 = randomMatrix(rng, batch * m, n), first;
  auto view3d = [](std::vector<float> &data, int64_t batch, int64_t rows,
                   int64_t cols) {
    StridedMemRefType<float, 3> view;
    view.basePtr = view.data = data.data();
    view.offset = 0;
    view.sizes[0] = batch;
    view.sizes[1] = rows;
    view.sizes[2] = cols;
    view.strides[0] = rows * cols;
    view.strides[1] = cols;
    view.strides[2] = 1;
    return view;
  };
  for (unsigned threads : {1u, 2u, 3u}) {
    setPoolThreads(threads);
    std::vector<float> c = c0;
    StridedMemRefType<float, 3> av = view3d(a, batch, m, k),
                                bv = view3d(b, batch, k, n),
                                cv = view3d(c, batch, m, n);
    _mlir_ciface_remat_batch_matmul_f32(&av, &bv, &cv);
    if (threads == 1)
      first = c;
    else
      ASSERT_EQ(std::memcmp(first.data(), c.data(), c.size() * sizeof(float)),
                0)
          << "at " << threads << " threads";
  }
  setPoolThreads(1);
}

} // namespace
