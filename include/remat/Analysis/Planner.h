//===- Planner.h - Choosing what to recompute -------------------*- C++ -*-===//
//
// Declares the marking problem of a training step (which forward ops go into
// which checkpoint segment) and the planners of `-remat-mark`: sequential,
// sqrt, selective and budget. Every plan is measured exactly, by applying
// -remat-checkpoint's plan to a copy of the function and computing the same
// memory profile -remat-report prints.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_PLANNER_H
#define REMAT_ANALYSIS_PLANNER_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

namespace remat {

/// A marking: for each decision op of a MarkingProblem, the checkpoint
/// segment it goes into, or kSaved.
using Marking = llvm::SmallVector<int64_t, 0>;
constexpr int64_t kSaved = -1;

/// What a marking costs, as -remat-report measures it after
/// -remat-checkpoint.
struct PlanCost {
  int64_t peakBytes = 0;
  int64_t recomputeFlops = 0;
};

/// The forward ops of one training step that a planner can put into
/// segments, and an exact evaluator of markings.
///
/// Decision ops are the top-level forward ops that -remat-checkpoint can
/// recompute (clonable, not stateful random, not `remat.policy = "save"`)
/// and that cost something to keep: constants and `tensor.empty` are not
/// decisions, they follow the first marked op that uses them.
class MarkingProblem {
public:
  /// Builds the problem of `function`, which must hold a `remat.backward`.
  /// Existing marks are ignored: every marking replaces them.
  static llvm::FailureOr<MarkingProblem>
  build(mlir::FunctionOpInterface function);

  size_t size() const { return ops.size(); }
  llvm::ArrayRef<mlir::Operation *> getOps() const { return ops; }
  int64_t getFlops(size_t index) const { return flops[index]; }
  /// Bytes of the decision op's results.
  int64_t getBytes(size_t index) const { return bytes[index]; }

  /// Measures `marking` exactly: copies the function, writes the marks,
  /// applies CheckpointPlan and computes the MemoryProfile and the FLOPs of
  /// the clones. O(n log n) in the function's size.
  PlanCost evaluate(llvm::ArrayRef<int64_t> marking) const;

  /// Writes `marking` on the function: removes every `remat.segment` and
  /// `remat.policy` of its forward ops, then marks the decision ops (and the
  /// free ops that follow them). Ops in `saveInSegment` keep segment 0 and
  /// get `remat.policy = "save"` (selective checkpointing's spelling).
  void apply(llvm::ArrayRef<int64_t> marking,
             llvm::ArrayRef<bool> saveInSegment = {}) const;

private:
  void writeMarks(mlir::Block &body, llvm::ArrayRef<int64_t> marking,
                  llvm::ArrayRef<bool> saveInSegment) const;

  mlir::FunctionOpInterface function;
  llvm::SmallVector<mlir::Operation *, 0> ops;
  llvm::SmallVector<int64_t, 0> flops;
  llvm::SmallVector<int64_t, 0> bytes;
  /// Position in the body block of each decision op.
  llvm::SmallVector<unsigned, 0> positions;
};

/// `checkpoint_sequential`: the decision ops split, in program order, into
/// `segments` contiguous runs of about equal FLOPs (equal counts when no op
/// costs anything); the last run stays saved, as torch leaves it.
Marking planSequential(const MarkingProblem &problem, unsigned segments);

/// The number of layers L of the forward for the sqrt policy: one more than
/// the number of layer boundaries, a boundary being a decision op whose
/// result bytes are at most half of both neighbours'; failing two such
/// boundaries, the number of heavy ops (FLOPs at least a tenth of the
/// largest op's).
unsigned countLayers(const MarkingProblem &problem);

/// Chen et al. 2016: sequential with N = ceil(sqrt(L)) segments.
Marking planSqrt(const MarkingProblem &problem);

/// Selective checkpointing: every decision op in segment 0 (recomputed)
/// except those whose op name is in `saveOps` or whose `remat.name` is in
/// `saveNames`, which are saved. Returns the marking with the saved ops
/// flagged in `saved`.
Marking planSelective(const MarkingProblem &problem,
                      const llvm::StringSet<> &saveOps,
                      const llvm::StringSet<> &saveNames,
                      llvm::SmallVectorImpl<bool> &saved);

/// Knobs of the budget planner.
struct BudgetOptions {
  /// Up to this many decision ops the planner enumerates every subset of
  /// recomputed ops (as one segment): the answer is optimal over them.
  unsigned exactLimit = 14;
  /// Beyond, at most this many markings are evaluated.
  unsigned maxEvaluations = 1500;
};

/// One evaluated marking.
struct PlanPoint {
  Marking marking;
  PlanCost cost;
};

/// The budget policy: minimize recompute FLOPs subject to static peak <= B.
///
/// The planner evaluates a set of candidate markings that does not depend on
/// the budget, then answers each budget with the cheapest candidate that
/// fits, so more budget never means more recompute. Up to
/// BudgetOptions::exactLimit decision ops the candidates are all 2^n subsets
/// (one segment): exact. Beyond, the candidates are the markings of the
/// other policies (sequential for every N up to 64, the same with heavy ops
/// saved, sqrt, selective with heavy ops saved), prefixes of the ops by
/// bytes per FLOP, and greedy refinements of the Pareto front that unmark
/// one op at a time while the peak does not grow; its answer is on or below
/// every other policy's, but the gap to the optimum is not bounded (the
/// proven lower bound is 0 unless the budget is at least the unmarked peak).
class BudgetPlanner {
public:
  BudgetPlanner(const MarkingProblem &problem, BudgetOptions options = {});

  bool isExact() const { return exact; }
  /// The smallest peak among the candidates (the smallest reachable peak
  /// when exact).
  int64_t getMinPeak() const { return minPeak; }
  /// The peak without any mark.
  int64_t getUnmarkedPeak() const { return unmarkedPeak; }
  size_t getNumEvaluations() const { return candidates.size(); }
  llvm::ArrayRef<PlanPoint> getCandidates() const { return candidates; }

  /// The cheapest candidate with peak <= `budget`, fewest FLOPs first, then
  /// lowest peak; std::nullopt if none fits.
  std::optional<PlanPoint> solve(int64_t budget) const;

  /// A lower bound on the recompute FLOPs of any marking with peak <=
  /// `budget`: the optimum when exact, 0 otherwise.
  int64_t getLowerBound(int64_t budget) const;

private:
  void add(Marking marking);

  const MarkingProblem &problem;
  bool exact = false;
  int64_t minPeak = 0;
  int64_t unmarkedPeak = 0;
  llvm::SmallVector<PlanPoint, 0> candidates;
};

} // namespace remat

#endif // REMAT_ANALYSIS_PLANNER_H
