//===- Schedule.cpp - Op orders of least peak memory ----------------------===//
//
// This file implements the solvers of the scheduling problem: the peak of an
// order, an exact dynamic program over the sets of items run first, greedy
// list schedules and a local search that moves items and short blocks.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Schedule.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVectorExtras.h"

#include <algorithm>
#include <queue>
#include <tuple>

using namespace llvm;
using namespace remat;

unsigned ScheduleProblem::addItem() {
  predecessors.emplace_back();
  touches.emplace_back();
  return predecessors.size() - 1;
}

unsigned ScheduleProblem::addBuffer(int64_t size, bool escape) {
  bytes.push_back(size);
  escapes.push_back(escape);
  return bytes.size() - 1;
}

bool remat::isValidOrder(const ScheduleProblem &problem,
                         ArrayRef<unsigned> order) {
  unsigned n = problem.getNumItems();
  if (order.size() != n)
    return false;
  SmallVector<int64_t> position(n, -1);
  for (auto [index, item] : enumerate(order)) {
    if (item >= n || position[item] >= 0)
      return false;
    position[item] = index;
  }
  for (unsigned item = 0; item < n; ++item)
    for (unsigned before : problem.predecessors[item])
      if (position[before] > position[item])
        return false;
  return true;
}

namespace {

/// Inverts `lists` (for each source, its targets below `numTargets`): for
/// each target, its sources in increasing order.
SmallVector<SmallVector<unsigned, 4>>
invert(ArrayRef<SmallVector<unsigned, 4>> lists, size_t numTargets) {
  SmallVector<SmallVector<unsigned, 4>> inverse(numTargets);
  for (auto [source, targets] : enumerate(lists))
    for (unsigned target : targets)
      inverse[target].push_back(source);
  return inverse;
}

/// The buffers' live ranges in an order, in-place reuse applied: each
/// buffer's own first and last touch (position and item), and the buffer
/// whose bytes it lives in (its holder: itself, or the first buffer of the
/// chain of reuses it joined), whose range is the chain's. One Ranges
/// weighs many orders of the same problem: `compute` reuses its storage, so
/// the local search's trials allocate nothing.
struct Ranges {
  SmallVector<int64_t> first, last;
  SmallVector<unsigned> firstUser, lastUser;
  SmallVector<unsigned> holder;
  /// For a holder: the last touch of any buffer in its bytes, and whether
  /// one of them escapes.
  SmallVector<int64_t> chainLast;
  SmallVector<bool> chainEscapes;
  /// The live bytes of the order, position by position, and scratch.
  SmallVector<int64_t> live, delta;

  explicit Ranges(const ScheduleProblem &problem);
  Ranges(const ScheduleProblem &problem, ArrayRef<unsigned> order)
      : Ranges(problem) {
    compute(order);
  }
  /// Fills the ranges and `live` for `order`. O(n + touches + reuse
  /// sources).
  void compute(ArrayRef<unsigned> order);
  /// The positions the holder `buffer`'s bytes are live in: [begin, end).
  std::pair<int64_t, int64_t> getLiveRange(unsigned buffer, size_t n) const {
    return {first[buffer], chainEscapes[buffer] ? n : chainLast[buffer] + 1};
  }

private:
  const ScheduleProblem &problem;
  /// For each item, its reuses (indices into problem.reuses, in order).
  SmallVector<SmallVector<unsigned, 1>> reusesOf;
};

Ranges::Ranges(const ScheduleProblem &problem) : problem(problem) {
  if (problem.reuses.empty())
    return;
  reusesOf.resize(problem.getNumItems());
  for (auto [index, reuse] : enumerate(problem.reuses))
    reusesOf[reuse.item].push_back(index);
}

void Ranges::compute(ArrayRef<unsigned> order) {
  size_t numBuffers = problem.bytes.size();
  first.assign(numBuffers, -1);
  last.assign(numBuffers, -1);
  firstUser.assign(numBuffers, 0);
  lastUser.assign(numBuffers, 0);
  for (auto [position, item] : enumerate(order))
    for (unsigned buffer : problem.touches[item]) {
      if (first[buffer] < 0) {
        first[buffer] = position;
        firstUser[buffer] = item;
      }
      last[buffer] = position;
      lastUser[buffer] = item;
    }
  holder.resize(numBuffers);
  for (unsigned buffer = 0; buffer < numBuffers; ++buffer)
    holder[buffer] = buffer;
  chainLast.assign(last.begin(), last.end());
  chainEscapes.assign(problem.escapes.begin(), problem.escapes.end());
  // The reuses in the order of their items, as the pass meets them.
  if (!reusesOf.empty()) {
    for (auto [at, item] : enumerate(order)) {
      for (unsigned index : reusesOf[item]) {
        const ScheduleProblem::Reuse &reuse = problem.reuses[index];
        unsigned result = reuse.result;
        if (first[result] != static_cast<int64_t>(at) ||
            holder[result] != result)
          continue;
        for (unsigned source : reuse.sources) {
          unsigned chain = holder[source];
          if (chain == result || chainEscapes[chain] ||
              chainLast[chain] != static_cast<int64_t>(at))
            continue;
          holder[result] = chain;
          chainLast[chain] = std::max(chainLast[chain], last[result]);
          chainEscapes[chain] = chainEscapes[chain] || chainEscapes[result];
          break;
        }
      }
    }
  }

  delta.assign(order.size() + 1, 0);
  for (size_t buffer = 0; buffer < numBuffers; ++buffer) {
    if (first[buffer] < 0 || holder[buffer] != buffer)
      continue;
    auto [begin, end] = getLiveRange(buffer, order.size());
    delta[begin] += problem.bytes[buffer];
    delta[end] -= problem.bytes[buffer];
  }
  live.resize(order.size());
  int64_t level = 0;
  for (size_t position = 0; position < order.size(); ++position)
    live[position] = level += delta[position];
}

/// What the local search minimizes, in order: the peak, the positions at
/// the peak, the sum of live bytes over positions.
using Objective = std::tuple<int64_t, int64_t, int64_t>;

Objective getObjective(ArrayRef<int64_t> live) {
  int64_t peak = 0, atPeak = 0, area = 0;
  for (int64_t bytes : live) {
    if (bytes > peak) {
      peak = bytes;
      atPeak = 0;
    }
    atPeak += bytes == peak;
    area += bytes;
  }
  return {peak, atPeak, area};
}

} // namespace

int64_t remat::getSchedulePeak(const ScheduleProblem &problem,
                               ArrayRef<unsigned> order) {
  Ranges ranges(problem, order);
  return ranges.live.empty() ? 0 : *llvm::max_element(ranges.live);
}

std::optional<SmallVector<unsigned>>
remat::scheduleExactly(const ScheduleProblem &problem, size_t maxStates) {
  unsigned n = problem.getNumItems();
  if (n > 64)
    return std::nullopt;
  size_t numBuffers = problem.bytes.size();
  SmallVector<uint64_t> predecessorMask(n, 0);
  for (unsigned item = 0; item < n; ++item)
    for (unsigned before : problem.predecessors[item])
      predecessorMask[item] |= uint64_t(1) << before;
  SmallVector<uint64_t> userMask(numBuffers, 0);
  for (unsigned item = 0; item < n; ++item)
    for (unsigned buffer : problem.touches[item])
      userMask[buffer] |= uint64_t(1) << item;

  // The least peak of an order that runs a set of items first, and the
  // last item of such an order.
  struct State {
    int64_t peak;
    unsigned last;
  };
  DenseMap<uint64_t, State> states;
  SmallVector<uint64_t> layer = {0}, nextLayer;
  states[0] = {0, ~0u};
  BitVector live(numBuffers);
  for (unsigned size = 0; size < n; ++size) {
    nextLayer.clear();
    for (uint64_t set : layer) {
      int64_t peakSoFar = states[set].peak;
      // Buffers touched before and after this point, or escaping.
      live.reset();
      int64_t liveBytes = 0;
      for (size_t buffer = 0; buffer < numBuffers; ++buffer)
        if ((userMask[buffer] & set) &&
            (problem.escapes[buffer] || (userMask[buffer] & ~set))) {
          live.set(buffer);
          liveBytes += problem.bytes[buffer];
        }
      for (unsigned item = 0; item < n; ++item) {
        uint64_t bit = uint64_t(1) << item;
        if ((set & bit) || (predecessorMask[item] & ~set))
          continue;
        int64_t during = liveBytes;
        for (unsigned buffer : problem.touches[item])
          if (!live.test(buffer))
            during += problem.bytes[buffer];
        State candidate{std::max(peakSoFar, during), item};
        auto [it, inserted] = states.try_emplace(set | bit, candidate);
        if (inserted) {
          if (states.size() > maxStates)
            return std::nullopt;
          nextLayer.push_back(set | bit);
        } else if (candidate.peak < it->second.peak) {
          it->second = candidate;
        }
      }
    }
    std::swap(layer, nextLayer);
  }
  SmallVector<unsigned> order(n);
  uint64_t set = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
  for (unsigned index = n; index-- > 0;) {
    unsigned item = states[set].last;
    order[index] = item;
    set &= ~(uint64_t(1) << item);
  }
  return order;
}

SmallVector<unsigned> remat::scheduleGreedily(const ScheduleProblem &problem,
                                              GreedyKey key) {
  unsigned n = problem.getNumItems();
  size_t numBuffers = problem.bytes.size();
  SmallVector<SmallVector<unsigned, 4>> successors =
      invert(problem.predecessors, n);
  SmallVector<unsigned> waiting =
      map_to_vector(problem.predecessors,
                    [](const auto &list) { return unsigned(list.size()); });
  SmallVector<SmallVector<unsigned, 4>> users =
      invert(problem.touches, numBuffers);
  SmallVector<unsigned> remainingUsers = map_to_vector(
      users, [](const auto &list) { return unsigned(list.size()); });
  BitVector open(numBuffers), done(n);

  // A ready item's key; entries of the queue whose version is stale are
  // skipped (every change of a key pushes a new entry).
  using Key = std::tuple<int64_t, int64_t, unsigned>;
  auto getKey = [&](unsigned item) -> Key {
    int64_t newBytes = 0, freed = 0;
    for (unsigned buffer : problem.touches[item]) {
      if (!open.test(buffer))
        newBytes += problem.bytes[buffer];
      if (remainingUsers[buffer] == 1 && !problem.escapes[buffer])
        freed += problem.bytes[buffer];
    }
    if (key == GreedyKey::LeastNewBytes)
      return {newBytes, -freed, item};
    return {newBytes - freed, newBytes, item};
  };
  using Entry = std::pair<Key, unsigned>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  SmallVector<unsigned> version(n, 0);
  auto push = [&](unsigned item) {
    queue.push({getKey(item), ++version[item]});
  };
  auto refresh = [&](unsigned item) {
    if (!done.test(item) && waiting[item] == 0)
      push(item);
  };
  for (unsigned item = 0; item < n; ++item)
    if (waiting[item] == 0)
      push(item);

  SmallVector<unsigned> order;
  order.reserve(n);
  while (!queue.empty()) {
    auto [itemKey, itemVersion] = queue.top();
    queue.pop();
    unsigned item = std::get<2>(itemKey);
    if (done.test(item) || itemVersion != version[item])
      continue;
    done.set(item);
    order.push_back(item);
    for (unsigned buffer : problem.touches[item]) {
      if (!open.test(buffer)) {
        open.set(buffer);
        for (unsigned user : users[buffer])
          refresh(user);
      }
      if (--remainingUsers[buffer] == 1)
        for (unsigned user : users[buffer])
          refresh(user);
    }
    for (unsigned after : successors[item])
      if (--waiting[after] == 0)
        push(after);
  }
  return order;
}

namespace {

/// The most consecutive items improveSchedule moves at once.
constexpr unsigned kMaxBlock = 4;

/// The peak, the positions at the peak and the sum of `live` over positions
/// [begin, end), as getObjective counts them.
struct LiveSummary {
  int64_t peak = 0, atPeak = 0, area = 0;

  void add(int64_t bytes) {
    if (bytes > peak) {
      peak = bytes;
      atPeak = 0;
    }
    atPeak += bytes == peak;
    area += bytes;
  }
  /// The summary of two disjoint sets of positions.
  static LiveSummary merge(const LiveSummary &a, const LiveSummary &b) {
    LiveSummary merged;
    merged.peak = std::max(a.peak, b.peak);
    merged.atPeak = (a.peak == merged.peak ? a.atPeak : 0) +
                    (b.peak == merged.peak ? b.atPeak : 0);
    merged.area = a.area + b.area;
    return merged;
  }
};

/// Weighs the orders improveSchedule tries: the current order with the
/// items of one window of positions [lo, hi) permuted (a block moved). A
/// trial costs O(window + its touches, reuses and chains), not O(n): the
/// rest of the order is summed up once per current order.
///
/// Why only the window changes. Outside it every position holds the same
/// item, so a buffer's first (last) touch changes only if it lies in the
/// window, and stays there. Reuse decisions before `lo` read first and last
/// touches before `lo` only (a chain that dies at p < lo has all its lasts
/// before lo), so they are the same. If the decisions of the window's items
/// are the same too, those after `hi` are (by induction: each reads
/// holders decided identically, and a chain's last is either at or after
/// `hi` and the same, or before `hi` and so never the position read), so
/// every chain has the same members and its range differs only inside the
/// window. weigh() simulates the window's reuses from the state at `lo`; if
/// a decision differs, or the current order has a chain that another chain
/// joined (whose escape flags depend on the order of the joins), it weighs
/// the whole trial order with Ranges instead.
class TrialEvaluator {
public:
  explicit TrialEvaluator(const ScheduleProblem &problem)
      : problem(problem), current(problem), whole(problem) {
    size_t numBuffers = problem.bytes.size();
    touchedStamp.assign(numBuffers, 0);
    windowFirst.assign(numBuffers, 0);
    windowLast.assign(numBuffers, 0);
    holderStamp.assign(numBuffers, 0);
    simHolder.assign(numBuffers, 0);
    lastStamp.assign(numBuffers, 0);
    simLast.assign(numBuffers, 0);
    simEscapes.assign(numBuffers, false);
    rootStamp.assign(numBuffers, 0);
    if (!problem.reuses.empty()) {
      reusesOf.resize(problem.getNumItems());
      for (auto [index, reuse] : enumerate(problem.reuses))
        reusesOf[reuse.item].push_back(index);
    }
  }

  /// Makes `order` the current order. O(n + touches + reuse sources).
  void reset(ArrayRef<unsigned> order) {
    size_t n = order.size(), numBuffers = problem.bytes.size();
    current.compute(order);
    prefix.assign(n + 1, LiveSummary());
    suffix.assign(n + 1, LiveSummary());
    summarize(0, n);
    // The members of each chain, its holder aside.
    memberBegin.assign(numBuffers + 1, 0);
    for (unsigned buffer = 0; buffer < numBuffers; ++buffer)
      if (current.holder[buffer] != buffer)
        ++memberBegin[current.holder[buffer] + 1];
    for (unsigned buffer = 0; buffer < numBuffers; ++buffer)
      memberBegin[buffer + 1] += memberBegin[buffer];
    members.assign(memberBegin.back(), 0);
    SmallVector<unsigned> next(memberBegin.begin(), memberBegin.end() - 1);
    for (unsigned buffer = 0; buffer < numBuffers; ++buffer)
      if (current.holder[buffer] != buffer)
        members[next[current.holder[buffer]]++] = buffer;
    nested = llvm::any_of(seq<unsigned>(0, numBuffers), [&](unsigned buffer) {
      unsigned holder = current.holder[buffer];
      return holder != buffer &&
             (current.holder[holder] != holder || !getMembers(buffer).empty());
    });
  }

  /// Makes the order weighed last, `order` now, the current order: in
  /// O(window + n) cheap steps when weigh() took the window's path (the
  /// chains are the same, the touches and live bytes changed inside the
  /// window only), else by reset().
  void accept(ArrayRef<unsigned> order) {
    if (!windowPath)
      return reset(order);
    unsigned lo = windowLo, hi = windowLo + windowLive.size();
    for (unsigned buffer : touched) {
      int64_t first = getNewFirst(buffer, lo), last = getNewLast(buffer, hi);
      current.first[buffer] = first;
      current.last[buffer] = last;
      current.firstUser[buffer] = order[first];
      current.lastUser[buffer] = order[last];
      current.chainLast[buffer] = last;
    }
    for (unsigned buffer : touched) {
      unsigned root = current.holder[buffer];
      int64_t chainLast = current.last[root];
      for (unsigned member : getMembers(root))
        chainLast = std::max(chainLast, current.last[member]);
      current.chainLast[root] = chainLast;
    }
    llvm::copy(windowLive, current.live.begin() + lo);
    summarize(lo, hi);
  }

  const Ranges &getCurrentRanges() const { return current; }
  const Objective &getCurrentObjective() const { return objective; }

  /// The objective of the current order `order` with positions [lo, lo +
  /// window.size()) holding `window`, a permutation of their items.
  Objective weigh(ArrayRef<unsigned> order, unsigned lo,
                  ArrayRef<unsigned> window) {
    unsigned hi = lo + window.size();
    size_t n = order.size();
    ++stamp;
    windowPath = false;
    // The window's buffers and their first and last touches in it.
    touched.clear();
    for (auto [offset, item] : enumerate(window))
      for (unsigned buffer : problem.touches[item]) {
        if (touchedStamp[buffer] != stamp) {
          touchedStamp[buffer] = stamp;
          windowFirst[buffer] = lo + offset;
          touched.push_back(buffer);
        }
        windowLast[buffer] = lo + offset;
      }
    if (!reusesOf.empty() && (nested || !simulateReuses(lo, hi, window)))
      return weighWhole(order, lo, window);

    // Each chain with a touched member: its old range out, its new one in.
    delta.assign(window.size() + 1, 0);
    auto addRange = [&](int64_t begin, int64_t end, int64_t bytes) {
      begin = std::max<int64_t>(begin, lo);
      end = std::min<int64_t>(end, hi);
      if (begin >= end)
        return;
      delta[begin - lo] += bytes;
      delta[end - lo] -= bytes;
    };
    for (unsigned buffer : touched) {
      unsigned root = current.holder[buffer];
      if (rootStamp[root] == stamp)
        continue;
      rootStamp[root] = stamp;
      int64_t bytes = problem.bytes[root];
      auto [oldBegin, oldEnd] = current.getLiveRange(root, n);
      addRange(oldBegin, oldEnd, -bytes);
      int64_t newEnd = n;
      if (!current.chainEscapes[root]) {
        int64_t chainLast = getNewLast(root, hi);
        for (unsigned member : getMembers(root))
          chainLast = std::max(chainLast, getNewLast(member, hi));
        newEnd = chainLast + 1;
      }
      addRange(getNewFirst(root, lo), newEnd, bytes);
    }
    LiveSummary inside;
    int64_t change = 0;
    windowLive.resize(window.size());
    for (unsigned offset = 0; offset < window.size(); ++offset) {
      change += delta[offset];
      windowLive[offset] = current.live[lo + offset] + change;
      inside.add(windowLive[offset]);
    }
    windowPath = true;
    windowLo = lo;
    LiveSummary all =
        LiveSummary::merge(LiveSummary::merge(prefix[lo], inside), suffix[hi]);
    return {all.peak, all.atPeak, all.area};
  }

private:
  /// Updates the summaries before and from each position after the live
  /// bytes of positions [lo, hi) changed.
  void summarize(size_t lo, size_t hi) {
    size_t n = current.live.size();
    for (size_t index = lo; index < n; ++index) {
      prefix[index + 1] = prefix[index];
      prefix[index + 1].add(current.live[index]);
    }
    for (size_t index = hi; index-- > 0;) {
      LiveSummary one;
      one.add(current.live[index]);
      suffix[index] = LiveSummary::merge(one, suffix[index + 1]);
    }
    objective = {prefix[n].peak, prefix[n].atPeak, prefix[n].area};
  }

  ArrayRef<unsigned> getMembers(unsigned holder) const {
    return ArrayRef<unsigned>(members).slice(
        memberBegin[holder], memberBegin[holder + 1] - memberBegin[holder]);
  }
  /// A buffer's first and last touch in the trial order.
  int64_t getNewFirst(unsigned buffer, unsigned lo) const {
    return touchedStamp[buffer] == stamp && current.first[buffer] >= lo
               ? windowFirst[buffer]
               : current.first[buffer];
  }
  int64_t getNewLast(unsigned buffer, unsigned hi) const {
    return touchedStamp[buffer] == stamp && current.last[buffer] < hi
               ? windowLast[buffer]
               : current.last[buffer];
  }

  /// Runs Ranges::compute's reuse decisions over the window's items in the
  /// trial order, from the state before `lo` (the current order's: the
  /// same decisions, with the trial's last touches); returns true if every
  /// buffer first touched in the window ends in the chain it had.
  bool simulateReuses(unsigned lo, unsigned hi, ArrayRef<unsigned> window) {
    auto holderOf = [&](unsigned buffer) {
      if (holderStamp[buffer] == stamp)
        return simHolder[buffer];
      return current.first[buffer] >= 0 && current.first[buffer] < lo
                 ? current.holder[buffer]
                 : buffer;
    };
    // A chain's last touch and escape flag as of `lo`: its own and those of
    // the members that joined it before.
    auto loadChain = [&](unsigned chain) {
      if (lastStamp[chain] == stamp)
        return;
      lastStamp[chain] = stamp;
      int64_t last = getNewLast(chain, hi);
      bool escapes = problem.escapes[chain];
      for (unsigned member : getMembers(chain))
        if (current.first[member] < lo) {
          last = std::max(last, getNewLast(member, hi));
          escapes = escapes || problem.escapes[member];
        }
      simLast[chain] = last;
      simEscapes[chain] = escapes;
    };
    for (auto [offset, item] : enumerate(window)) {
      int64_t at = lo + offset;
      for (unsigned index : reusesOf[item]) {
        const ScheduleProblem::Reuse &reuse = problem.reuses[index];
        unsigned result = reuse.result;
        if (getNewFirst(result, lo) != at || holderOf(result) != result)
          continue;
        for (unsigned source : reuse.sources) {
          unsigned chain = holderOf(source);
          if (chain == result)
            continue;
          loadChain(chain);
          if (simEscapes[chain] || simLast[chain] != at)
            continue;
          loadChain(result);
          holderStamp[result] = stamp;
          simHolder[result] = chain;
          simLast[chain] = std::max(simLast[chain], getNewLast(result, hi));
          simEscapes[chain] = simEscapes[chain] || simEscapes[result];
          break;
        }
      }
    }
    return llvm::all_of(touched, [&](unsigned buffer) {
      return current.first[buffer] < lo ||
             holderOf(buffer) == current.holder[buffer];
    });
  }

  /// The objective of the whole trial order, by Ranges.
  Objective weighWhole(ArrayRef<unsigned> order, unsigned lo,
                       ArrayRef<unsigned> window) {
    trial.assign(order.begin(), order.end());
    llvm::copy(window, trial.begin() + lo);
    whole.compute(trial);
    return getObjective(whole.live);
  }

  const ScheduleProblem &problem;
  SmallVector<SmallVector<unsigned, 1>> reusesOf;
  /// The current order's ranges, the live bytes before each position and
  /// from each position on, and its objective.
  Ranges current;
  SmallVector<LiveSummary> prefix, suffix;
  Objective objective;
  /// The chains' members (CSR), and whether one member holds others.
  SmallVector<unsigned> memberBegin, members;
  bool nested = false;
  /// Per-trial scratch, valid where its stamp is the trial's.
  uint64_t stamp = 0;
  SmallVector<uint64_t> touchedStamp, holderStamp, lastStamp, rootStamp;
  SmallVector<int64_t> windowFirst, windowLast, simLast;
  SmallVector<unsigned> simHolder, touched;
  SmallVector<bool> simEscapes;
  SmallVector<int64_t> delta;
  /// Whether the last weigh() took the window's path, and its window's
  /// first position and live bytes.
  bool windowPath = false;
  unsigned windowLo = 0;
  SmallVector<int64_t> windowLive;
  SmallVector<unsigned> trial;
  Ranges whole;
};

/// Moves the items at positions [begin, end) of `order`, keeping their
/// order, to the earliest or the latest place their dependences on the other
/// items allow, whichever first gives an objective below `best`; on success
/// updates `order`, the items' `position`s, `best` and the evaluator's
/// current order. `window` is scratch.
bool tryMoveBlock(const ScheduleProblem &problem,
                  ArrayRef<SmallVector<unsigned, 4>> successors,
                  MutableArrayRef<unsigned> position,
                  SmallVectorImpl<unsigned> &order, unsigned begin,
                  unsigned end, Objective &best, TrialEvaluator &evaluator,
                  SmallVectorImpl<unsigned> &window, size_t &trialsLeft) {
  unsigned length = end - begin, n = order.size();
  // Insertion indices into the order without the block.
  unsigned earliest = 0, latest = n - length;
  for (unsigned index = begin; index < end; ++index) {
    unsigned item = order[index];
    for (unsigned before : problem.predecessors[item])
      if (position[before] < begin)
        earliest = std::max(earliest, position[before] + 1);
    for (unsigned after : successors[item])
      if (position[after] >= end)
        latest = std::min(latest, position[after] - length);
  }
  for (unsigned to : {earliest, latest}) {
    if (to == begin || trialsLeft == 0)
      continue;
    --trialsLeft;
    // The positions the move permutes: the block and the items it passes.
    unsigned lo;
    window.clear();
    if (to < begin) {
      lo = to;
      window.append(order.begin() + begin, order.begin() + end);
      window.append(order.begin() + to, order.begin() + begin);
    } else {
      lo = begin;
      window.append(order.begin() + end, order.begin() + to + length);
      window.append(order.begin() + begin, order.begin() + end);
    }
    Objective objective = evaluator.weigh(order, lo, window);
    if (objective < best) {
      best = objective;
      llvm::copy(window, order.begin() + lo);
      for (auto [offset, item] : enumerate(window))
        position[item] = lo + offset;
      evaluator.accept(order);
      return true;
    }
  }
  return false;
}

} // namespace

void remat::improveSchedule(const ScheduleProblem &problem,
                            SmallVectorImpl<unsigned> &order,
                            unsigned maxRounds, size_t maxTrials) {
  unsigned n = problem.getNumItems();
  SmallVector<SmallVector<unsigned, 4>> successors =
      invert(problem.predecessors, n);
  size_t numBuffers = problem.bytes.size();

  TrialEvaluator evaluator(problem);
  evaluator.reset(order);
  Objective best = evaluator.getCurrentObjective();
  SmallVector<unsigned> window, position(n);
  SmallVector<int64_t> peaksBefore(n + 1);
  size_t trialsLeft = maxTrials;
  for (unsigned round = 0; round < maxRounds && trialsLeft > 0; ++round) {
    for (auto [index, item] : enumerate(order))
      position[item] = index;
    const Ranges &ranges = evaluator.getCurrentRanges();
    int64_t peak = std::get<0>(best);
    if (peak == 0)
      return;
    // peaksBefore[i]: the peak positions before position i.
    for (unsigned index = 0; index < n; ++index)
      peaksBefore[index + 1] =
          peaksBefore[index] + (ranges.live[index] == peak);
    // The items that open or close a buffer whose bytes are live at a peak
    // position: moving one of them later or earlier past the peak is what
    // can lower it.
    SetVector<unsigned> candidates;
    for (size_t buffer = 0; buffer < numBuffers; ++buffer) {
      if (ranges.first[buffer] < 0)
        continue;
      auto [begin, end] = ranges.getLiveRange(ranges.holder[buffer], n);
      if (peaksBefore[end] == peaksBefore[begin])
        continue;
      candidates.insert(ranges.firstUser[buffer]);
      candidates.insert(ranges.lastUser[buffer]);
    }

    // One pass over the candidates, each improving move applied as it is
    // found. Restarting at the first candidate after each move weighed the
    // same failing moves in every round: DenseNet-121's step took 0.55 s
    // to plan instead of 0.15 s, for an arena no smaller.
    bool improved = false;
    for (unsigned item : candidates) {
      unsigned from = position[item];
      bool moved = false;
      // The item alone, or with up to kMaxBlock - 1 neighbours before or
      // after it (a fill and the matmul that accumulates into its buffer,
      // which open the buffer together).
      for (unsigned length = 1; length <= kMaxBlock && !moved; ++length) {
        SmallVector<unsigned, 2> begins;
        if (from + 1 >= length)
          begins.push_back(from + 1 - length); // the item last
        if (length > 1 && from + length <= n)
          begins.push_back(from); // the item first
        for (unsigned begin : begins) {
          if (!tryMoveBlock(problem, successors, position, order, begin,
                            begin + length, best, evaluator, window,
                            trialsLeft))
            continue;
          moved = improved = true;
          break;
        }
      }
    }
    if (!improved)
      return;
  }
}

SmallVector<unsigned> remat::scheduleForPeak(const ScheduleProblem &problem,
                                             const ScheduleOptions &options) {
  unsigned n = problem.getNumItems();
  SmallVector<SmallVector<unsigned>> candidates;
  candidates.push_back(to_vector(seq<unsigned>(0, n)));
  if (n <= options.maxExactItems)
    if (std::optional<SmallVector<unsigned>> exact = scheduleExactly(problem))
      candidates.push_back(std::move(*exact));
  candidates.push_back(scheduleGreedily(problem, GreedyKey::LeastNewBytes));
  candidates.push_back(scheduleGreedily(problem, GreedyKey::MostNetFreed));
  // The local search costs O(n + e) a trial move.
  unsigned rounds = n <= options.maxSearchItems ? options.searchRounds : 0;
  SmallVector<unsigned> best;
  int64_t bestPeak = 0;
  for (SmallVector<unsigned> &candidate : candidates) {
    improveSchedule(problem, candidate, rounds, options.searchTrials);
    int64_t peak = getSchedulePeak(problem, candidate);
    if (best.empty() || peak < bestPeak) {
      best = std::move(candidate);
      bestPeak = peak;
    }
  }
  return best;
}
