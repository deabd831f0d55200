//===- Mark.cpp - Choose checkpoint segments by a policy ------------------===//
//
// This file implements -remat-mark: it checks the policy options, builds the
// marking problem of each training step, runs the chosen planner and writes
// its marks, with a remark stating the plan and its predicted cost.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Analysis/Planner.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Transforms/Passes.h"

#include "llvm/ADT/StringSet.h"

#include <set>

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
  }

  /// Returns an error message if the options do not make a plan.
  std::string checkOptions() {
    static const std::set<std::string> policies = {
        "annotations", "sequential", "sqrt", "selective", "budget"};
    if (!policies.count(policy))
      return "unknown policy '" + policy +
             "' (expected annotations, sequential, sqrt, selective or budget)";
    if (policy == "sequential" && segments == 0)
      return "policy=sequential needs segments=N with N >= 1";
    if (policy != "sequential" && segments.hasValue())
      return "segments= is an option of policy=sequential only";
    if (policy != "selective" && (saveOps.hasValue() || saveNames.hasValue()))
      return "save-ops= and save-names= are options of policy=selective only";
    bool hasBytes = budgetBytes.hasValue(), hasFraction = budgetFraction.hasValue();
    bool hasBetween = budgetBetween.hasValue();
    int budgetOptions = hasBytes + hasFraction + hasBetween;
    if (policy != "budget" && budgetOptions > 0)
      return "budget-bytes=, budget-fraction= and budget-between= are options "
             "of policy=budget only";
    if (policy == "budget") {
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

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    std::string error = checkOptions();
    if (!error.empty()) {
      function.emitError() << "-remat-mark: " << error;
      return signalPassFailure();
    }
    if (policy == "annotations" || !getBackwardOp(function.getBody()))
      return;

    FailureOr<MarkingProblem> problem = MarkingProblem::build(function);
    if (failed(problem))
      return signalPassFailure();

    Marking marking;
    SmallVector<bool> saveInSegment;
    std::optional<int64_t> lowerBound;
    int64_t plannedBudget = 0;
    std::string detail;
    llvm::raw_string_ostream os(detail);
    if (policy == "sequential") {
      marking = planSequential(*problem, segments);
    } else if (policy == "sqrt") {
      unsigned layers = countLayers(*problem);
      marking = planSqrt(*problem);
      os << ", " << layers << " layers";
    } else if (policy == "selective") {
      llvm::StringSet<> ops, names;
      for (const std::string &name : saveOps)
        ops.insert(name);
      for (const std::string &name : saveNames)
        names.insert(name);
      marking = planSelective(*problem, ops, names, saveInSegment);
    } else {
      BudgetPlanner planner(*problem);
      int64_t unmarked = planner.getUnmarkedPeak();
      int64_t lowest = planner.getMinPeak();
      int64_t budget =
          budgetBytes.hasValue() ? static_cast<int64_t>(budgetBytes)
          : budgetFraction.hasValue()
              ? static_cast<int64_t>(budgetFraction * unmarked)
              : lowest + static_cast<int64_t>(budgetBetween *
                                              (unmarked - lowest));
      const BudgetAnswer &answer = planner.answer(budget);
      numEvaluated += planner.getNumEvaluations();
      if (!answer.plan) {
        InFlightDiagnostic diag = function.emitError();
        diag << "-remat-mark: budget of " << budget
             << " bytes is infeasible: the smallest peak "
             << (planner.isExact() ? "reachable" : "the planner reached")
             << " is " << planner.getMinPeak() << " bytes (unmarked: "
             << planner.getUnmarkedPeak() << " bytes)";
        if (!planner.isExact())
          diag << "; no marking peaks below " << planner.getPeakLowerBound()
               << " bytes"
               << (answer.provenInfeasible ? ", and none fits the budget"
                                           : "");
        return signalPassFailure();
      }
      marking = answer.plan->marking;
      lowerBound = answer.lowerBound;
      plannedBudget = budget;
      StringRef method = answer.method == BudgetMethod::Exhaustive ? "exact"
                         : answer.method == BudgetMethod::Ilp
                             ? "exact, ILP"
                             : "heuristic";
      os << ", budget " << budget << " bytes, lower bound "
         << answer.lowerBound << " FLOPs (" << method;
      if (!answer.note.empty() && answer.method != BudgetMethod::Exhaustive)
        os << ": " << answer.note;
      os << ", " << planner.getNumEvaluations() << " markings measured)";
    }

    std::optional<PlanCost> cost;
    if (predict || policy == "budget")
      cost = problem->evaluate(marking);
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
    Builder builder(function.getContext());
    SmallVector<NamedAttribute> fields = {
        builder.getNamedAttr("policy", builder.getStringAttr(policy)),
        builder.getNamedAttr("segments",
                             builder.getI64IntegerAttr(used.size()))};
    if (cost) {
      fields.push_back(builder.getNamedAttr(
          "predicted_peak", builder.getI64IntegerAttr(cost->peakBytes)));
      fields.push_back(builder.getNamedAttr(
          "recompute_flops", builder.getI64IntegerAttr(cost->recomputeFlops)));
    }
    if (lowerBound) {
      fields.push_back(builder.getNamedAttr(
          "budget", builder.getI64IntegerAttr(plannedBudget)));
      fields.push_back(builder.getNamedAttr(
          "lower_bound", builder.getI64IntegerAttr(*lowerBound)));
    }
    function->setAttr(RematDialect::kPlanAttrName,
                      builder.getDictionaryAttr(fields));
    // On the location, not the op: an op's diagnostics print the whole
    // function after the message.
    InFlightDiagnostic remark = emitRemark(function.getLoc());
    remark << "-remat-mark: policy=" << policy << ", segments: " << used.size();
    if (cost)
      remark << ", predicted peak " << cost->peakBytes
             << " bytes, recompute FLOPs " << cost->recomputeFlops;
    remark << detail;
  }
};

} // namespace
