//===- ScheduleTest.cpp - Least-peak orders against enumeration -----------===//
//
// Checks the solvers of remat::ScheduleProblem on random dependence graphs:
// the peak of an order against a direct count, the exact dynamic program
// against an enumeration of every order the dependences allow, and that the
// greedy schedules, the local search and scheduleForPeak return valid
// orders, never below the optimum and never above the given order.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "gtest/gtest.h"

#include <functional>
#include <random>

using namespace remat;

namespace {

/// A random problem: items depend on earlier ones with probability
/// `density`; each buffer is touched by a few items (a producer and its
/// readers, like a value), some escape.
ScheduleProblem randomProblem(std::mt19937 &rng, unsigned items,
                              unsigned buffers, double density) {
  ScheduleProblem problem;
  std::uniform_real_distribution<double> coin(0, 1);
  for (unsigned item = 0; item < items; ++item) {
    problem.addItem();
    // On large problems, about density * item earlier items by sampling.
    if (items > 64) {
      unsigned count = std::poisson_distribution<unsigned>(density * item)(rng);
      for (unsigned i = 0; i < count; ++i)
        problem.predecessors[item].push_back(
            std::uniform_int_distribution<unsigned>(0, item - 1)(rng));
      continue;
    }
    for (unsigned before = 0; before < item; ++before)
      if (coin(rng) < density)
        problem.predecessors[item].push_back(before);
  }
  std::uniform_int_distribution<unsigned> pick(0, items - 1);
  std::uniform_int_distribution<int64_t> size(1, 16);
  for (unsigned b = 0; b < buffers; ++b) {
    unsigned buffer = problem.addBuffer(64 * size(rng), coin(rng) < 0.15);
    unsigned users = 1 + pick(rng) % 3;
    for (unsigned u = 0; u < users; ++u) {
      unsigned item = pick(rng);
      auto &touches = problem.touches[item];
      if (std::find(touches.begin(), touches.end(), buffer) == touches.end())
        touches.push_back(buffer);
    }
  }
  return problem;
}

/// The least peak over every order the dependences allow.
int64_t enumerateLeastPeak(const ScheduleProblem &problem) {
  unsigned n = problem.getNumItems();
  std::vector<unsigned> waiting(n, 0);
  std::vector<std::vector<unsigned>> successors(n);
  for (unsigned item = 0; item < n; ++item)
    for (unsigned before : problem.predecessors[item]) {
      ++waiting[item];
      successors[before].push_back(item);
    }
  llvm::SmallVector<unsigned> order;
  std::vector<bool> done(n, false);
  int64_t best = INT64_MAX;
  std::function<void()> extend = [&] {
    if (order.size() == n) {
      best = std::min(best, getSchedulePeak(problem, order));
      return;
    }
    for (unsigned item = 0; item < n; ++item) {
      if (done[item] || waiting[item])
        continue;
      done[item] = true;
      order.push_back(item);
      for (unsigned after : successors[item])
        --waiting[after];
      extend();
      for (unsigned after : successors[item])
        ++waiting[after];
      order.pop_back();
      done[item] = false;
    }
  };
  extend();
  return best;
}

TEST(ScheduleTest, PeakCountsBuffersFromFirstToLastUser) {
  // 0 writes a (64) and b (128); 1 reads a; 2 reads b; 3 writes c (256,
  // escapes).
  ScheduleProblem problem;
  for (int i = 0; i < 4; ++i)
    problem.addItem();
  unsigned a = problem.addBuffer(64, false);
  unsigned b = problem.addBuffer(128, false);
  unsigned c = problem.addBuffer(256, true);
  problem.touches[0] = {a, b};
  problem.touches[1] = {a};
  problem.touches[2] = {b};
  problem.touches[3] = {c};
  problem.predecessors[1] = {0};
  problem.predecessors[2] = {0};
  EXPECT_EQ(getSchedulePeak(problem, {0, 1, 2, 3}), 256);
  // c opens while a and b are still live.
  EXPECT_EQ(getSchedulePeak(problem, {3, 0, 1, 2}), 64 + 128 + 256);
  EXPECT_TRUE(isValidOrder(problem, {3, 0, 2, 1}));
  EXPECT_FALSE(isValidOrder(problem, {1, 0, 2, 3}));
  EXPECT_FALSE(isValidOrder(problem, {0, 1, 2}));
  EXPECT_FALSE(isValidOrder(problem, {0, 1, 1, 3}));
}

TEST(ScheduleTest, ExactEqualsEnumeration) {
  std::mt19937 rng(17);
  int improvedOnGiven = 0, greedyOptimal = 0, searchedOptimal = 0;
  const int instances = 300;
  for (int instance = 0; instance < instances; ++instance) {
    unsigned items = 3 + instance % 7;
    ScheduleProblem problem = randomProblem(rng, items, 2 + instance % 9,
                                            0.1 + 0.05 * (instance % 5));
    int64_t optimum = enumerateLeastPeak(problem);
    std::optional<llvm::SmallVector<unsigned>> exact = scheduleExactly(problem);
    ASSERT_TRUE(exact.has_value());
    ASSERT_TRUE(isValidOrder(problem, *exact)) << "instance " << instance;
    EXPECT_EQ(getSchedulePeak(problem, *exact), optimum)
        << "instance " << instance;

    auto given = llvm::to_vector(llvm::seq<unsigned>(0, items));
    int64_t givenPeak = getSchedulePeak(problem, given);
    improvedOnGiven += optimum < givenPeak;
    int64_t bestGreedy = givenPeak;
    for (GreedyKey key : {GreedyKey::LeastNewBytes, GreedyKey::MostNetFreed}) {
      llvm::SmallVector<unsigned> greedy = scheduleGreedily(problem, key);
      ASSERT_TRUE(isValidOrder(problem, greedy)) << "instance " << instance;
      EXPECT_GE(getSchedulePeak(problem, greedy), optimum);
      bestGreedy = std::min(bestGreedy, getSchedulePeak(problem, greedy));
      int64_t before = getSchedulePeak(problem, greedy);
      improveSchedule(problem, greedy, 64);
      ASSERT_TRUE(isValidOrder(problem, greedy)) << "instance " << instance;
      EXPECT_LE(getSchedulePeak(problem, greedy), before);
    }
    greedyOptimal += bestGreedy == optimum;

    // Without the exact program, the heuristics alone.
    ScheduleOptions heuristic;
    heuristic.maxExactItems = 0;
    llvm::SmallVector<unsigned> searched = scheduleForPeak(problem, heuristic);
    ASSERT_TRUE(isValidOrder(problem, searched));
    int64_t searchedPeak = getSchedulePeak(problem, searched);
    EXPECT_LE(searchedPeak, givenPeak);
    EXPECT_GE(searchedPeak, optimum);
    searchedOptimal += searchedPeak == optimum;

    llvm::SmallVector<unsigned> best = scheduleForPeak(problem);
    ASSERT_TRUE(isValidOrder(problem, best));
    EXPECT_EQ(getSchedulePeak(problem, best), optimum);
  }
  // The instances are not trivial, and the heuristics are good on them.
  EXPECT_GE(improvedOnGiven, instances / 4);
  EXPECT_GE(searchedOptimal, instances * 9 / 10);
  std::printf("given order optimal on %d of %d instances; greedy optimal on "
              "%d, heuristics with local search on %d\n",
              instances - improvedOnGiven, instances, greedyOptimal,
              searchedOptimal);
}

TEST(ScheduleTest, ReuseSharesBytesWhenTheSourceDiesThere) {
  // 0 writes x; 1 reads x and writes y, in x's bytes if x dies at 1; 2
  // reads y and writes z in y's (so x's) bytes; 3 reads x.
  ScheduleProblem problem;
  for (int i = 0; i < 4; ++i)
    problem.addItem();
  unsigned x = problem.addBuffer(64, false);
  unsigned y = problem.addBuffer(64, false);
  unsigned z = problem.addBuffer(64, true);
  problem.touches[0] = {x};
  problem.touches[1] = {x, y};
  problem.touches[2] = {y, z};
  problem.touches[3] = {x};
  problem.predecessors[1] = {0};
  problem.predecessors[2] = {1};
  problem.predecessors[3] = {0};
  problem.reuses.push_back({1, y, {x}});
  problem.reuses.push_back({2, z, {y}});
  // x dies at 1: y and then z take its bytes, one buffer throughout.
  EXPECT_EQ(getSchedulePeak(problem, {0, 3, 1, 2}), 64);
  // x is read after 1: y needs its own bytes; z takes y's.
  EXPECT_EQ(getSchedulePeak(problem, {0, 1, 2, 3}), 128);
  // The schedule finds the order where the reuse happens.
  EXPECT_EQ(getSchedulePeak(problem, scheduleForPeak(problem)), 64);
  ScheduleOptions heuristic;
  heuristic.maxExactItems = 0;
  EXPECT_EQ(getSchedulePeak(problem, scheduleForPeak(problem, heuristic)), 64);
}

TEST(ScheduleTest, ReuseAwareSearchAgainstEnumeration) {
  // Random problems with in-place reuse offered where an item touches two
  // buffers of one size: the search never returns an invalid order, never
  // one above the given order or below the enumerated optimum, and mostly
  // the optimum.
  std::mt19937 rng(23);
  int instances = 0, optimal = 0;
  for (int instance = 0; instance < 300; ++instance) {
    unsigned items = 3 + instance % 7;
    ScheduleProblem problem = randomProblem(rng, items, 2 + instance % 9,
                                            0.1 + 0.05 * (instance % 5));
    for (auto &bytes : problem.bytes)
      bytes = 64 * (1 + bytes % 2);
    for (unsigned item = 0; item < items; ++item) {
      auto &touches = problem.touches[item];
      for (unsigned result : touches) {
        ScheduleProblem::Reuse reuse{item, result, {}};
        for (unsigned source : touches)
          if (source != result &&
              problem.bytes[source] == problem.bytes[result])
            reuse.sources.push_back(source);
        if (!reuse.sources.empty()) {
          problem.reuses.push_back(std::move(reuse));
          break;
        }
      }
    }
    if (problem.reuses.empty())
      continue;
    ++instances;
    int64_t optimum = enumerateLeastPeak(problem);
    auto given = llvm::to_vector(llvm::seq<unsigned>(0, items));
    llvm::SmallVector<unsigned> best = scheduleForPeak(problem);
    ASSERT_TRUE(isValidOrder(problem, best)) << "instance " << instance;
    int64_t peak = getSchedulePeak(problem, best);
    EXPECT_LE(peak, getSchedulePeak(problem, given)) << "instance " << instance;
    EXPECT_GE(peak, optimum) << "instance " << instance;
    optimal += peak == optimum;
  }
  EXPECT_GE(instances, 100);
  EXPECT_GE(optimal, instances * 9 / 10);
  std::printf("with reuse: optimal on %d of %d instances\n", optimal,
              instances);
}

TEST(ScheduleTest, ExactGivesUpBeyondItsStates) {
  std::mt19937 rng(5);
  ScheduleProblem problem = randomProblem(rng, 30, 20, 0.0);
  EXPECT_FALSE(scheduleExactly(problem, /*maxStates=*/1000).has_value());
  ScheduleProblem tooMany = randomProblem(rng, 65, 4, 0.5);
  EXPECT_FALSE(scheduleExactly(tooMany).has_value());
}

TEST(ScheduleTest, ChainsRunOneAtATime) {
  // k independent chains, each: item opens a big buffer, the next reads it
  // and writes a small one. Interleaved, every big buffer is live at once.
  const unsigned k = 200;
  ScheduleProblem problem;
  llvm::SmallVector<unsigned> interleaved;
  for (unsigned chain = 0; chain < k; ++chain) {
    unsigned big = problem.addBuffer(4096, false);
    unsigned small = problem.addBuffer(64, true);
    unsigned producer = problem.addItem();
    unsigned consumer = problem.addItem();
    problem.touches[producer] = {big};
    problem.touches[consumer] = {big, small};
    problem.predecessors[consumer] = {producer};
  }
  // The given order: every producer, then every consumer.
  for (unsigned chain = 0; chain < k; ++chain)
    interleaved.push_back(2 * chain);
  for (unsigned chain = 0; chain < k; ++chain)
    interleaved.push_back(2 * chain + 1);
  EXPECT_EQ(getSchedulePeak(problem, interleaved), k * 4096 + 64);
  for (GreedyKey key : {GreedyKey::LeastNewBytes, GreedyKey::MostNetFreed}) {
    llvm::SmallVector<unsigned> greedy = scheduleGreedily(problem, key);
    ASSERT_TRUE(isValidOrder(problem, greedy));
    EXPECT_EQ(getSchedulePeak(problem, greedy), 4096 + k * 64);
  }
}

TEST(ScheduleTest, SearchMovesAFillWithItsMatmul) {
  // A backward's shape: g0 produces G; d1 (a fill) and d2 (a matmul) write
  // D; w1 and w2 write W from G, G's last use; e reads D. In the given order
  // G, D and W are live at once. Only moving w1 and w2 together before d1
  // frees G first: no single item can move past the peak without opening
  // its buffer earlier.
  ScheduleProblem problem;
  unsigned g = problem.addBuffer(100, false);
  unsigned d = problem.addBuffer(100, false);
  unsigned w = problem.addBuffer(10, true);
  unsigned g0 = problem.addItem(), d1 = problem.addItem(),
           d2 = problem.addItem(), w1 = problem.addItem(),
           w2 = problem.addItem(), e = problem.addItem();
  problem.touches[g0] = {g};
  problem.touches[d1] = {d};
  problem.touches[d2] = {d};
  problem.touches[w1] = {w};
  problem.touches[w2] = {g, w};
  problem.touches[e] = {d};
  problem.predecessors[d2] = {d1};
  problem.predecessors[w2] = {g0, w1};
  problem.predecessors[e] = {d2};
  llvm::SmallVector<unsigned> order = {g0, d1, d2, w1, w2, e};
  EXPECT_EQ(getSchedulePeak(problem, order), 210);
  improveSchedule(problem, order, 64);
  ASSERT_TRUE(isValidOrder(problem, order));
  EXPECT_EQ(getSchedulePeak(problem, order), 110);
  EXPECT_EQ(enumerateLeastPeak(problem), 110);
}

TEST(ScheduleTest, LargeProblemsStayValid) {
  std::mt19937 rng(3);
  ScheduleProblem problem = randomProblem(rng, 20000, 15000, 0.0002);
  for (auto &predecessors : problem.predecessors) {
    llvm::sort(predecessors);
    predecessors.erase(llvm::unique(predecessors), predecessors.end());
  }
  llvm::SmallVector<unsigned> order = scheduleForPeak(problem);
  ASSERT_TRUE(isValidOrder(problem, order));
  auto given = llvm::to_vector(llvm::seq<unsigned>(0, 20000));
  EXPECT_LE(getSchedulePeak(problem, order), getSchedulePeak(problem, given));
}

} // namespace
