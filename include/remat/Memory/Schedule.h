//===- Schedule.h - Op orders of least peak memory --------------*- C++ -*-===//
//
// Declares the scheduling problem of a bufferized training step: the ops of
// its entry block that must keep some order (items), the heap buffers they
// touch, and the order of least peak live bytes among the orders the
// dependences allow. -remat-schedule builds the problem from the IR and
// reorders the ops; the lifetimes it minimizes are the ones the arena plan
// places (remat::collectStepBuffers), so the schedule's peak is the plan's
// lower bound.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_SCHEDULE_H
#define REMAT_ANALYSIS_SCHEDULE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace remat {

/// Items 0..n-1 in their given order, the dependences between them and the
/// buffers each touches. A buffer is live from the first item of an order
/// that touches it to the last one (to the end when it escapes); the peak of
/// an order is the most bytes live during one item.
struct ScheduleProblem {
  /// For each item, the items that must come before it (lower indices: the
  /// given order is an order the dependences allow).
  llvm::SmallVector<llvm::SmallVector<unsigned, 4>> predecessors;
  /// For each item, the buffers it touches (no duplicates).
  llvm::SmallVector<llvm::SmallVector<unsigned, 4>> touches;
  /// For each buffer, its bytes and whether it is live to the end once
  /// touched (a buffer the step returns).
  llvm::SmallVector<int64_t> bytes;
  llvm::SmallVector<bool> escapes;

  /// In-place reuse (-remat-reuse-buffers), which follows the schedule: in
  /// an order where `item` is the first item to touch `result` and the last
  /// to touch the bytes of one of `sources` (tried in turn; those bytes may
  /// already hold earlier results), `result` lives in those bytes instead
  /// of its own, which must be as many.
  struct Reuse {
    unsigned item;
    unsigned result;
    llvm::SmallVector<unsigned, 2> sources;
  };
  llvm::SmallVector<Reuse> reuses;

  unsigned getNumItems() const { return predecessors.size(); }
  unsigned addItem();
  unsigned addBuffer(int64_t bytes, bool escapes);
};

/// Returns true if `order` is a permutation of the items that every
/// dependence allows.
bool isValidOrder(const ScheduleProblem &problem,
                  llvm::ArrayRef<unsigned> order);

/// Returns the peak of `order`: the most bytes live during one item, in-place
/// reuse applied. O(n + sum of touches + sum of reuse sources).
int64_t getSchedulePeak(const ScheduleProblem &problem,
                        llvm::ArrayRef<unsigned> order);

/// An order of least peak without in-place reuse (problem.reuses ignored:
/// whether a reuse happens depends on the order within a set), by dynamic
/// programming over the sets of items an order can have run first (at most
/// `maxStates` of them, each a 64-bit set); nullopt when there are more than 64
/// items or more states.
std::optional<llvm::SmallVector<unsigned>>
scheduleExactly(const ScheduleProblem &problem, size_t maxStates = 1 << 18);

/// How the greedy list scheduler picks among the items it may run next.
enum class GreedyKey {
  /// Fewest bytes newly live, then most bytes freed.
  LeastNewBytes,
  /// Most bytes freed net of the bytes newly live, then fewest new bytes.
  MostNetFreed,
};

/// A list schedule: repeatedly runs the ready item first by `key`, ties by
/// the given order. O((n + e) log n) for e dependences and touches.
llvm::SmallVector<unsigned> scheduleGreedily(const ScheduleProblem &problem,
                                             GreedyKey key);

/// Lowers the peak by moving items within their dependences: an item that
/// opens or closes a buffer live at a peak position, alone or with up to
/// three consecutive neighbours before or after it, moves before the first
/// item or after the last one the block could swap with, whichever lowers
/// the peak. Each round weighs every such item of the order it starts with
/// and applies each improving move as it finds it; the search stops after a
/// round with no move, `maxRounds` rounds or `maxTrials` orders weighed.
/// An order is weighed on the window of positions the move permutes, the
/// rest of the order summed up once per accepted move (O(n)), except where a
/// reuse decision in the window changes (then O(n + e)): the same objective
/// as weighing the whole order, so the same result.
void improveSchedule(const ScheduleProblem &problem,
                     llvm::SmallVectorImpl<unsigned> &order, unsigned maxRounds,
                     size_t maxTrials = 1 << 16);

/// How far scheduleForPeak searches.
struct ScheduleOptions {
  /// The most items it orders by scheduleExactly.
  unsigned maxExactItems = 24;
  /// The rounds of improveSchedule on each candidate, for up to
  /// maxSearchItems items.
  unsigned searchRounds = 1024;
  /// The most orders improveSchedule weighs, O(n + e) each.
  size_t searchTrials = 1 << 16;
  unsigned maxSearchItems = 4096;
};

/// The order of least peak among: the given order, the exact one (up to
/// options.maxExactItems items), both greedy ones, each improved by
/// improveSchedule; ties keep the earlier candidate, the given order first.
llvm::SmallVector<unsigned>
scheduleForPeak(const ScheduleProblem &problem,
                const ScheduleOptions &options = {});

} // namespace remat

#endif // REMAT_ANALYSIS_SCHEDULE_H
