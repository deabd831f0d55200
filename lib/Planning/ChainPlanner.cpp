//===- ChainPlanner.cpp - Nested checkpointing of a chain -----------------===//
//
// This file implements the chain model's evaluator (a simulation of
// -remat-checkpoint's rules on a chain) and the dynamic program that finds,
// for every memory limit, the nested plan with the fewest recompute FLOPs.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/ChainPlanner.h"
#include "remat/Analysis/CostModel.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

using namespace remat;
using llvm::ArrayRef;
using llvm::SmallVector;

using Path = SegmentPath;

//===----------------------------------------------------------------------===//
// evaluateChainPlan
//===----------------------------------------------------------------------===//

namespace {

/// The simulation of one plan: values with live intervals on a timeline.
class ChainSimulation {
public:
  ChainSimulation(ArrayRef<ChainStage> chain) : chain(chain) {}

  std::optional<ChainPlan> run(ArrayRef<Path> paths);

private:
  /// A stage's computed output and kept values, live from `from` to their
  /// last use.
  struct Instance {
    unsigned stage;
    /// The instance it read (-1: the arguments).
    int input;
    int64_t from;
    int64_t outLast, keptLast;
    /// Computes of later stages that read the output, and whether the
    /// output must be stored anyway (read by the backward, or a
    /// recomputation's input, read through a barrier).
    int consumers = 0;
    bool stored = false;
  };
  /// A segment: the stages whose paths start with `prefix`.
  struct Segment {
    unsigned lo = 0, hi = 0;
    /// Index of the input instance (-1: the arguments) and of the clones,
    /// per stage, once recomputed.
    int input = -1;
    bool recomputed = false;
    int64_t madeFor = -1;
    std::map<unsigned, int> clones;
  };

  int compute(unsigned stage, int input, bool barrier = false);
  void use(int instance, bool out, bool kept);
  int resolve(unsigned stage, int64_t reader);

  ArrayRef<ChainStage> chain;
  ArrayRef<Path> paths;
  std::map<Path, Segment> segments;
  SmallVector<Instance, 0> instances;
  SmallVector<int, 0> forward;
  /// Scratch bytes at a time: a stage's transient beyond its values.
  std::map<int64_t, int64_t> scratch;
  int64_t now = 0;
  int64_t recomputeFlops = 0;
};

} // namespace

int ChainSimulation::compute(unsigned stage, int input, bool barrier) {
  const ChainStage &s = chain[stage];
  if (input >= 0) {
    use(input, /*out=*/true, /*kept=*/false);
    ++instances[input].consumers;
    instances[input].stored |= barrier;
  }
  instances.push_back({stage, input, now, now, now});
  scratch[now] +=
      std::max<int64_t>(0, s.transientBytes - s.outBytes - s.keptBytes);
  return instances.size() - 1;
}

void ChainSimulation::use(int instance, bool out, bool kept) {
  Instance &value = instances[instance];
  if (out)
    value.outLast = std::max(value.outLast, now);
  if (kept)
    value.keptLast = std::max(value.keptLast, now);
}

/// The instance of `stage` that the backward op `reader` (the stage it
/// reads) reads, recomputing the segments it needs first, a clone per tick.
int ChainSimulation::resolve(unsigned stage, int64_t reader) {
  const Path &path = paths[stage];
  if (path.empty())
    return forward[stage];
  int input = -1;
  Segment *parent = nullptr;
  for (unsigned depth = 1; depth <= path.size(); ++depth) {
    Segment &segment = segments[Path(path.begin(), path.begin() + depth)];
    if (!segment.recomputed) {
      // The segment's input: the forward value before it at the top, else
      // the parent's clone before it, or the parent's own input.
      if (!parent)
        input = segment.lo == 0 ? -1 : forward[segment.lo - 1];
      else
        input = segment.lo == parent->lo ? parent->input
                                         : parent->clones.at(segment.lo - 1);
      segment.input = input;
      segment.recomputed = true;
      segment.madeFor = reader;
      // Early stop: up to the stage read, in order.
      int previous = input;
      for (unsigned j = segment.lo; j <= stage; ++j) {
        ++now;
        scratch[now] += chain[reader].backwardBytes;
        previous = compute(j, previous, /*barrier=*/j == segment.lo);
        segment.clones[j] = previous;
        recomputeFlops = addFlops(recomputeFlops, chain[j].flops);
      }
    }
    int clone = segment.clones.at(stage);
    // A clone serves every reader at its own depth, and the reader it was
    // made for at any depth.
    if (depth == path.size() || segment.madeFor == reader)
      return clone;
    parent = &segment;
  }
  llvm_unreachable("the loop returns at the path's depth");
}

std::optional<ChainPlan> ChainSimulation::run(ArrayRef<Path> stagePaths) {
  paths = stagePaths;
  unsigned n = chain.size();
  if (paths.size() != n)
    return std::nullopt;
  // Segments must be contiguous runs of stages.
  std::map<Path, unsigned> counts;
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned depth = 1; depth <= paths[i].size(); ++depth) {
      Path prefix(paths[i].begin(), paths[i].begin() + depth);
      auto [it, inserted] = segments.try_emplace(prefix);
      if (inserted)
        it->second.lo = i;
      it->second.hi = i;
      ++counts[prefix];
    }
  }
  for (auto &[prefix, segment] : segments)
    if (counts[prefix] != segment.hi - segment.lo + 1)
      return std::nullopt;

  // The forward.
  for (unsigned i = 0; i < n; ++i) {
    now = i;
    forward.push_back(compute(i, i == 0 ? -1 : forward[i - 1]));
  }
  // The backward, stage by stage in reverse.
  for (unsigned i = n; i-- > 0;) {
    if (!chain[i].isRead())
      continue;
    // Recomputations first, each a tick, then the reader.
    int instance = resolve(i, /*reader=*/i);
    ++now;
    scratch[now] += chain[i].backwardBytes;
    use(instance, chain[i].outRead, chain[i].keptBytes > 0);
    instances[instance].stored |= chain[i].outRead;
    ++now;
    scratch[now] += chain[i].afterBytes;
  }

  // Sweep the intervals. In creation order, inputs first: whether each
  // instance was written into its input's buffer (which keeps it stored even
  // if fusion would compute it inside its reader), and whether it is fused.
  SmallVector<int64_t, 0> delta(now + 2, 0);
  SmallVector<bool, 0> fused(instances.size(), false);
  for (auto [index, value] : llvm::enumerate(instances)) {
    const ChainStage &s = chain[value.stage];
    bool inPlace = s.inPlace && value.input >= 0 && !fused[value.input] &&
                   instances[value.input].outLast == value.from;
    fused[index] =
        s.fusedOut && !value.stored && value.consumers == 1 && !inPlace;
    int64_t outBytes = fused[index] ? 0 : s.outBytes;
    delta[value.from] += outBytes + s.keptBytes;
    delta[value.outLast + 1] -= outBytes;
    delta[value.keptLast + 1] -= s.keptBytes;
    if (inPlace) {
      int64_t shared = chain[instances[value.input].stage].outBytes;
      delta[value.from] -= shared;
      delta[value.from + 1] += shared;
    }
  }
  ChainPlan plan;
  plan.paths.assign(paths.begin(), paths.end());
  plan.recomputeFlops = recomputeFlops;
  int64_t live = 0;
  for (int64_t t = 0; t <= now; ++t) {
    live += delta[t];
    auto it = scratch.find(t);
    plan.peakBytes =
        std::max(plan.peakBytes, live + (it == scratch.end() ? 0 : it->second));
  }
  return plan;
}

std::optional<ChainPlan> remat::evaluateChainPlan(ArrayRef<ChainStage> chain,
                                                  ArrayRef<Path> paths) {
  return ChainSimulation(chain).run(paths);
}

//===----------------------------------------------------------------------===//
// forEachNestedPlan
//===----------------------------------------------------------------------===//

namespace {

/// The enumeration's state: the plan being filled and a stack of the
/// intervals still to fill after the current one.
class NestedPlanEnumerator {
public:
  NestedPlanEnumerator(unsigned n, unsigned maxDepth,
                       llvm::function_ref<void(ArrayRef<Path>)> visit)
      : paths(n), maxDepth(maxDepth), visit(visit) {}

  void run() {
    if (paths.empty()) {
      visit(paths);
      return;
    }
    fill({/*lo=*/0,
          /*s=*/0,
          /*t=*/unsigned(paths.size() - 1),
          {},
          /*whole=*/true});
  }

private:
  /// Stages [s, t] still to fill at the level of `prefix`, whose interval
  /// starts at `lo`; `whole`: a segment may span the whole level.
  struct Pending {
    unsigned lo, s, t;
    Path prefix;
    bool whole;
  };

  void fill(Pending level) {
    if (level.s > level.t) {
      // This level is done: resume the enclosing one.
      if (pending.empty()) {
        visit(paths);
        return;
      }
      Pending next = pending.back();
      pending.pop_back();
      fill(next);
      pending.push_back(std::move(next));
      return;
    }
    // Stage s kept at this level.
    paths[level.s] = level.prefix;
    fill({level.lo, level.s + 1, level.t, level.prefix, level.whole});
    if (level.prefix.size() >= maxDepth)
      return;
    // A segment [s, e] nested here; the rest of this level after it.
    for (unsigned e = level.s; e <= level.t; ++e) {
      if (!level.whole && level.s == level.lo && e == level.t)
        continue;
      Path inner = level.prefix;
      inner.push_back(nextId++);
      for (unsigned i = level.s; i <= e; ++i)
        paths[i] = inner;
      pending.push_back({level.lo, e + 1, level.t, level.prefix, level.whole});
      fill({level.s, level.s, e, inner, /*whole=*/false});
      pending.pop_back();
    }
  }

  SmallVector<Path, 0> paths;
  SmallVector<Pending, 0> pending;
  unsigned maxDepth;
  int64_t nextId = 0;
  llvm::function_ref<void(ArrayRef<Path>)> visit;
};

} // namespace

void remat::forEachNestedPlan(unsigned n, unsigned maxDepth,
                              llvm::function_ref<void(ArrayRef<Path>)> visit) {
  NestedPlanEnumerator(n, maxDepth, visit).run();
}

//===----------------------------------------------------------------------===//
// ChainPlanner
//===----------------------------------------------------------------------===//

static constexpr int64_t kInfeasible = std::numeric_limits<int64_t>::max() / 4;

/// The option the dynamic program chose for the sub-chain [s, t]: keep stage
/// s, or nest the segment [s, split - 1]; `fuse`: the output before the
/// rest is fused into the rest's first stage, which must then be kept.
struct ChainPlanner::Choice {
  bool keep = true;
  bool fuse = false;
  unsigned split = 0;
};

ChainPlanner::ChainPlanner(ArrayRef<ChainStage> chain, unsigned maxUnits)
    : stages(chain.begin(), chain.end()), n(chain.size()) {
  // The unit: the sizes' common divisor when the peak fits in maxUnits of
  // it (exact), else the peak's maxUnits-th part (sizes rounded up).
  int64_t divisor = 0, bound = 0, widest = 0;
  for (const ChainStage &s : stages) {
    for (int64_t size : {s.outBytes, s.keptBytes, s.transientBytes,
                         s.backwardBytes, s.afterBytes})
      divisor = std::gcd(divisor, size);
    bound += s.outBytes + s.keptBytes;
    widest =
        std::max({widest, s.transientBytes + s.backwardBytes, s.afterBytes});
  }
  bound += widest;
  quantum = std::max<int64_t>(1, divisor);
  if (bound / quantum > maxUnits)
    quantum = (bound + maxUnits - 1) / maxUnits;
  units = static_cast<unsigned>((bound + quantum - 1) / quantum);
  auto toUnits = [&](int64_t bytes) { return (bytes + quantum - 1) / quantum; };
  for (const ChainStage &s : stages) {
    out.push_back(toUnits(s.outBytes));
    kept.push_back(toUnits(s.keptBytes));
    transient.push_back(toUnits(s.transientBytes));
    backward.push_back(toUnits(s.backwardBytes));
    after.push_back(toUnits(s.afterBytes));
  }
  prefixFlops.assign(n + 1, 0);
  for (unsigned i = 0; i < n; ++i)
    prefixFlops[i + 1] = prefixFlops[i] + stages[i].flops;
  lastRead.assign(n * n, -1);
  for (unsigned s = 0; s < n; ++s)
    for (unsigned t = s; t < n; ++t)
      lastRead[s * n + t] = stages[t].isRead()
                                ? static_cast<int>(t)
                                : (t > s ? lastRead[s * n + t - 1] : -1);
  solve();
}

int64_t &ChainPlanner::entry(Input input, unsigned s, unsigned t, unsigned m) {
  return cost[((size_t(input) * n + s) * n + t) * (units + 1) + m];
}

int64_t ChainPlanner::entry(Input input, unsigned s, unsigned t,
                            unsigned m) const {
  return cost[((size_t(input) * n + s) * n + t) * (units + 1) + m];
}

int64_t ChainPlanner::topEntry(Input input, unsigned s, unsigned m) const {
  if (s == n)
    return 0;
  return top[(size_t(input) * n + s) * (units + 1) + m];
}

int64_t ChainPlanner::inputBytes(Input input, unsigned s) const {
  return input != Free || s == 0 ? 0 : out[s - 1];
}

/// One call of bestLevel: the stages [s, t] at one level within `m` units,
/// their input, and the best cost found so far with its choice.
struct ChainPlanner::Level {
  Level(const ChainPlanner &planner, Input input, unsigned s, unsigned t,
        unsigned m, bool isTop, Choice *choice)
      : planner(planner), input(input), s(s), t(t), m(m), isTop(isTop),
        choice(choice), in(planner.inputBytes(input, s)),
        overhead(isTop ? 0 : planner.backward[t]) {}

  const ChainPlanner &planner;
  Input input;
  unsigned s, t, m;
  bool isTop;
  Choice *choice;
  /// The input's bytes (inputBytes).
  int64_t in;
  /// The backward's own values while this level runs its forward: those of
  /// the stage whose reader recomputes it.
  int64_t overhead;
  int64_t best = kInfeasible;

  /// Takes `option` if `value` is below the best so far.
  void consider(int64_t value, Choice option) {
    if (value < best) {
      best = value;
      if (choice)
        *choice = option;
    }
  }
  /// The cost of the stages [from, t] after this level's first segment,
  /// within `limit` units, their input live as `restInput`.
  int64_t rest(Input restInput, unsigned from, int64_t limit) const {
    if (limit < 0)
      return kInfeasible;
    if (from > t)
      return 0;
    return isTop ? planner.topEntry(restInput, from, limit)
                 : planner.entry(restInput, from, t, limit);
  }
  /// The forward FLOPs of the stages [from, to] at this level.
  int64_t flopsOf(unsigned from, unsigned to) const {
    return isTop ? 0 : planner.prefixFlops[to + 1] - planner.prefixFlops[from];
  }
  /// Whether stage j's output may be fused into stage j + 1 at this level.
  bool fusible(unsigned j) const { return planner.stages[j].fusedOut && j < t; }
};

/// The cheapest way to process the stages [s, t] at one level within `m`
/// units, their input live: `Held` by the caller throughout, `Free` (counted
/// here and freed once read) or `Fused` into stage s (no bytes; stage s must
/// be kept). At a recomputation (`!isTop`) the stages' forward FLOPs count,
/// and stage t, the one the backward reads first, is kept; at the forward
/// level (`isTop`, t = n - 1) they are free and a segment may end at the
/// last stage.
int64_t ChainPlanner::bestLevel(Input input, unsigned s, unsigned t, unsigned m,
                                bool isTop, Choice *choice) const {
  Level level(*this, input, s, t, m, isTop, choice);
  considerKeeping(level);
  if (input != Fused)
    considerNesting(level);
  return level.best;
}

/// Keeps stage s: what the backward reads of it stays live over the rest.
void ChainPlanner::considerKeeping(Level &level) const {
  unsigned s = level.s, m = level.m;
  const ChainStage &stage = stages[s];
  int64_t keptHere = kept[s] + (stage.outRead ? out[s] : 0);
  // Written into its stored input's buffer if this is the input's last use;
  // then the output is stored in that buffer, fusible or not.
  bool joins = stage.inPlace && level.input == Free && s > 0;
  int64_t inAtStage = joins ? 0 : level.in;
  // Its reader comes after the rest, with what it keeps live, then the
  // backward's values after it.
  if (stage.isRead() && (keptHere + backward[s] > m || after[s] > m))
    return;
  // Its output stored, or fused into the next stage, which is then kept.
  for (bool fuse : {false, true}) {
    if (fuse && (!level.fusible(s) || stage.outRead || joins))
      continue;
    if (inAtStage + transient[s] - (fuse ? out[s] : 0) + level.overhead > m)
      continue;
    Input next = fuse ? Fused : stage.outRead ? Held : Free;
    int64_t later = level.rest(next, s + 1, int64_t(m) - keptHere);
    if (later < kInfeasible)
      level.consider(level.flopsOf(s, s) + later, {true, fuse, 0});
  }
}

/// Nests the segment [s, split - 1]: runs it keeping nothing but its input,
/// processes the rest, then recomputes it up to its last read stage. In the
/// run, each stage's output dies at the next stage, fused into it if it can
/// be; the last one's may be fused into the rest's first stage.
void ChainPlanner::considerNesting(Level &level) const {
  unsigned s = level.s, t = level.t, m = level.m;
  int64_t in = level.in, overhead = level.overhead;
  int64_t running = 0;
  bool previousStored = false;
  unsigned end = level.isTop ? t + 1 : t;
  for (unsigned split = s + 1; split <= end; ++split) {
    unsigned j = split - 1;
    bool runJoins = j > s && stages[j].inPlace && previousStored;
    int64_t previous = j == s || !previousStored || runJoins ? 0 : out[j - 1];
    int64_t stored = previous + transient[j];
    bool canFuse = level.fusible(j) && !runJoins;
    int64_t fused = canFuse ? stored - out[j] : stored;
    if (in + std::max(running, fused) + overhead > m)
      break;
    int last = lastRead[s * n + j];
    int64_t inner = last < 0 ? 0 : entry(level.input, s, last, m);
    for (bool fuse : {false, true}) {
      if (fuse && !canFuse)
        continue;
      if (inner >= kInfeasible ||
          in + std::max(running, fuse ? fused : stored) + overhead > m)
        continue;
      int64_t later = level.rest(fuse ? Fused : Free, split, int64_t(m) - in);
      if (later < kInfeasible)
        level.consider(level.flopsOf(s, j) + later + inner,
                       {false, fuse, split});
    }
    // Stage j is inside the longer segments, fused if it can be.
    running = std::max(running, fused);
    previousStored = !canFuse;
  }
}

void ChainPlanner::solve() {
  if (n == 0)
    return;
  size_t width = units + 1;
  cost.assign(3 * size_t(n) * n * width, kInfeasible);
  top.assign(3 * size_t(n) * width, kInfeasible);
  // Recomputations of [s, t] with t read, shortest first: every option reads
  // strictly shorter sub-chains.
  for (unsigned length = 1; length <= n; ++length)
    for (unsigned s = 0; s + length <= n; ++s) {
      unsigned t = s + length - 1;
      if (!stages[t].isRead())
        continue;
      for (Input input : {Free, Held, Fused})
        for (unsigned m = 0; m <= units; ++m)
          entry(input, s, t, m) = bestLevel(input, s, t, m, false, nullptr);
    }
  for (unsigned s = n; s-- > 0;)
    for (Input input : {Free, Held, Fused})
      for (unsigned m = 0; m <= units; ++m)
        top[(size_t(input) * n + s) * width + m] =
            bestLevel(input, s, n - 1, m, true, nullptr);
}

std::optional<int64_t> ChainPlanner::getCost(unsigned limit) const {
  if (n == 0)
    return 0;
  int64_t value = topEntry(Free, 0, std::min(limit, units));
  if (value >= kInfeasible)
    return std::nullopt;
  return value;
}

void ChainPlanner::extract(Input input, unsigned s, unsigned t, unsigned m,
                           bool isTop, Path prefix, int64_t &nextId,
                           ChainPlan &plan) const {
  while (s <= t) {
    Choice choice;
    bestLevel(input, s, t, m, isTop, &choice);
    if (choice.keep) {
      plan.paths[s] = prefix;
      const ChainStage &stage = stages[s];
      m -= kept[s] + (stage.outRead ? out[s] : 0);
      input = choice.fuse ? Fused : stage.outRead ? Held : Free;
      ++s;
      continue;
    }
    unsigned j = choice.split - 1;
    Path inner = prefix;
    inner.push_back(nextId++);
    for (unsigned i = s; i <= j; ++i)
      plan.paths[i] = inner;
    if (int last = lastRead[s * n + j]; last >= 0)
      extract(input, s, last, m, /*isTop=*/false, inner, nextId, plan);
    m -= inputBytes(input, s);
    input = choice.fuse ? Fused : Free;
    s = choice.split;
  }
}

std::optional<ChainPlan> ChainPlanner::getPlan(unsigned limit) const {
  std::optional<int64_t> value = getCost(limit);
  if (!value)
    return std::nullopt;
  ChainPlan plan;
  plan.paths.resize(n);
  int64_t nextId = 0;
  if (n > 0)
    extract(Free, 0, n - 1, std::min(limit, units), /*isTop=*/true, {}, nextId,
            plan);
  if (std::optional<ChainPlan> measured = evaluateChainPlan(stages, plan.paths))
    plan.peakBytes = measured->peakBytes;
  plan.recomputeFlops = *value;
  return plan;
}

std::vector<ChainPlan> ChainPlanner::getFront(unsigned maxPlans) const {
  // The limits where the cost drops.
  SmallVector<unsigned, 0> limits;
  int64_t previous = kInfeasible;
  for (unsigned m = 0; m <= units; ++m) {
    std::optional<int64_t> value = getCost(m);
    if (value && *value < previous) {
      limits.push_back(m);
      previous = *value;
    }
  }
  std::vector<ChainPlan> plans;
  if (limits.empty() || maxPlans == 0)
    return plans;
  size_t count = std::min<size_t>(maxPlans, limits.size());
  for (size_t k = 0; k < count; ++k) {
    // Spread over the front, both ends included.
    size_t index =
        count == 1 ? limits.size() - 1 : k * (limits.size() - 1) / (count - 1);
    if (std::optional<ChainPlan> plan = getPlan(limits[index]))
      plans.push_back(std::move(*plan));
  }
  return plans;
}
