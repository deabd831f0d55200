//===- ThreadPool.cpp - The CPU runtime's worker threads ------------------===//

#include "ThreadPool.h"

#include <chrono>

using namespace remat::runtime;

namespace {
/// How long idle workers and a waiting caller spin before they sleep.
constexpr std::chrono::microseconds kSpinTime(1000);

/// Spins until `done()` or kSpinTime has passed; returns `done()`.
template <typename Done> bool spinUntil(Done done) {
  auto start = std::chrono::steady_clock::now();
  while (!done()) {
    for (int i = 0; i < 64; ++i) {
      if (done())
        return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() - start > kSpinTime)
      return done();
  }
  return true;
}

/// A ticket's fields: the next unit from the front (its low kUnitBits), one
/// past the last unit not yet taken from the back (the next kUnitBits) and
/// the job's number (the rest).
constexpr unsigned kUnitBits = 21;
constexpr uint64_t kUnitMask = (uint64_t(1) << kUnitBits) - 1;
constexpr unsigned kJobBits = 64 - 2 * kUnitBits;
constexpr uint32_t kJobMask = (uint32_t(1) << kJobBits) - 1;

uint64_t makeTicket(uint32_t job, uint64_t front, uint64_t back) {
  return uint64_t(job) << (2 * kUnitBits) | back << kUnitBits | front;
}
uint32_t getJob(uint64_t ticket) { return uint32_t(ticket >> (2 * kUnitBits)); }
uint64_t getFront(uint64_t ticket) { return ticket & kUnitMask; }
uint64_t getBack(uint64_t ticket) { return (ticket >> kUnitBits) & kUnitMask; }

/// Whether job number `job` began after job number `other` (numbers wrap;
/// the two are never more than a few jobs apart).
bool isLater(uint32_t job, uint32_t other) {
  uint32_t distance = (job - other) & kJobMask;
  return distance != 0 && distance < kJobMask / 2;
}

/// Set on the pool's threads while they run a unit: a parallelFor from a
/// unit runs in place.
thread_local bool inUnit = false;

/// Marks the current thread as running a unit for the scope.
struct UnitScope {
  bool outer = inUnit;
  UnitScope() { inUnit = true; }
  ~UnitScope() { inUnit = outer; }
};
} // namespace

ThreadPool::ThreadPool(unsigned threads)
    : shares(std::make_unique<Share[]>(threads)) {
  for (unsigned i = 1; i < threads; ++i)
    workers.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

void ThreadPool::run(int64_t units, UnitFn unitFn, void *unitContext) {
  if (units <= 0)
    return;
  // A single unit leaves the pool to the loops it runs (outside a unit's
  // scope, so that they take the pool's threads: a convolution's one group
  // cuts its matmuls into blocks for them); a parallelFor from a unit runs
  // in place; and a count the ticket cannot hold runs here.
  if (units == 1 && !inUnit) {
    unitFn(unitContext, 0);
    return;
  }
  if (workers.empty() || inUnit || uint64_t(units) > kUnitMask) {
    UnitScope scope;
    for (int64_t unit = 0; unit < units; ++unit)
      unitFn(unitContext, unit);
    return;
  }
  // Only this thread starts jobs, and the last one has ended: its slot is
  // free, and every worker still in it fails to take a unit.
  uint32_t job = lastJob = (lastJob + 1) & kJobMask;
  Job &slot = jobs[job & 1];
  slot.fn.store(unitFn, std::memory_order_relaxed);
  slot.context.store(unitContext, std::memory_order_relaxed);
  finished.store(0, std::memory_order_relaxed);
  {
    // Under the mutex: a worker about to sleep sees the job or is woken.
    std::lock_guard<std::mutex> lock(mutex);
    current.store(makeTicket(job, 0, uint64_t(units)),
                  std::memory_order_release);
  }
  wake.notify_all();
  drain(job, units, 0);
  auto ended = [&] {
    return finished.load(std::memory_order_acquire) == units;
  };
  if (spinUntil(ended))
    return;
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, ended);
}

uint64_t ThreadPool::getShare(unsigned share, uint32_t job, int64_t count) {
  std::atomic<uint64_t> &ticket = shares[share].ticket;
  uint64_t seen = ticket.load(std::memory_order_acquire);
  // A share still of an earlier job gets this job's range: the shares cut
  // [0, count) into getThreads() contiguous ranges. (An earlier job's share
  // with units left cannot be: that job has not ended, so this one has not
  // begun.)
  uint64_t threads = getThreads();
  uint64_t front = uint64_t(count) * share / threads;
  uint64_t back = uint64_t(count) * (share + 1) / threads;
  while (isLater(job, getJob(seen)))
    if (ticket.compare_exchange_weak(seen, makeTicket(job, front, back),
                                     std::memory_order_acq_rel,
                                     std::memory_order_acquire))
      return makeTicket(job, front, back);
  return seen;
}

void ThreadPool::drain(uint32_t job, int64_t count, unsigned self) {
  UnitScope scope;
  Job &slot = jobs[job & 1];
  unsigned threads = getThreads();
  int64_t ran = 0;
  for (unsigned i = 0; i < threads; ++i) {
    unsigned share = (self + i) % threads;
    bool own = i == 0;
    std::atomic<uint64_t> &ticket = shares[share].ticket;
    uint64_t seen = getShare(share, job, count);
    while (getJob(seen) == job) {
      uint64_t front = getFront(seen), back = getBack(seen);
      if (front >= back)
        break;
      // On failure `seen` is reloaded: another thread took a unit of the
      // share, or the job ended.
      uint64_t next = own ? seen + 1 : seen - (uint64_t(1) << kUnitBits);
      if (!ticket.compare_exchange_weak(seen, next, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
        continue;
      slot.fn.load(std::memory_order_relaxed)(
          slot.context.load(std::memory_order_relaxed),
          int64_t(own ? front : back - 1));
      ++ran;
      seen = ticket.load(std::memory_order_acquire);
    }
    // A later job: this one has ended, and its units were others'.
    if (getJob(seen) != job)
      break;
  }
  if (ran != 0 &&
      finished.fetch_add(ran, std::memory_order_acq_rel) + ran == count) {
    std::lock_guard<std::mutex> lock(mutex);
    done.notify_all();
  }
}

void ThreadPool::work(unsigned self) {
  uint32_t seen = 0;
  auto getCurrentJob = [&] {
    return getJob(current.load(std::memory_order_acquire));
  };
  while (true) {
    spinUntil([&] { return getCurrentJob() != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || getCurrentJob() != seen; });
      if (stopping)
        return;
    }
    uint64_t job = current.load(std::memory_order_acquire);
    seen = getJob(job);
    drain(seen, int64_t(getBack(job)), self);
  }
}

namespace {
/// Never destroyed: a kernel that ends the process from a unit (std::exit)
/// would otherwise join its own thread in the pool's destructor.
ThreadPool *&getPoolSlot() {
  static ThreadPool *pool = new ThreadPool(1);
  return pool;
}
} // namespace

void remat::runtime::setPoolThreads(unsigned threads) {
  ThreadPool *&pool = getPoolSlot();
  threads = threads == 0 ? 1 : threads;
  if (pool->getThreads() == threads)
    return;
  delete pool;
  pool = new ThreadPool(threads);
}

ThreadPool &remat::runtime::getThreadPool() { return *getPoolSlot(); }
