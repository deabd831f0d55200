//===- ThreadPool.h - The CPU runtime's worker threads ----------*- C++ -*-===//
//
// The pool the runtime's kernels split their work over. A kernel cuts its
// output into units by the shapes alone, never by the thread count, and
// computes each unit the same way whichever thread runs it: outputs are
// bit-identical for any number of threads.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_THREADPOOL_H
#define REMAT_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace remat::runtime {

/// `threads - 1` workers that help the calling thread through a
/// parallelFor. A parallelFor called from inside another (from a unit) runs
/// its units on the calling thread, in order. One thread at a time calls
/// parallelFor from outside the pool (the step's thread).
class ThreadPool {
public:
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// The threads that run units, the caller's included.
  unsigned getThreads() const { return unsigned(workers.size()) + 1; }

  /// Calls `body(unit)` once for every unit in [0, count), on any of the
  /// pool's threads, and returns when all have returned.
  template <typename Body> void parallelFor(int64_t count, Body &&body) {
    run(
        count,
        [](void *context, int64_t unit) {
          (*static_cast<Body *>(context))(unit);
        },
        &body);
  }

private:
  using UnitFn = void (*)(void *context, int64_t unit);
  void run(int64_t count, UnitFn fn, void *context);
  void work();
  /// Takes units of the current job until none is left.
  void drain();

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  /// The current job: its units, the next unit to take and the units
  /// finished; `generation` counts jobs so that a worker takes each once.
  /// Written under `mutex`; `generation` and `finished` are atomic too, so
  /// that idle workers and the waiting caller can spin on them a while
  /// before they sleep (a sleeping thread can take milliseconds to wake on
  /// a busy machine).
  UnitFn fn = nullptr;
  void *context = nullptr;
  int64_t count = 0, next = 0;
  std::atomic<int64_t> finished{0};
  std::atomic<uint64_t> generation{0};
  bool stopping = false;
};

/// Sets the threads of the runtime's pool (1: no workers).
void setPoolThreads(unsigned threads);
/// The runtime's pool; one thread until setPoolThreads.
ThreadPool &getThreadPool();

} // namespace remat::runtime

#endif // REMAT_RUNTIME_THREADPOOL_H
