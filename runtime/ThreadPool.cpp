//===- ThreadPool.cpp - The CPU runtime's worker threads ------------------===//

#include "ThreadPool.h"

using namespace remat::runtime;

namespace {
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
    next = finished = 0;
    ++generation;
  }
  wake.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return finished == count; });
  fn = nullptr;
  context = nullptr;
  count = next = finished = 0;
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
