//===- ChainPlannerTest.cpp - Chain dynamic program against brute force ---===//
//
// Checks the nested-checkpointing dynamic program on random heterogeneous
// chains against a brute force over every well-nested segment structure (up
// to three levels), each one evaluated by the chain model's simulation of
// -remat-checkpoint's rules: the same fewest recompute FLOPs at every memory
// limit, and the plan the program returns measures what it claims.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/ChainPlanner.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <functional>
#include <limits>
#include <random>

using namespace remat;

namespace {

using Path = SegmentPath;
using Paths = std::vector<Path>;

/// Every well-nested plan of stages [0, n): at each level an interval is cut
/// into pieces, each a stage kept at that level or a nested segment (never
/// the whole interval again), down to `maxDepth` levels of segments.
void enumeratePlans(unsigned n, unsigned maxDepth,
                    const std::function<void(const Paths &)> &visit) {
  Paths paths(n);
  int64_t nextId = 0;
  // Fills [s, t] at the level of `prefix`, which starts at `lo`, then calls
  // `done`.
  std::function<void(unsigned, unsigned, unsigned, Path, bool,
                     const std::function<void()> &)>
      level = [&](unsigned lo, unsigned s, unsigned t, Path prefix, bool whole,
                  const std::function<void()> &done) {
        if (s > t) {
          done();
          return;
        }
        // Stage s kept at this level.
        paths[s] = prefix;
        level(lo, s + 1, t, prefix, whole, done);
        if (prefix.size() >= maxDepth)
          return;
        // A segment [s, e] nested here.
        for (unsigned e = s; e <= t; ++e) {
          if (!whole && s == lo && e == t)
            continue;
          Path inner = prefix;
          inner.push_back(nextId++);
          for (unsigned i = s; i <= e; ++i)
            paths[i] = inner;
          level(s, s, e, inner, false, [&, lo, e, t, prefix, whole] {
            level(lo, e + 1, t, prefix, whole, done);
          });
        }
      };
  // The forward level may hold a segment of everything.
  level(0, 0, n - 1, {}, true, [&] { visit(paths); });
}

TEST(ChainPlannerTest, DynamicProgramEqualsBruteForce) {
  std::mt19937 rng(2019);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int chains = 0, limits = 0, plans = 0, nestedOptima = 0;
  for (int trial = 0; trial < 300; ++trial) {
    unsigned n = 1 + trial % 7;
    std::vector<ChainStage> chain(n);
    for (ChainStage &stage : chain) {
      stage.flops = pick(0, 20);
      stage.outBytes = 4 * pick(1, 8);
      stage.outRead = pick(0, 3) != 0;
      stage.keptBytes = pick(0, 4) == 0 ? 4 * pick(1, 4) : 0;
      stage.transientBytes =
          stage.outBytes + stage.keptBytes + (pick(0, 3) == 0 ? 4 * pick(1, 4) : 0);
      stage.backwardBytes = pick(0, 2) == 0 ? 0 : 4 * pick(1, 8);
    }
    if (!llvm::any_of(chain, [](const ChainStage &s) { return s.isRead(); }))
      chain.back().outRead = true;

    // Fewest FLOPs per exact peak over every plan, and whether the best at
    // each peak needs nesting.
    std::map<int64_t, std::pair<int64_t, bool>> best;
    enumeratePlans(n, 3, [&](const Paths &paths) {
      std::optional<ChainPlan> plan = evaluateChainPlan(chain, paths);
      ASSERT_TRUE(plan);
      bool nested = llvm::any_of(paths, [](const Path &p) { return p.size() > 1; });
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
  std::printf("chain planner: %d chains of 1 to 7 stages, %d plans "
              "enumerated, %d memory limits, dynamic program = brute force "
              "on all; the optimum needs nested segments at %d limits\n",
              chains, plans, limits, nestedOptima);
}

} // namespace
