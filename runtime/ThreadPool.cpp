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
  // A single unit leaves the pool to the loops it runs.
  if (workers.empty() || units == 1) {
    for (int64_t unit = 0; unit < units; ++unit)
      unitFn(unitContext, unit);
    return;
  }
  if (inUnit) {
    for (int64_t unit = 0; unit < units; ++unit)
      unitFn(unitContext, unit);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    fn = unitFn;
    context = unitContext;
    count = units;
    next = 0;
    finished = 0;
    ++generation;
  }
  wake.notify_all();
  drain();
  spinUntil([&] { return finished.load() == units; });
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return finished.load() == count; });
  fn = nullptr;
  context = nullptr;
  count = next = 0;
  finished = 0;
}

void ThreadPool::drain() {
  UnitScope scope;
  std::unique_lock<std::mutex> lock(mutex);
  while (next < count) {
    int64_t unit = next++;
    UnitFn unitFn = fn;
    void *unitContext = context;
    lock.unlock();
    unitFn(unitContext, unit);
    lock.lock();
    if (++finished == count)
      done.notify_all();
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  while (true) {
    spinUntil([&] { return generation.load() != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    drain();
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
