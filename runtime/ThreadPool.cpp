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

uint64_t makeTicket(uint32_t job, uint64_t units) {
  return uint64_t(job) << (2 * kUnitBits) | units << kUnitBits;
}
uint32_t getJob(uint64_t ticket) { return uint32_t(ticket >> (2 * kUnitBits)); }
uint64_t getFront(uint64_t ticket) { return ticket & kUnitMask; }
uint64_t getBack(uint64_t ticket) { return (ticket >> kUnitBits) & kUnitMask; }

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

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i)
    workers.emplace_back([this] { work(); });
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
  // A single unit leaves the pool to the loops it runs; a parallelFor from
  // a unit runs in place; and a count the ticket cannot hold runs here.
  if (workers.empty() || units == 1 || inUnit || uint64_t(units) > kUnitMask) {
    UnitScope scope;
    for (int64_t unit = 0; unit < units; ++unit)
      unitFn(unitContext, unit);
    return;
  }
  // Only this thread starts jobs, and the last one has ended: its slot is
  // free, and every worker still in it fails to take a unit.
  uint32_t job =
      (getJob(ticket.load(std::memory_order_relaxed)) + 1) & kJobMask;
  Job &slot = jobs[job & 1];
  slot.fn.store(unitFn, std::memory_order_relaxed);
  slot.context.store(unitContext, std::memory_order_relaxed);
  slot.count.store(units, std::memory_order_relaxed);
  finished.store(0, std::memory_order_relaxed);
  {
    // Under the mutex: a worker about to sleep sees the job or is woken.
    std::lock_guard<std::mutex> lock(mutex);
    ticket.store(makeTicket(job, uint64_t(units)), std::memory_order_release);
  }
  wake.notify_all();
  drain(job, /*fromBack=*/false);
  auto ended = [&] {
    return finished.load(std::memory_order_acquire) == units;
  };
  if (spinUntil(ended))
    return;
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, ended);
}

void ThreadPool::drain(uint32_t job, bool fromBack) {
  UnitScope scope;
  Job &slot = jobs[job & 1];
  uint64_t current = ticket.load(std::memory_order_acquire);
  while (getJob(current) == job) {
    uint64_t front = getFront(current), back = getBack(current);
    if (front >= back)
      return;
    // On failure `current` is reloaded: another thread took a unit, or the
    // job ended.
    uint64_t next =
        fromBack ? current - (uint64_t(1) << kUnitBits) : current + 1;
    if (!ticket.compare_exchange_weak(current, next, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    int64_t unit = int64_t(fromBack ? back - 1 : front);
    int64_t count = slot.count.load(std::memory_order_relaxed);
    slot.fn.load(std::memory_order_relaxed)(
        slot.context.load(std::memory_order_relaxed), unit);
    if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
      std::lock_guard<std::mutex> lock(mutex);
      done.notify_all();
      return;
    }
    current = ticket.load(std::memory_order_acquire);
  }
}

void ThreadPool::work() {
  uint32_t seen = 0;
  auto getCurrentJob = [&] {
    return getJob(ticket.load(std::memory_order_acquire));
  };
  while (true) {
    spinUntil([&] { return getCurrentJob() != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || getCurrentJob() != seen; });
      if (stopping)
        return;
    }
    seen = getCurrentJob();
    drain(seen, /*fromBack=*/true);
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
