//===- Mark.cpp - Choose checkpoint segments by a policy ------------------===//
//
// This file implements -remat-mark: it checks the policy options, builds the
// marking problem of each training step, runs the chosen planner and writes
// its marks, with a remark stating the marking and its predicted cost.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/MemoryPlan.h"
#include "remat/Planning/Passes.h"
#include "remat/Planning/Planner.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#include <limits>
#include <map>
#include <set>
#include <tuple>

#define DEBUG_TYPE "remat-mark"

namespace remat {
#define GEN_PASS_DEF_REMATMARKPASS
#include "remat/Planning/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct RematMarkPass : remat::impl::RematMarkPassBase<RematMarkPass> {
  using RematMarkPassBase::RematMarkPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    RematMarkPassBase::getDependentDialects(registry);
    registerCostModelExternalModels(registry);
    addMemoryPlanPipelineDialects(getMemoryPlanPipeline(planPipeline),
                                  registry);
  }

  /// Returns an error message if the options do not choose a marking.
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

  /// The cost of `marking` on its memory plan; the model's, with a warning
  /// at `function`, when the memory plan cannot be made.
  StepCost predictCost(func::FuncOp function, const MarkingProblem &problem,
                       const Marking &marking) {
    std::string error;
    FailureOr<StepCost> cost =
        problem.measureOnMemoryPlan(marking, memoryPlans, error);
    if (succeeded(cost))
      return *cost;
    emitWarning(function.getLoc())
        << "-remat-mark: no memory plan, the predicted peak is the model's: "
        << error;
    return problem.evaluate(marking);
  }

  /// A marking measured on its memory plan, and the budget it answers.
  struct ChosenMarking {
    Marking marking;
    StepCost cost;
    int64_t budget = 0;
  };

  /// The markings measured on their memory plans, at most `limit` (and at
  /// least two): the unmarked step; the model's Pareto front (fewest FLOPs
  /// first, each with a lower model peak than the ones before), spread
  /// evenly over the limit less the policies' plans (getPolicyMarkings),
  /// which come next so that the answer is never above theirs; then, up to
  /// the limit, the other markings by the model's peak, lowest first, since
  /// the model can err where the memory plan does not (it ranks a marking with
  /// the matmuls saved above one whose plan peaks higher).
  static SmallVector<Marking> getMeasured(const MarkingProblem &problem,
                                          ArrayRef<MeasuredMarking> candidates,
                                          unsigned limit) {
    limit = std::max(limit, 2u);
    SmallVector<const MeasuredMarking *> order;
    for (const MeasuredMarking &point : candidates)
      order.push_back(&point);
    llvm::sort(order, [](const MeasuredMarking *a, const MeasuredMarking *b) {
      return std::make_pair(a->cost.recomputeFlops, a->cost.peakBytes) <
             std::make_pair(b->cost.recomputeFlops, b->cost.peakBytes);
    });
    SmallVector<const MeasuredMarking *> front;
    for (const MeasuredMarking *point : order)
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
    llvm::sort(order, [](const MeasuredMarking *a, const MeasuredMarking *b) {
      return std::make_pair(a->cost.peakBytes, a) <
             std::make_pair(b->cost.peakBytes, b);
    });
    for (const MeasuredMarking *point : order)
      add(point->marking);
    return markings;
  }

  /// Measures `markings` and appends them to `points`, in order: on their
  /// memory plans if `onMemoryPlans` (together on the context's thread pool),
  /// else on the model. A plan that cannot be made is an error at `function`:
  /// the first one in order, as one thread would meet it.
  LogicalResult measure(func::FuncOp function, const MarkingProblem &problem,
                        SmallVector<Marking> markings, bool onMemoryPlans,
                        SmallVectorImpl<MeasuredMarking> &points) {
    if (!onMemoryPlans) {
      SmallVector<StepCost> costs = problem.evaluateAll(markings);
      for (auto [marking, cost] : llvm::zip_equal(markings, costs))
        points.push_back({std::move(marking), cost});
      return success();
    }
    SmallVector<MeasuredCost> results =
        problem.measureOnMemoryPlans(markings, memoryPlans);
    for (auto [marking, result] : llvm::zip_equal(markings, results)) {
      if (!result.cost)
        return function.emitError()
               << "-remat-mark: policy=budget needs the memory plan: "
               << result.error;
      LLVM_DEBUG(llvm::dbgs()
                 << "remat-mark: measured marking " << points.size()
                 << ": planned peak " << result.cost->peakBytes
                 << " bytes, recompute FLOPs " << result.cost->recomputeFlops
                 << "\n");
      points.push_back({std::move(marking), *result.cost});
    }
    return success();
  }

  /// The markings policy=budget chooses among, the unmarked step first:
  /// with a `memoryPlanLimit` of at least two, those of getMeasured, measured
  /// on their memory plans; else, on the model, the policies' markings and
  /// every marking the search evaluated, at the cost it found.
  LogicalResult measurePoints(func::FuncOp function,
                              const MarkingProblem &problem,
                              const BudgetPlanner &planner,
                              unsigned memoryPlanLimit,
                              SmallVectorImpl<MeasuredMarking> &points) {
    if (memoryPlanLimit >= 2)
      return measure(
          function, problem,
          getMeasured(problem, planner.getCandidates(), memoryPlanLimit),
          /*onMemoryPlans=*/true, points);
    SmallVector<Marking> markings = {Marking(problem.size())};
    llvm::append_range(markings, getPolicyMarkings(problem));
    (void)measure(function, problem, std::move(markings),
                  /*onMemoryPlans=*/false, points);
    for (const MeasuredMarking &point : planner.getCandidates())
      points.push_back(point);
    return success();
  }

  /// Measures on their memory plans the sequential markings (2 to 64
  /// segments) not in `points` that could answer the budget more cheaply
  /// than `best` (fewer recompute FLOPs on the model; all without a
  /// `best`), within the work left to plans beyond the `memoryPlanLimit`
  /// already measured: sequential(N)'s planned peak can be below every marking
  /// the model's front led to, and the answer is never to be above another
  /// policy's. The model's FLOPs of a marking the search evaluated are
  /// looked up in `planner`, not measured again.
  LogicalResult measureSequential(func::FuncOp function,
                                  const MarkingProblem &problem,
                                  const BudgetPlanner &planner,
                                  const MeasuredMarking *best,
                                  unsigned memoryPlanLimit, size_t ops,
                                  SmallVectorImpl<MeasuredMarking> &points) {
    uint64_t room = static_cast<uint64_t>(planWork) / ops;
    if (room <= memoryPlanLimit)
      return success();
    room -= memoryPlanLimit;
    int64_t bound =
        best ? best->cost.recomputeFlops : std::numeric_limits<int64_t>::max();
    std::set<Marking> seen;
    for (const MeasuredMarking &point : points)
      seen.insert(point.marking);
    std::map<Marking, int64_t> modelFlops;
    for (const MeasuredMarking &point : planner.getCandidates())
      modelFlops.try_emplace(point.marking, point.cost.recomputeFlops);
    // The unseen sequential markings, and the model's FLOPs of those the
    // search did not evaluate, all at once.
    size_t last = std::min<size_t>(kMaxSequentialSegments, problem.size());
    SmallVector<Marking> sequential, unknown;
    for (unsigned segments = 2; segments <= last; ++segments) {
      Marking marking = planSequential(problem, segments);
      if (!seen.insert(marking).second)
        continue;
      if (!modelFlops.count(marking))
        unknown.push_back(marking);
      sequential.push_back(std::move(marking));
    }
    for (auto [marking, cost] :
         llvm::zip_equal(unknown, problem.evaluateAll(unknown)))
      modelFlops.try_emplace(marking, cost.recomputeFlops);
    SmallVector<Marking> cheaper;
    for (Marking &marking : sequential) {
      if (room == 0)
        break;
      if (modelFlops.at(marking) >= bound)
        continue;
      --room;
      cheaper.push_back(std::move(marking));
    }
    return measure(function, problem, std::move(cheaper),
                   /*onMemoryPlans=*/true, points);
  }

  /// Measures on their memory plans up to `count` of the model's candidates
  /// not in `points` that could answer `budget` more cheaply than `best`
  /// (all without a `best`), fewest recompute FLOPs first: those whose
  /// planned peak, predicted as their model peak times the planned-to-model
  /// ratio of the measured marking nearest in model peak, is within the
  /// budget. The first plans sample the model's whole front, before the
  /// budget is known (budget-between is a point between their peaks); the
  /// answer to one budget is often a marking between two of them, a layer
  /// more or less recomputed.
  LogicalResult measureNearBudget(func::FuncOp function,
                                  const MarkingProblem &problem,
                                  const BudgetPlanner &planner, int64_t budget,
                                  const MeasuredMarking *best, unsigned count,
                                  SmallVectorImpl<MeasuredMarking> &points) {
    if (count == 0)
      return success();
    std::map<Marking, int64_t> modelPeaks;
    for (const MeasuredMarking &point : planner.getCandidates())
      modelPeaks.try_emplace(point.marking, point.cost.peakBytes);
    // The measured markings' (model peak, planned peak), by model peak.
    SmallVector<std::pair<int64_t, int64_t>> calibration;
    std::set<Marking> seen;
    for (const MeasuredMarking &point : points) {
      seen.insert(point.marking);
      auto it = modelPeaks.find(point.marking);
      if (it != modelPeaks.end() && it->second > 0)
        calibration.push_back({it->second, point.cost.peakBytes});
    }
    if (calibration.empty())
      return success();
    llvm::sort(calibration);
    auto predictPeak = [&](int64_t modelPeak) {
      auto *next = llvm::lower_bound(
          calibration,
          std::make_pair(modelPeak, std::numeric_limits<int64_t>::min()));
      auto *nearest = next;
      if (next == calibration.end() ||
          (next != calibration.begin() &&
           modelPeak - std::prev(next)->first < next->first - modelPeak))
        nearest = std::prev(next);
      return static_cast<double>(modelPeak) * nearest->second / nearest->first;
    };
    int64_t bound =
        best ? best->cost.recomputeFlops : std::numeric_limits<int64_t>::max();
    SmallVector<const MeasuredMarking *> cheaper;
    for (const MeasuredMarking &point : planner.getCandidates())
      if (point.cost.recomputeFlops < bound && !seen.count(point.marking) &&
          predictPeak(point.cost.peakBytes) <= static_cast<double>(budget))
        cheaper.push_back(&point);
    // Ties in the order the planner found them.
    llvm::sort(cheaper, [](const MeasuredMarking *a, const MeasuredMarking *b) {
      return std::make_tuple(a->cost.recomputeFlops, a->cost.peakBytes, a) <
             std::make_tuple(b->cost.recomputeFlops, b->cost.peakBytes, b);
    });
    SmallVector<Marking> markings;
    for (const MeasuredMarking *point : cheaper) {
      if (markings.size() == count)
        break;
      markings.push_back(point->marking);
    }
    return measure(function, problem, std::move(markings),
                   /*onMemoryPlans=*/true, points);
  }

  /// The budget the options ask for, in the bytes of `points` (whose first
  /// is the unmarked step): budget-bytes, a fraction of the unmarked peak,
  /// or a point between `lowest`, the lowest peak of `points`, and the top
  /// of the scale: the lower of the unmarked peak and the peak of `cheap`,
  /// if measured.
  int64_t computeBudget(ArrayRef<MeasuredMarking> points, const Marking &cheap,
                        int64_t &lowest) {
    int64_t unmarked = points.front().cost.peakBytes;
    int64_t top = unmarked;
    lowest = unmarked;
    for (const MeasuredMarking &point : points) {
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
  FailureOr<ChosenMarking> planBudget(func::FuncOp function,
                                      const MarkingProblem &problem,
                                      raw_ostream &os) {
    BudgetPlanner planner(problem);
    numEvaluated += planner.getNumEvaluations();
    size_t ops = std::max<size_t>(problem.getNumFunctionOps(), 1);
    // Each plan bufferizes the whole step: at most plan-work / ops of them,
    // so that a step's plans cost about one bufferization of plan-work ops
    // whatever its size; with room for fewer than two, none.
    unsigned memoryPlanLimit =
        std::min<size_t>(planCandidates, static_cast<size_t>(planWork) / ops);
    bool onMemoryPlans = memoryPlanLimit >= 2;
    // When the model's candidates do not all fit, a quarter more plans go to
    // the markings near the budget (measureNearBudget), after the others:
    // the answer is never above the one without them.
    unsigned nearBudget =
        onMemoryPlans && planner.getNumEvaluations() > memoryPlanLimit
            ? memoryPlanLimit / 4
            : 0;
    SmallVector<MeasuredMarking> points;
    if (failed(
            measurePoints(function, problem, planner, memoryPlanLimit, points)))
      return failure();
    // The top of the budget-between scale: the lower of the unmarked peak
    // and the peak with only the cheap ops recomputed (planHeavySaved), as
    // PyTorch's memory budget 1 is its default partition, which recomputes
    // pointwise ops where that saves memory.
    Marking cheap = planHeavySaved(problem);
    if (budgetBetween.hasValue() &&
        llvm::none_of(points,
                      [&](const MeasuredMarking &point) {
                        return point.marking == cheap;
                      }) &&
        failed(measure(function, problem, {cheap}, onMemoryPlans, points)))
      return failure();
    int64_t lowest;
    int64_t budget = computeBudget(points, cheap, lowest);
    const MeasuredMarking *best = findCheapestWithin(points, budget);
    if (onMemoryPlans) {
      if (failed(measureNearBudget(function, problem, planner, budget, best,
                                   nearBudget, points)))
        return failure();
      best = findCheapestWithin(points, budget);
      if (failed(measureSequential(function, problem, planner, best,
                                   memoryPlanLimit, ops, points)))
        return failure();
      best = findCheapestWithin(points, budget);
      for (const MeasuredMarking &point : points)
        lowest = std::min(lowest, point.cost.peakBytes);
    }
    if (!best) {
      function.emitError()
          << "-remat-mark: budget of " << budget
          << " bytes is infeasible: the smallest peak the planner reached is "
          << lowest << " bytes (unmarked: " << points.front().cost.peakBytes
          << " bytes)";
      return failure();
    }
    os << ", budget " << budget << " bytes (";
    if (onMemoryPlans)
      os << points.size() << " markings measured on their memory plans, ";
    else if (planCandidates < 2)
      os << "decided on the model: plan-candidates=" << planCandidates
         << " measures none; ";
    else
      os << "decided on the model: plans are measured for steps of up to "
         << planWork / 2 << " ops, this one has " << ops << "; ";
    os << planner.getNumEvaluations() << " on the model"
       << (planner.isExact() ? ", every one-segment marking" : "") << ")";
    return ChosenMarking{best->marking, best->cost, budget};
  }

  /// Checks the options once per pipeline, before any function is visited
  /// (also when there is none), however the pass was created, and builds
  /// the memory-plan pipeline.
  LogicalResult initialize(MLIRContext *context) override {
    std::string error = checkOptions();
    if (!error.empty())
      return emitError(UnknownLoc::get(context)) << "-remat-mark: " << error;
    if (policy != MarkPolicy::Annotations || dropRaisingSegments)
      memoryPlans.initialize(context, planPipeline);
    return success();
  }

  /// Marks the training steps of the module one after the other, each
  /// planned on copies of itself and its callees (its candidates measured
  /// on the thread pool): a module pass, since planning reads the callees
  /// while a function pass could be changing them on another thread.
  void runOnOperation() override {
    for (func::FuncOp function :
         llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(markFunction(function)))
        return signalPassFailure();
  }

  /// Writes the policy's marks on `function` if it is a training step.
  LogicalResult markFunction(func::FuncOp function) {
    if (failed(verifyMarksTakeEffect(function)))
      return failure();
    if (!getBackwardOp(function.getBody()))
      return success();
    if (policy == MarkPolicy::Annotations)
      return success(!dropRaisingSegments ||
                     succeeded(dropSegmentsRaisingPeak(function)));

    FailureOr<MarkingProblem> problem = MarkingProblem::build(function);
    if (failed(problem))
      return failure();

    Marking marking;
    SmallVector<bool> saveInSegment;
    std::optional<StepCost> budgetCost;
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
      FailureOr<ChosenMarking> chosen = planBudget(function, *problem, os);
      if (failed(chosen))
        return failure();
      marking = chosen->marking;
      budgetCost = chosen->cost;
      plannedBudget = chosen->budget;
    }

    std::optional<StepCost> cost = budgetCost;
    if (predict && !cost)
      cost = predictCost(function, *problem, marking);
    problem->apply(marking, saveInSegment);
    for (auto [index, path] : llvm::enumerate(marking))
      if (!path.empty() || (!saveInSegment.empty() && saveInSegment[index]))
        ++numMarked;
    if (dropRaisingSegments) {
      FailureOr<bool> dropped = dropSegmentsRaisingPeak(function);
      if (failed(dropped))
        return failure();
      if (*dropped && cost)
        cost = predictMarked(function);
    } else if (cost && policy != MarkPolicy::Budget) {
      nameSegmentsRaisingPeak(function, cost->peakBytes);
    }
    // Segments, nested ones included: every prefix of a path names one.
    std::set<SegmentPath> used;
    for (Operation &op : function.getBody().front()) {
      SmallVector<int64_t, 2> path = getSegmentPath(&op);
      for (size_t depth = 1; depth <= path.size(); ++depth)
        used.insert(SegmentPath(path.begin(), path.begin() + depth));
    }
    // The marking, for -remat-report.
    std::optional<int64_t> peak, flops;
    if (cost) {
      peak = cost->peakBytes;
      flops = cost->recomputeFlops;
    }
    function->setAttr(RematDialect::kMarkingAttrName,
                      MarkingAttr::get(function.getContext(),
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
    return success();
  }

  /// The cost of `function` as its marks stand, on its memory plan; the
  /// model's measure when the memory plan cannot be made.
  std::optional<StepCost> predictMarked(func::FuncOp function) {
    std::string error;
    FailureOr<StepCost> cost = measureCheckpointedCopy(
        function, [](FunctionOpInterface) {}, memoryPlans,
        mustKeepReturnedBuffers(function), error);
    if (succeeded(cost))
      return *cost;
    function.emitWarning() << "-remat-mark: no memory plan of the step ("
                           << error << "); the plan records no prediction";
    return std::nullopt;
  }

  /// With drop-raising-segments: unmarks each top-level segment of
  /// `function` whose recomputation alone raises the static peak above the
  /// unmarked step's, then every segment if the rest together still do, and
  /// says what it dropped in a remark. Returns whether it dropped any.
  FailureOr<bool> dropSegmentsRaisingPeak(func::FuncOp function) {
    std::string error;
    FailureOr<std::optional<SegmentEffects>> measured = measureSegmentEffects(
        function, memoryPlans, /*measureUnmarked=*/true, error);
    if (failed(measured))
      return function.emitError()
             << "-remat-mark: no memory plan of the step: " << error;
    if (!*measured)
      return false;
    const SegmentEffects &effects = **measured;
    int64_t unmarked = *effects.unmarkedPeak;
    std::set<int64_t> drop;
    for (const auto &[segment, alone] : effects.alone)
      if (alone.second > unmarked)
        drop.insert(segment);
    auto unmark = [&](const std::set<int64_t> &segments) {
      function.getBody().walk([&](Operation *op) {
        SmallVector<int64_t, 2> path = getSegmentPath(op);
        if (!path.empty() &&
            (segments.empty() || segments.count(path.front()))) {
          op->removeAttr(RematDialect::kSegmentAttrName);
          op->removeAttr(RematDialect::kPolicyAttrName);
        }
      });
    };
    int64_t kept = effects.allPeak;
    bool all = false;
    if (!drop.empty() && drop.size() < effects.alone.size()) {
      unmark(drop);
      std::optional<StepCost> rest = predictMarked(function);
      if (!rest)
        return failure();
      kept = rest->peakBytes;
    }
    if (kept > unmarked) {
      all = true;
      unmark({});
      kept = unmarked;
    }
    if (drop.empty() && !all)
      return false;
    std::set<int64_t> dropped = drop;
    if (all)
      for (const auto &entry : effects.alone)
        dropped.insert(entry.first);
    InFlightDiagnostic remark = emitRemark(function.getLoc());
    remark << "-remat-mark: dropped checkpoint segment"
           << (dropped.size() > 1 ? "s " : " ");
    llvm::interleaveComma(dropped, remark);
    remark << ": recomputing "
           << (dropped.size() == 1 ? "it raises"
               : all               ? "them together raises"
                                   : "each alone raises")
           << " the static peak above the unmarked step's " << unmarked
           << " bytes";
    for (int64_t segment : drop)
      remark << "; segment " << segment
             << " alone: " << effects.alone.at(segment).second;
    remark << "; kept: " << kept << " bytes";
    return true;
  }

  /// A remark naming each top-level segment of `function` whose
  /// recomputation alone raises the static peak above the unmarked step's,
  /// when its marking's `peak` does.
  void nameSegmentsRaisingPeak(func::FuncOp function, int64_t peak) {
    // One plan first (the unmarked step), the segments' only on a rise.
    std::string error;
    FailureOr<StepCost> unmarked = measureCheckpointedCopy(
        function,
        [](FunctionOpInterface copy) {
          copy.getFunctionBody().walk([](Operation *op) {
            op->removeAttr(RematDialect::kSegmentAttrName);
          });
        },
        memoryPlans, mustKeepReturnedBuffers(function), error);
    if (failed(unmarked) || peak <= unmarked->peakBytes)
      return;
    FailureOr<std::optional<SegmentEffects>> measured = measureSegmentEffects(
        function, memoryPlans, /*measureUnmarked=*/true, error);
    if (failed(measured) || !*measured)
      return;
    const SegmentEffects &effects = **measured;
    InFlightDiagnostic remark = emitRemark(function.getLoc());
    remark << "-remat-mark: policy=" << stringifyMarkPolicy(policy)
           << "'s marking raises the static peak above the unmarked step's ("
           << *effects.unmarkedPeak << " -> " << peak << " bytes)";
    for (const auto &[segment, alone] : effects.alone)
      if (alone.second > *effects.unmarkedPeak)
        remark << "; segment " << segment << " alone: " << alone.second;
    remark << "; drop-raising-segments=true unmarks what raises it";
  }

  /// The memory-plan pipeline, built in initialize().
  MemoryPlanPipeline memoryPlans;
};

} // namespace
