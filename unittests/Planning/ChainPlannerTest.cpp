//===- ChainPlannerTest.cpp - Chain dynamic program against brute force ---===//
//
// Checks the nested-checkpointing dynamic program on random heterogeneous
// chains against a brute force over every well-nested segment structure (at
// any depth), each one evaluated by the chain model's simulation of
// -remat-checkpoint's rules: the same fewest recompute FLOPs at every memory
// limit, and the plan the program returns measures what it claims.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/ChainPlanner.h"

#include "gtest/gtest.h"

#include "TestTrials.h"

#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

using namespace remat;
using llvm::ArrayRef;

namespace {

using Path = SegmentPath;
using Paths = std::vector<Path>;

/// The number of well-nested plans of n stages down to `depth` levels, by
/// the recurrence over an interval's first piece (a kept stage, or a nested
/// segment of k stages filled one level down, never the whole interval
/// below the forward level).
uint64_t countPlans(unsigned n, unsigned depth, bool whole) {
  std::vector<uint64_t> ways(n + 1, 0);
  ways[0] = 1;
  // ways[r]: fillings of the last r stages.
  for (unsigned r = 1; r <= n; ++r) {
    ways[r] = ways[r - 1];
    if (depth == 0)
      continue;
    for (unsigned k = 1; k <= r; ++k) {
      if (!whole && r == n && k == n)
        continue;
      ways[r] += countPlans(k, depth - 1, false) * ways[r - k];
    }
  }
  return ways[n];
}

TEST(ChainPlannerTest, EnumerationIsCompleteAndDistinct) {
  for (unsigned depth = 1; depth <= 4; ++depth)
    for (unsigned n = 0; n <= 6; ++n) {
      std::set<std::vector<std::vector<int64_t>>> seen;
      uint64_t count = 0;
      forEachNestedPlan(n, depth, [&](ArrayRef<Path> paths) {
        ++count;
        // Renumber segments by first appearance: plans that differ only
        // in their ids would be the same plan.
        std::map<std::pair<size_t, int64_t>, int64_t> ids;
        std::vector<std::vector<int64_t>> canonical;
        for (const Path &path : paths) {
          EXPECT_LE(path.size(), depth);
          std::vector<int64_t> renamed;
          for (auto [level, id] : llvm::enumerate(path))
            renamed.push_back(ids.try_emplace({level, id}, int64_t(ids.size()))
                                  .first->second);
          canonical.push_back(renamed);
        }
        EXPECT_TRUE(seen.insert(canonical).second) << "n " << n;
        // Every plan is one the chain model describes.
        std::vector<ChainStage> chain(n);
        for (ChainStage &stage : chain)
          stage.outBytes = 4, stage.transientBytes = 4, stage.outRead = true;
        EXPECT_TRUE(evaluateChainPlan(chain, paths)) << "n " << n;
      });
      EXPECT_EQ(count, countPlans(n, depth, true))
          << "n " << n << " depth " << depth;
    }
  EXPECT_EQ(countPlans(6, 3, true), 11348u);
}

TEST(ChainPlannerTest, DynamicProgramEqualsBruteForce) {
  std::mt19937 rng(2019);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int chains = 0, limits = 0, plans = 0, nestedOptima = 0;
  for (int trial = 0; trial < remat::test::scaledTrials(420); ++trial) {
    unsigned n = 1 + trial % 6;
    std::vector<ChainStage> chain(n);
    for (ChainStage &stage : chain) {
      stage.flops = pick(0, 20);
      stage.outBytes = 4 * pick(1, 8);
      stage.outRead = pick(0, 3) != 0;
      stage.keptBytes = pick(0, 4) == 0 ? 4 * pick(1, 4) : 0;
      stage.transientBytes = stage.outBytes + stage.keptBytes +
                             (pick(0, 3) == 0 ? 4 * pick(1, 4) : 0);
      stage.backwardBytes = pick(0, 2) == 0 ? 0 : 4 * pick(1, 8);
      stage.afterBytes = pick(0, 2) == 0 ? 0 : 4 * pick(1, 8);
      stage.inPlace = pick(0, 1) == 0;
    }
    for (unsigned i = 0; i + 1 < n; ++i)
      chain[i].fusedOut = pick(0, 1) == 0;
    if (!llvm::any_of(chain, [](const ChainStage &s) { return s.isRead(); }))
      chain.back().outRead = true;

    // Fewest FLOPs per exact peak over every plan, and whether the best at
    // each peak needs nesting.
    std::map<int64_t, std::pair<int64_t, bool>> best;
    forEachNestedPlan(n, /*maxDepth=*/n, [&](ArrayRef<Path> paths) {
      std::optional<ChainPlan> plan = evaluateChainPlan(chain, paths);
      ASSERT_TRUE(plan);
      bool nested =
          llvm::any_of(paths, [](const Path &p) { return p.size() > 1; });
      auto [it, inserted] =
          best.try_emplace(plan->peakBytes, plan->recomputeFlops, nested);
      if (!inserted && (plan->recomputeFlops < it->second.first ||
                        (plan->recomputeFlops == it->second.first && !nested)))
        it->second = {plan->recomputeFlops, nested};
      ++plans;
    });

    ChainPlanner planner(chain);
    int64_t q = planner.getQuantum();
    int64_t running = std::numeric_limits<int64_t>::max();
    bool runningNested = false;
    auto peakIt = best.begin();
    for (unsigned m = 0; m <= planner.getLimit(); ++m) {
      for (; peakIt != best.end() && peakIt->first <= int64_t(m) * q; ++peakIt)
        if (peakIt->second.first < running) {
          running = peakIt->second.first;
          runningNested = peakIt->second.second;
        }
      std::optional<int64_t> cost = planner.getCost(m);
      if (running == std::numeric_limits<int64_t>::max()) {
        EXPECT_FALSE(cost) << "chain " << trial << " limit " << m;
        continue;
      }
      ASSERT_TRUE(cost) << "chain " << trial << " limit " << m;
      EXPECT_EQ(*cost, running) << "chain " << trial << " limit " << m;
      std::optional<ChainPlan> plan = planner.getPlan(m);
      ASSERT_TRUE(plan);
      std::optional<ChainPlan> measured = evaluateChainPlan(chain, plan->paths);
      ASSERT_TRUE(measured);
      EXPECT_EQ(measured->recomputeFlops, *cost) << "chain " << trial;
      EXPECT_LE(measured->peakBytes, int64_t(m) * q) << "chain " << trial;
      nestedOptima += runningNested;
      ++limits;
    }
    ++chains;
  }
  std::printf("chain planner: %d chains of 1 to 6 stages, %d plans "
              "enumerated, %d memory limits, dynamic program = brute force "
              "on all; the optimum needs nested segments at %d limits\n",
              chains, plans, limits, nestedOptima);
}

} // namespace
