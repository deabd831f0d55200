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
#include <memory>
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
  void work(unsigned self);
  /// Runs units of job `job` (of `count` units) until none is left or
  /// another job began: first those of thread `self`'s share, from its
  /// front, then the other shares' from their backs.
  void drain(uint32_t job, int64_t count, unsigned self);
  /// The ticket of thread `share`'s share of job `job`, which the first
  /// thread to look at it in that job sets; a ticket of a later job when
  /// job `job` has ended.
  uint64_t getShare(unsigned share, uint32_t job, int64_t count);

  /// A job: its function and context. Jobs alternate between two slots, so
  /// that a worker that took a unit reads its own job's slot, never one
  /// being written (the job cannot end before that unit has).
  struct Job {
    std::atomic<UnitFn> fn{nullptr};
    std::atomic<void *> context{nullptr};
  };
  /// A thread's share of the current job, on a cache line of its own: the
  /// job's number and the share's units not yet taken (ThreadPool.cpp:
  /// getJob, getFront, getBack). Each unit is taken by one compare-and-swap,
  /// which fails once the caller has moved on to another job. The share's
  /// own thread takes units from the front without touching another
  /// thread's line; a thread done with its own share takes the others' from
  /// the back.
  struct alignas(64) Share {
    std::atomic<uint64_t> ticket{0};
  };

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  Job jobs[2];
  std::unique_ptr<Share[]> shares;
  /// The last job's number; read and written by the calling thread alone.
  uint32_t lastJob = 0;
  /// The current job's number and units (a ticket whose back is the count).
  /// Idle workers and the waiting caller spin on `current` and `finished` a
  /// while before they sleep (a sleeping thread can take milliseconds to
  /// wake on a busy machine).
  alignas(64) std::atomic<uint64_t> current{0};
  /// The current job's units finished: each thread adds its count once,
  /// when it finds no unit left.
  alignas(64) std::atomic<int64_t> finished{0};
  /// Written under `mutex`.
  bool stopping = false;
};

/// Sets the threads of the runtime's pool (1: no workers).
void setPoolThreads(unsigned threads);
/// The runtime's pool; one thread until setPoolThreads.
ThreadPool &getThreadPool();

} // namespace remat::runtime

#endif // REMAT_RUNTIME_THREADPOOL_H
