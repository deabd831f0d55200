//===- Planner.h - Choosing what to recompute -------------------*- C++ -*-===//
//
// Declares the marking problem of a training step (which forward ops go into
// which checkpoint segment) and the planners of `-remat-mark`: sequential,
// sqrt, selective and budget. Every marking is measured exactly, by
// applying -remat-checkpoint's checkpoint plan to a copy of the function and
// computing the same memory profile -remat-report prints.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_PLANNER_H
#define REMAT_TRANSFORMS_PLANNER_H

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/MemoryPlan.h"
#include "remat/Planning/ChainPlanner.h"
#include "remat/Planning/Measure.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <optional>
#include <string>

namespace remat {

/// A marking: for each decision op of a MarkingProblem, its segment path
/// (ChainPlanner.h).
using Marking = llvm::SmallVector<SegmentPath, 0>;

/// The cost of `function` checkpointed by -remat-checkpoint's own rewrite
/// on a copy made for planning, after `mark` rewrites the copy's marks
/// (measureRewrittenCopy). Thread-safe: reads `function` only.
llvm::FailureOr<StepCost> measureCheckpointedCopy(
    mlir::FunctionOpInterface function,
    llvm::function_ref<void(mlir::FunctionOpInterface)> mark,
    const MemoryPlanPipeline &pipeline, bool keepReturned, std::string &error);

/// The first op of each top-level checkpoint segment of `function`, by
/// segment, if it is marked and not yet checkpointed (no op is a clone and
/// no stateful random op is marked); none otherwise.
std::map<int64_t, mlir::Operation *>
getSegmentsToCheckpoint(mlir::FunctionOpInterface function);

/// What recomputing the top-level segments of a marked step does to its
/// static peak, each measured on -remat-checkpoint's rewrite of a copy.
struct SegmentEffects {
  /// The step with no segment recomputed (measured only on request).
  std::optional<int64_t> unmarkedPeak;
  /// Every segment recomputed.
  int64_t allPeak = 0;
  /// Each segment recomputed alone: its first op and the peak.
  std::map<int64_t, std::pair<mlir::Operation *, int64_t>> alone;
};

/// Measures the SegmentEffects of `function`'s segments
/// (getSegmentsToCheckpoint; std::nullopt when there are none) on the MLIR
/// context's thread pool.
llvm::FailureOr<std::optional<SegmentEffects>>
measureSegmentEffects(mlir::func::FuncOp function,
                      const MemoryPlanPipeline &pipeline, bool measureUnmarked,
                      std::string &error);

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
  /// Existing marks are kept only as getAnnotatedMarking: every marking
  /// replaces them.
  static llvm::FailureOr<MarkingProblem>
  build(mlir::FunctionOpInterface function);

  size_t size() const { return ops.size(); }
  /// Operations in the function, nested ones included: what one evaluation
  /// walks.
  size_t getNumFunctionOps() const { return numFunctionOps; }
  llvm::ArrayRef<mlir::Operation *> getOps() const { return ops; }
  int64_t getFlops(size_t index) const { return flops[index]; }
  /// Bytes of the decision op's results.
  int64_t getBytes(size_t index) const { return bytes[index]; }
  /// The marking the function carried when the problem was built (the
  /// model's own checkpoints, as exported): each decision op's
  /// `remat.segment` path, empty for one without. All empty if none had one.
  llvm::ArrayRef<SegmentPath> getAnnotatedMarking() const { return annotated; }

  /// The saved-bytes relaxation of the budget problem: rows of the form
  /// `sum_j coefficient_j * (1 - x_j) + constant <= peak`, x_j = 1 when
  /// decision op j is recomputed, that every marking satisfies with its
  /// exact peak (see Planner.cpp for why). One row for the start of the
  /// backward region (every saved value is live there), one per decision op
  /// in the forward (the saved values before it, plus its own result).
  /// Built on first use: its size is quadratic in the decision ops, which
  /// only the budget planner needs.
  struct RelaxationRow {
    llvm::SmallVector<std::pair<unsigned, int64_t>, 0> terms;
    int64_t constant = 0;
  };
  llvm::ArrayRef<RelaxationRow> getRelaxation() const;
  /// The largest constant of the relaxation's rows: bytes live at once in
  /// every marking, so no peak is below it. O(ops), without the rows.
  int64_t getRelaxationPeakBound() const;

  /// The decision ops as a chain (ChainPlanner.h), in program order: a stage
  /// per op, or, beyond `maxStages` ops, per run of consecutive ops (about
  /// equal counts). Stage k holds the decision ops [firstOp[k],
  /// firstOp[k + 1]); the last entry of `firstOp` is size().
  std::vector<ChainStage>
  getChain(unsigned maxStages, llvm::SmallVectorImpl<size_t> &firstOp) const;

  /// Measures `marking` exactly: copies the function, writes the marks,
  /// applies CheckpointPlan and computes the MemoryProfile and the FLOPs of
  /// the clones. O(n log n) in the function's size.
  StepCost evaluate(llvm::ArrayRef<SegmentPath> marking) const;

  /// evaluate() of each of `markings`, in order, on the MLIR context's
  /// thread pool: each evaluation copies the function, so they share
  /// nothing, and the results are those of one thread.
  llvm::SmallVector<StepCost>
  evaluateAll(llvm::ArrayRef<Marking> markings) const;

  /// Measures `marking` as the lowering will allocate it: writes it on a
  /// copy of the function and its callees (copyForPlanning), applies
  /// CheckpointPlan there and plans the copy's memory with `pipeline`, so
  /// the peak is the generated code's. Costs one bufferization of the
  /// function. Thread-safe: reads the function only.
  llvm::FailureOr<StepCost>
  measureOnMemoryPlan(llvm::ArrayRef<SegmentPath> marking,
                      const MemoryPlanPipeline &pipeline,
                      std::string &error) const;

  /// measureOnMemoryPlan of each of `markings`, in order, on the MLIR context's
  /// thread pool (one bufferized copy per marking and thread at once); the
  /// results are those of one thread.
  llvm::SmallVector<MeasuredCost>
  measureOnMemoryPlans(llvm::ArrayRef<Marking> markings,
                       const MemoryPlanPipeline &pipeline) const;

  /// Writes `marking` on the function: removes every `remat.segment` and
  /// `remat.policy` of its forward ops, then marks the decision ops (and the
  /// free ops that follow them). Ops in `saveInSegment` keep segment 0 and
  /// get `remat.policy = "save"` (selective checkpointing's spelling).
  void apply(llvm::ArrayRef<SegmentPath> marking,
             llvm::ArrayRef<bool> saveInSegment = {}) const;

private:
  void buildRelaxation() const;
  /// Calls `visit(decision, savedBytes, unsavedBytes)` for each forward op
  /// in order: `decision` is its index among the decision ops (none for the
  /// others), the bytes those of its results the backward region reads and
  /// of the others, counting only results with storage of their own.
  void walkRelaxation(
      llvm::function_ref<void(std::optional<unsigned>, int64_t, int64_t)> visit)
      const;
  void writeMarks(mlir::Block &body, llvm::ArrayRef<SegmentPath> marking,
                  llvm::ArrayRef<bool> saveInSegment) const;

  mlir::FunctionOpInterface function;
  llvm::SmallVector<mlir::Operation *, 0> ops;
  llvm::SmallVector<int64_t, 0> flops;
  llvm::SmallVector<int64_t, 0> bytes;
  /// Position in the body block of each decision op.
  llvm::SmallVector<unsigned, 0> positions;
  Marking annotated;
  size_t numFunctionOps = 0;
  /// mustKeepReturnedBuffers of the function in its module, which a copy
  /// for planning (without the callers) cannot tell.
  bool keepReturnedBuffers = false;
  mutable std::optional<llvm::SmallVector<RelaxationRow, 0>> relaxation;
};

/// `checkpoint_sequential`: the decision ops split, in program order, into
/// `segments` contiguous runs of about equal FLOPs (equal counts when no op
/// costs anything); the last run stays saved, as torch leaves it.
Marking planSequential(const MarkingProblem &problem, unsigned segments);

/// The most segments of the sequential markings the budget policy weighs
/// (its heuristic pool, and the markings it measures on memory plans besides
/// the model's).
constexpr unsigned kMaxSequentialSegments = 64;

/// The number of layers L of the forward for the sqrt policy: one more than
/// the number of layer boundaries, a boundary being a decision op whose
/// result bytes are at most half of both neighbours'; failing two such
/// boundaries, the number of heavy ops (FLOPs at least a tenth of the
/// largest op's).
unsigned countLayers(const MarkingProblem &problem);

/// Chen et al. 2016: sequential with N = ceil(sqrt(L)) segments.
Marking planSqrt(const MarkingProblem &problem);

/// The FLOPs per byte of its results from which a decision op is dense:
/// matmuls and convolutions over more than a few channels (a matmul's K / 2
/// in f32), far above elementwise ops and normalizations (a few FLOPs an
/// element).
constexpr int64_t kDenseFlopsPerByte = 8;

/// The dense decision ops: at least kDenseFlopsPerByte FLOPs per byte of
/// their results, the ops whose results selective plans save.
llvm::SmallVector<bool> findDenseOps(const MarkingProblem &problem);

/// Everything but the heavy ops (FLOPs at least a tenth of the largest op's)
/// recomputed, as JAX's dots_saveable: the cheap recomputation PyTorch's
/// default partition also does (its memory budget 1), and the top of
/// -remat-mark's budget-between scale when its peak is below the unmarked.
Marking planHeavySaved(const MarkingProblem &problem);

/// The markings of the policies without options, which every planner that
/// compares markings measures too, so that it is never above them:
/// everything recomputed, planHeavySaved and sqrt.
llvm::SmallVector<Marking> getPolicyMarkings(const MarkingProblem &problem);

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
  /// Up to this many decision ops (and within exactLimit) it also measures
  /// every well-nested plan of contiguous segments, at any depth
  /// (forEachNestedPlan: 25216 plans for 6 ops), so the answer is also
  /// optimal over nested segments.
  unsigned nestedLimit = 6;
  /// Beyond, the heuristic pool measures at most
  /// max(minEvaluations, poolWork / ops) markings for a function of `ops`
  /// operations, and never more than this many (getPoolLimit). The unmarked
  /// step and the chain planner's plans count.
  unsigned maxEvaluations = 1500;
  /// Whether to measure the heuristic pool beyond exactLimit (off: the ILP
  /// alone, as the unit test checks it).
  bool heuristicPool = true;
  /// Up to this many decision ops (and beyond exactLimit) each budget is
  /// solved by the ILP (when remat is built with GLPK): exact if it closes
  /// its gap within the limits below.
  unsigned ilpLimit = 64;
  /// Markings the ILP may measure for one budget.
  unsigned ilpMaxEvaluations = 400;
  /// Wall-clock limit of the solver, in milliseconds, for one budget.
  unsigned ilpTimeLimitMs = 2000;
  /// The chain dynamic program (ChainPlanner): at most this many plans of
  /// its Pareto front are measured and join the candidates (0: off), over
  /// at most `chainStages` stages and `chainUnits` memory units.
  unsigned chainPlans = 48;
  unsigned chainStages = 64;
  unsigned chainUnits = 384;
  /// One evaluation walks the whole function (O(ops log ops)), so the pool
  /// measures fewer markings of a larger function: in all, about poolWork
  /// op-walks (1500 evaluations up to 1000 ops, 150 at 10k, the minimum
  /// from 187k), the pool's time O(max(poolWork, minEvaluations * ops) log
  /// ops), linear beyond.
  uint64_t poolWork = 1500000;
  unsigned minEvaluations = 8;

  /// The most markings the heuristic pool measures for a function of `ops`
  /// operations; at least 1 (the unmarked step).
  unsigned getPoolLimit(size_t ops) const;
};

/// One evaluated marking.
struct MeasuredMarking {
  Marking marking;
  StepCost cost;
};

/// The cheapest of `points` with peak <= `budget` (findCheapestWithin of
/// their costs); null if none fits.
const MeasuredMarking *
findCheapestWithin(llvm::ArrayRef<MeasuredMarking> points, int64_t budget);

/// How a budget was answered.
enum class BudgetMethod {
  /// Every subset of decision ops measured.
  Exhaustive,
  /// The pool's best already meets the saved-bytes relaxation's bound:
  /// optimal, no ILP needed.
  Bound,
  /// The ILP over the saved-bytes relaxation, each solution measured, closed
  /// its gap: optimal.
  Ilp,
  /// The heuristic pool (and the ILP's measured solutions if it ran out of
  /// limits); the lower bound is the relaxation's.
  Heuristic,
};

/// The answer to one budget.
struct BudgetAnswer {
  /// The cheapest marking found with peak <= budget; none if none was.
  std::optional<MeasuredMarking> best;
  /// No marking with peak <= budget recomputes fewer FLOPs.
  int64_t lowerBound = 0;
  /// True when no marking at all has peak <= budget (proven by the
  /// enumeration, the ILP or the relaxation).
  bool provenInfeasible = false;
  BudgetMethod method = BudgetMethod::Heuristic;
  /// Why the method is what it is (e.g. "built without GLPK").
  std::string note;
  /// Markings measured for this budget beyond the pool.
  unsigned evaluations = 0;
  bool isExact() const { return method != BudgetMethod::Heuristic; }
};

/// Returns true if remat was built with an ILP solver (GLPK).
bool hasIlpSolver();

/// The budget policy: minimize recompute FLOPs subject to static peak <= B.
///
/// Up to BudgetOptions::exactLimit decision ops the planner measures all 2^n
/// subsets (one segment), up to BudgetOptions::nestedLimit ops every nested
/// plan of contiguous segments as well, and answers each budget with the
/// cheapest that fits: exact over those markings. Beyond, it measures a pool of
/// heuristic markings that does not depend on the budget (the other policies'
/// plans, selective plans of the model's segments (the dense ops saved in
/// some or all of them), sequential for every N up to 64 as is and with the
/// heavy or the dense ops saved, prefixes by bytes per FLOP, greedy
/// refinements of the Pareto front), at
/// most BudgetOptions::getPoolLimit of them, in that order after the unmarked
/// step and the chain program's plans, so its answer is never above sqrt's
/// or everything recomputed. Up to BudgetOptions::ilpLimit ops,
/// with GLPK, a budget is then solved exactly by an ILP over a relaxation of
/// the peak (MarkingProblem::getRelaxation) whose every solution is measured,
/// an infeasible one cut off by a no-good constraint, until a measured solution
/// meets the ILP's bound (or the pool's best does): combinatorial Benders
/// decomposition. Whatever stops it, the ILP's bound is a proven lower bound;
/// without GLPK the bound is the best fractional knapsack bound of the
/// relaxation's rows.
class BudgetPlanner {
public:
  BudgetPlanner(const MarkingProblem &problem, BudgetOptions options = {});

  /// True when every budget is answered exactly by enumeration.
  bool isExact() const { return exhaustive; }
  /// The smallest peak among the measured markings (the smallest reachable
  /// peak when exhaustive).
  int64_t getMinPeak() const { return minPeak; }
  /// No marking has a peak below this (the relaxation's bound, or the
  /// smallest peak when exhaustive).
  int64_t getPeakLowerBound() const { return peakLowerBound; }
  /// The peak without any mark.
  int64_t getUnmarkedPeak() const { return unmarkedPeak; }
  size_t getNumEvaluations() const { return candidates.size(); }
  llvm::ArrayRef<MeasuredMarking> getCandidates() const { return candidates; }

  /// Answers `budget`: the cheapest marking found with peak <= `budget`
  /// (fewest FLOPs first, then lowest peak) and the proven lower bound.
  /// Markings the ILP measures join the pool.
  const BudgetAnswer &answer(int64_t budget);
  std::optional<MeasuredMarking> solve(int64_t budget) {
    return answer(budget).best;
  }
  int64_t getLowerBound(int64_t budget) { return answer(budget).lowerBound; }

private:
  void solveIlp(int64_t budget, BudgetAnswer &result);
  int64_t relaxationBound(int64_t budget, bool &infeasible) const;

  const MarkingProblem &problem;
  BudgetOptions options;
  bool exhaustive = false;
  int64_t minPeak = 0;
  int64_t peakLowerBound = 0;
  int64_t unmarkedPeak = 0;
  llvm::SmallVector<MeasuredMarking, 0> candidates;
  std::map<int64_t, BudgetAnswer> answers;
};

} // namespace remat

#endif // REMAT_TRANSFORMS_PLANNER_H
