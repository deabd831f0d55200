//===- Mark.cpp - Choose checkpoint segments by a policy ------------------===//
//
// This file implements -remat-mark: it checks the policy options, builds the
// marking problem of each training step, runs the chosen planner and writes
// its marks, with a remark stating the plan and its predicted cost.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Analysis/MemoryPlan.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Transforms/Passes.h"
#include "remat/Transforms/Planner.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#include <limits>
#include <set>

#define DEBUG_TYPE "remat-mark"

namespace remat {
#define GEN_PASS_DEF_REMATMARKPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct RematMarkPass : remat::impl::RematMarkPassBase<RematMarkPass> {
  using RematMarkPassBase::RematMarkPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    RematMarkPassBase::getDependentDialects(registry);
    registerCostModelExternalModels(registry);
    addPlanPipelineDialects(getPlanPipeline(planPipeline), registry);
  }

  /// Returns an error message if the options do not make a plan.
  std::string checkOptions() {
    if (policy == MarkPolicy::Sequential && segments == 0)
      return "policy=sequential needs segments=N with N >= 1";
    if (policy != MarkPolicy::Sequential && segments.hasValue())
      return "segments= is an option of policy=sequential only";
    if (policy != MarkPolicy::Selective &&
        (saveOps.hasValue() || saveNames.hasValue()))
      return "save-ops= and save-names= are options of policy=selective only";
    bool hasBytes = budgetBytes.hasValue(),
         hasFraction = budgetFraction.hasValue();
    bool hasBetween = budgetBetween.hasValue();
    int budgetOptions = hasBytes + hasFraction + hasBetween;
    if (policy != MarkPolicy::Budget && budgetOptions > 0)
      return "budget-bytes=, budget-fraction= and budget-between= are options "
             "of policy=budget only";
    if (policy == MarkPolicy::Budget) {
      if (budgetOptions != 1)
        return "policy=budget needs exactly one of budget-bytes=, "
               "budget-fraction= and budget-between=";
      if (hasBytes && budgetBytes <= 0)
        return "budget-bytes must be positive";
      if (hasFraction && !(budgetFraction > 0 && budgetFraction <= 1))
        return "budget-fraction must be in (0, 1]";
      if (hasBetween && !(budgetBetween >= 0 && budgetBetween <= 1))
        return "budget-between must be in [0, 1]";
    }
    return {};
  }

  /// The cost of `marking` on its memory plan; the model's, with a warning,
  /// when the plan cannot be made.
  PlanCost predictCost(const MarkingProblem &problem, const Marking &marking) {
    std::string error;
    FailureOr<PlanCost> cost =
        problem.evaluatePlanned(marking, getPlanPipeline(planPipeline), error);
    if (succeeded(cost))
      return *cost;
    emitWarning(getOperation().getLoc())
        << "-remat-mark: no memory plan, the predicted peak is the model's: "
        << error;
    return problem.evaluate(marking);
  }

  /// A marking measured on its memory plan, and the budget it answers.
  struct PlannedPoint {
    Marking marking;
    PlanCost cost;
    int64_t budget = 0;
  };

  /// The markings measured on their memory plans, at most `limit` (and at
  /// least two): the unmarked step; the model's Pareto front (fewest FLOPs
  /// first, each with a lower model peak than the ones before), spread
  /// evenly over the limit less the policies' plans (getPolicyMarkings),
  /// which come next so that the answer is never above theirs; then, up to
  /// the limit, the other markings by the model's peak, lowest first, since
  /// the model can err where the plan does not (it ranks a marking with the
  /// matmuls saved above one whose plan peaks higher).
  static SmallVector<Marking> getMeasured(const MarkingProblem &problem,
                                          ArrayRef<PlanPoint> candidates,
                                          unsigned limit) {
    limit = std::max(limit, 2u);
    SmallVector<const PlanPoint *> order;
    for (const PlanPoint &point : candidates)
      order.push_back(&point);
    llvm::sort(order, [](const PlanPoint *a, const PlanPoint *b) {
      return std::make_pair(a->cost.recomputeFlops, a->cost.peakBytes) <
             std::make_pair(b->cost.recomputeFlops, b->cost.peakBytes);
    });
    SmallVector<const PlanPoint *> front;
    for (const PlanPoint *point : order)
      if (front.empty() || point->cost.peakBytes < front.back()->cost.peakBytes)
        front.push_back(point);

    SmallVector<Marking> markings;
    std::set<Marking> chosen;
    auto add = [&](const Marking &marking) {
      if (markings.size() < limit && chosen.insert(marking).second)
        markings.push_back(marking);
    };
    SmallVector<Marking> policies = getPolicyMarkings(problem);
    add(Marking(problem.size()));
    size_t count = std::min<size_t>(
        front.size(), std::max<size_t>(limit - 1 - policies.size(), 1));
    for (size_t k = 0; k < count; ++k)
      add(front[count == 1 ? 0 : k * (front.size() - 1) / (count - 1)]
              ->marking);
    for (const Marking &marking : policies)
      add(marking);
    // Ties in the order the planner found them (the points are one array).
    llvm::sort(order, [](const PlanPoint *a, const PlanPoint *b) {
      return std::make_pair(a->cost.peakBytes, a) <
             std::make_pair(b->cost.peakBytes, b);
    });
    for (const PlanPoint *point : order)
      add(point->marking);
    return markings;
  }

  /// Measures `marking` and appends it to `points`: on its memory plan if
  /// `onPlans`, else on the model.
  LogicalResult measure(const MarkingProblem &problem, Marking marking,
                        bool onPlans, SmallVectorImpl<PlanPoint> &points) {
    if (!onPlans) {
      PlanCost cost = problem.evaluate(marking);
      points.push_back({std::move(marking), cost});
      return success();
    }
    std::string error;
    FailureOr<PlanCost> cost =
        problem.evaluatePlanned(marking, getPlanPipeline(planPipeline), error);
    if (failed(cost))
      return getOperation().emitError()
             << "-remat-mark: policy=budget needs the memory plan: " << error;
    LLVM_DEBUG(llvm::dbgs()
               << "remat-mark: measured marking " << points.size()
               << ": planned peak " << cost->peakBytes
               << " bytes, recompute FLOPs " << cost->recomputeFlops << "\n");
    points.push_back({std::move(marking), *cost});
    return success();
  }

  /// The markings policy=budget chooses among, the unmarked step first:
  /// with a `planLimit` of at least two, those of getMeasured, measured on
  /// their memory plans; else, on the model, the policies' markings and
  /// every marking the search evaluated, at the cost it found.
  LogicalResult measurePoints(const MarkingProblem &problem,
                              const BudgetPlanner &planner, unsigned planLimit,
                              SmallVectorImpl<PlanPoint> &points) {
    if (planLimit >= 2) {
      for (Marking &marking :
           getMeasured(problem, planner.getCandidates(), planLimit))
        if (failed(
                measure(problem, std::move(marking), /*onPlans=*/true, points)))
          return failure();
      return success();
    }
    (void)measure(problem, Marking(problem.size()), /*onPlans=*/false, points);
    for (Marking &marking : getPolicyMarkings(problem))
      (void)measure(problem, std::move(marking), /*onPlans=*/false, points);
    for (const PlanPoint &point : planner.getCandidates())
      points.push_back(point);
    return success();
  }

  /// Measures on their memory plans the sequential markings (2 to 64
  /// segments) not in `points` that could answer the budget more cheaply
  /// than `best` (fewer recompute FLOPs on the model; all without a
  /// `best`), within the work left to plans beyond the `planLimit` already
  /// measured: sequential(N)'s planned peak can be below every marking the
  /// model's front led to, and the answer is never to be above another
  /// policy's.
  LogicalResult measureSequential(const MarkingProblem &problem,
                                  const PlanPoint *best, unsigned planLimit,
                                  size_t ops,
                                  SmallVectorImpl<PlanPoint> &points) {
    uint64_t room = static_cast<uint64_t>(planWork) / ops;
    if (room <= planLimit)
      return success();
    room -= planLimit;
    int64_t bound =
        best ? best->cost.recomputeFlops : std::numeric_limits<int64_t>::max();
    std::set<Marking> seen;
    for (const PlanPoint &point : points)
      seen.insert(point.marking);
    size_t last = std::min<size_t>(kMaxSequentialSegments, problem.size());
    for (unsigned segments = 2; segments <= last && room > 0; ++segments) {
      Marking marking = planSequential(problem, segments);
      if (!seen.insert(marking).second ||
          problem.evaluate(marking).recomputeFlops >= bound)
        continue;
      --room;
      if (failed(
              measure(problem, std::move(marking), /*onPlans=*/true, points)))
        return failure();
    }
    return success();
  }

  /// The budget the options ask for, in the bytes of `points` (whose first
  /// is the unmarked step): budget-bytes, a fraction of the unmarked peak,
  /// or a point between `lowest`, the lowest peak of `points`, and the top
  /// of the scale: the lower of the unmarked peak and the peak of `cheap`,
  /// if measured.
  int64_t computeBudget(ArrayRef<PlanPoint> points, const Marking &cheap,
                        int64_t &lowest) {
    int64_t unmarked = points.front().cost.peakBytes;
    int64_t top = unmarked;
    lowest = unmarked;
    for (const PlanPoint &point : points) {
      lowest = std::min(lowest, point.cost.peakBytes);
      if (point.marking == cheap)
        top = std::min(top, point.cost.peakBytes);
    }
    LLVM_DEBUG(llvm::dbgs() << "remat-mark: scale from " << lowest << " to "
                            << top << " bytes (unmarked " << unmarked << ")\n");
    if (budgetBytes.hasValue())
      return static_cast<int64_t>(budgetBytes);
    if (budgetFraction.hasValue())
      return static_cast<int64_t>(budgetFraction * unmarked);
    return lowest + static_cast<int64_t>(budgetBetween * (top - lowest));
  }

  /// policy=budget: searches on the model, then measures markings on their
  /// memory plans (getMeasured) and returns the cheapest within the budget,
  /// which is read in the plans' bytes; on the model's bytes for a step too
  /// large to measure plans of (kPlanWork).
  FailureOr<PlannedPoint> planBudget(const MarkingProblem &problem,
                                     raw_ostream &os) {
    BudgetPlanner planner(problem);
    numEvaluated += planner.getNumEvaluations();
    size_t ops = std::max<size_t>(problem.getNumFunctionOps(), 1);
    // Each plan bufferizes the whole step: at most plan-work / ops of them,
    // so that a step's plans cost about one bufferization of plan-work ops
    // whatever its size; with room for fewer than two, none.
    unsigned planLimit =
        std::min<size_t>(planCandidates, static_cast<size_t>(planWork) / ops);
    bool onPlans = planLimit >= 2;
    SmallVector<PlanPoint> points;
    if (failed(measurePoints(problem, planner, planLimit, points)))
      return failure();
    // The top of the budget-between scale: the lower of the unmarked peak
    // and the peak with only the cheap ops recomputed (planHeavySaved), as
    // PyTorch's memory budget 1 is its default partition, which recomputes
    // pointwise ops where that saves memory.
    Marking cheap = planHeavySaved(problem);
    if (budgetBetween.hasValue() &&
        llvm::none_of(
            points,
            [&](const PlanPoint &point) { return point.marking == cheap; }) &&
        failed(measure(problem, cheap, onPlans, points)))
      return failure();
    int64_t lowest;
    int64_t budget = computeBudget(points, cheap, lowest);
    const PlanPoint *best = findCheapestWithin(points, budget);
    if (onPlans) {
      if (failed(measureSequential(problem, best, planLimit, ops, points)))
        return failure();
      best = findCheapestWithin(points, budget);
      for (const PlanPoint &point : points)
        lowest = std::min(lowest, point.cost.peakBytes);
    }
    if (!best) {
      getOperation().emitError()
          << "-remat-mark: budget of " << budget
          << " bytes is infeasible: the smallest peak the planner reached is "
          << lowest << " bytes (unmarked: " << points.front().cost.peakBytes
          << " bytes)";
      return failure();
    }
    os << ", budget " << budget << " bytes (";
    if (onPlans)
      os << points.size() << " markings measured on their memory plans, ";
    else
      os << "decided on the model: plans are measured for steps of up to "
         << planWork / 2 << " ops, this one has " << ops << "; ";
    os << planner.getNumEvaluations() << " on the model"
       << (planner.isExact() ? ", every one-segment marking" : "") << ")";
    return PlannedPoint{best->marking, best->cost, budget};
  }

  /// Checks the options once per pipeline, before any function is visited
  /// (also when there is none), however the pass was created.
  LogicalResult initialize(MLIRContext *context) override {
    std::string error = checkOptions();
    if (error.empty())
      return success();
    return emitError(UnknownLoc::get(context)) << "-remat-mark: " << error;
  }

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (failed(verifyMarksTakeEffect(function)))
      return signalPassFailure();
    if (policy == MarkPolicy::Annotations || !getBackwardOp(function.getBody()))
      return;

    FailureOr<MarkingProblem> problem = MarkingProblem::build(function);
    if (failed(problem))
      return signalPassFailure();

    Marking marking;
    SmallVector<bool> saveInSegment;
    std::optional<PlanCost> budgetCost;
    std::optional<int64_t> plannedBudget;
    std::string detail;
    llvm::raw_string_ostream os(detail);
    if (policy == MarkPolicy::Sequential) {
      marking = planSequential(*problem, segments);
    } else if (policy == MarkPolicy::Sqrt) {
      unsigned layers = countLayers(*problem);
      marking = planSqrt(*problem);
      os << ", " << layers << " layers";
    } else if (policy == MarkPolicy::Selective) {
      llvm::StringSet<> ops, names;
      for (const std::string &name : saveOps)
        ops.insert(name);
      for (const std::string &name : saveNames)
        names.insert(name);
      marking = planSelective(*problem, ops, names, saveInSegment);
    } else {
      FailureOr<PlannedPoint> chosen = planBudget(*problem, os);
      if (failed(chosen))
        return signalPassFailure();
      marking = chosen->marking;
      budgetCost = chosen->cost;
      plannedBudget = chosen->budget;
    }

    std::optional<PlanCost> cost = budgetCost;
    if (predict && !cost)
      cost = predictCost(*problem, marking);
    problem->apply(marking, saveInSegment);
    // Segments, nested ones included: every prefix of a path names one.
    std::set<SegmentPath> used;
    for (auto [index, path] : llvm::enumerate(marking)) {
      bool saved = !saveInSegment.empty() && saveInSegment[index];
      if (!path.empty() || saved)
        ++numMarked;
      for (size_t depth = 1; depth <= path.size(); ++depth)
        used.insert(SegmentPath(path.begin(), path.begin() + depth));
    }
    // The plan, for -remat-report.
    std::optional<int64_t> peak, flops;
    if (cost) {
      peak = cost->peakBytes;
      flops = cost->recomputeFlops;
    }
    function->setAttr(RematDialect::kPlanAttrName,
                      PlanAttr::get(function.getContext(),
                                    stringifyMarkPolicy(policy), used.size(),
                                    peak, flops, plannedBudget,
                                    /*lowerBound=*/std::nullopt));
    // On the location, not the op: an op's diagnostics print the whole
    // function after the message.
    InFlightDiagnostic remark = emitRemark(function.getLoc());
    remark << "-remat-mark: policy=" << stringifyMarkPolicy(policy)
           << ", segments: " << used.size();
    if (cost)
      remark << ", predicted peak " << cost->peakBytes
             << " bytes, recompute FLOPs " << cost->recomputeFlops;
    remark << detail;
  }
};

} // namespace

StringRef remat::stringifyMarkPolicy(MarkPolicy policy) {
  switch (policy) {
  case MarkPolicy::Annotations:
    return "annotations";
  case MarkPolicy::Sequential:
    return "sequential";
  case MarkPolicy::Sqrt:
    return "sqrt";
  case MarkPolicy::Selective:
    return "selective";
  case MarkPolicy::Budget:
    return "budget";
  }
  llvm_unreachable("unknown policy");
}
