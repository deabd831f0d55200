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
  /// Takes units of job `job` until none is left or another job began:
  /// the caller from the front, workers from the back, so that the threads
  /// of consecutive loops over the same rows keep to the same rows (and
  /// their cache) where the units are even.
  void drain(uint32_t job, bool fromBack);

  /// A job: its function, context and units. Jobs alternate between two
  /// slots, so that a worker that read a job's number just before the job
  /// ended reads that job's slot, never one being written.
  struct Job {
    std::atomic<UnitFn> fn{nullptr};
    std::atomic<void *> context{nullptr};
    std::atomic<int64_t> count{0};
  };

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  Job jobs[2];
  /// The current job's number and the range of its units not yet taken
  /// (ThreadPool.cpp: getJob, getFront, getBack): a unit is taken by one
  /// compare-and-swap, which fails once the caller has moved on to another
  /// job. Idle workers and the waiting caller spin on `ticket` and
  /// `finished` a while before they sleep (a sleeping thread can take
  /// milliseconds to wake on a busy machine).
  std::atomic<uint64_t> ticket{0};
  /// The current job's units finished.
  std::atomic<int64_t> finished{0};
  /// Written under `mutex`.
  bool stopping = false;
};

/// Sets the threads of the runtime's pool (1: no workers).
void setPoolThreads(unsigned threads);
/// The runtime's pool; one thread until setPoolThreads.
ThreadPool &getThreadPool();

} // namespace remat::runtime

#endif // REMAT_RUNTIME_THREADPOOL_H
