//===- CheckpointLoops.cpp - Save every k-th carry of a scan --------------===//
//
// This file implements -remat-checkpoint-loops: its policies choose the k
// at which each forward scan saves its carries (CheckpointScans.h rewrites
// the scans), policy=budget by measuring choices on their memory plans.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/CheckpointScans.h"
#include "remat/Memory/MemoryPlan.h"
#include "remat/Planning/Measure.h"
#include "remat/Planning/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <map>

namespace remat {
#define GEN_PASS_DEF_REMATCHECKPOINTLOOPSPASS
#include "remat/Planning/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

/// The most scans policy=budget decides together: it measures every subset.
static constexpr size_t kMaxBudgetScans = 8;

namespace {

struct RematCheckpointLoopsPass
    : remat::impl::RematCheckpointLoopsPassBase<RematCheckpointLoopsPass> {
  using RematCheckpointLoopsPassBase::RematCheckpointLoopsPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    RematCheckpointLoopsPassBase::getDependentDialects(registry);
    registerCostModelExternalModels(registry);
    addMemoryPlanPipelineDialects(getMemoryPlanPipeline(planPipeline),
                                  registry);
  }

  /// The policy: `policy`, or every for every=K alone (as before policies
  /// existed).
  LoopPolicy getPolicy() const {
    return !policy.hasValue() && every > 0 ? LoopPolicy::Every
                                           : LoopPolicy(policy);
  }

  /// Checks the options once, before any function is visited.
  LogicalResult initialize(MLIRContext *context) override {
    LoopPolicy chosenPolicy = getPolicy();
    std::string error;
    if (chosenPolicy == LoopPolicy::Every && every == 0)
      error = "policy=every needs every=K with K >= 1";
    else if (chosenPolicy != LoopPolicy::Every && every > 0)
      error = "every= is an option of policy=every only";
    else if (chosenPolicy != LoopPolicy::Budget && budgetBytes.hasValue())
      error = "budget-bytes= is an option of policy=budget only";
    else if (chosenPolicy == LoopPolicy::Budget && budgetBytes <= 0)
      error = "policy=budget needs budget-bytes=B with B >= 1";
    else if (chosenPolicy != LoopPolicy::Budget && planPipeline.hasValue())
      error = "plan-pipeline= is an option of policy=budget only";
    if (!error.empty())
      return emitError(UnknownLoc::get(context))
             << "-remat-checkpoint-loops: " << error;
    if (chosenPolicy == LoopPolicy::Budget)
      memoryPlans.initialize(context, planPipeline);
    return success();
  }

  /// Measures each of `choices` not measured yet for `function`, with its
  /// scans checkpointed at those k on a copy of it and its callees
  /// (measureRewrittenCopies): its memory plan's peak and the recompute
  /// FLOPs -remat-report counts. A plan that cannot be made is an error at
  /// `function`: the first in order, as one thread would meet it.
  LogicalResult measureAll(func::FuncOp function,
                           ArrayRef<SmallVector<int64_t>> choices) {
    SmallVector<SmallVector<int64_t>> fresh;
    for (const SmallVector<int64_t> &choice : choices)
      if (!measured.count(choice) && !llvm::is_contained(fresh, choice))
        fresh.push_back(choice);
    SmallVector<MeasuredCost> costs = measureRewrittenCopies(
        function, fresh.size(),
        [&](size_t index, FunctionOpInterface copy) {
          ArrayRef<int64_t> choice = fresh[index];
          checkpointScans(
              cast<func::FuncOp>(copy),
              [&](int64_t, unsigned position) { return choice[position]; },
              /*remarks=*/false);
        },
        memoryPlans, mustKeepReturnedBuffers(function));
    for (auto [choice, result] : llvm::zip_equal(fresh, costs)) {
      if (!result.cost)
        return function.emitError() << "-remat-checkpoint-loops: policy=budget "
                                       "needs the memory plan: "
                                    << result.error;
      ++numEvaluated;
      measured[choice] = *result.cost;
    }
    return success();
  }

  /// policy=budget: the k per forward loop of least recompute FLOPs whose
  /// predicted peak fits, ties to the lower peak.
  FailureOr<SmallVector<int64_t>> planBudget(func::FuncOp function) {
    BackwardOp backwardOp = getBackwardOp(function.getBody());
    SmallVector<scf::ForOp> loops = getForwardLoops(function, backwardOp);
    // The scans the pass would rewrite, and their sqrt k.
    SmallVector<std::pair<unsigned, int64_t>> scans;
    SmallVector<int64_t> none(loops.size(), 0), atSqrt(loops.size(), 0);
    for (auto [position, loop] : llvm::enumerate(loops)) {
      if (loop->hasAttr(RematDialect::kSegmentAttrName))
        continue;
      std::optional<int64_t> trips = matchCheckpointableScan(loop, backwardOp);
      if (!trips)
        continue;
      scans.push_back({unsigned(position), *trips});
      atSqrt[position] = getSqrtBlock(*trips);
    }
    if (scans.empty())
      return none;
    if (scans.size() > kMaxBudgetScans)
      return function.emitError()
             << "-remat-checkpoint-loops: policy=budget decides at most "
             << kMaxBudgetScans << " scans per function, this one has "
             << scans.size();
    int64_t budget = budgetBytes;
    if (failed(measureAll(function, {none})))
      return failure();
    const StepCost *untouched = &measured.at(none);
    auto remark = [&](ArrayRef<int64_t> choice, StepCost cost) {
      InFlightDiagnostic diag = function.emitRemark()
                                << "-remat-checkpoint-loops: policy=budget, "
                                   "budget "
                                << budget << " bytes: k =";
      for (auto [position, trips] : scans)
        diag << " " << choice[position];
      diag << " for the " << scans.size()
           << " scans (0: left alone), predicted peak " << cost.peakBytes
           << " bytes (untouched: " << untouched->peakBytes
           << "), recompute FLOPs " << cost.recomputeFlops << " ("
           << measured.size() << " choices measured on their memory plans)";
    };
    if (untouched->peakBytes <= budget) {
      remark(none, *untouched);
      return none;
    }
    // Each scan's k: the divisor of least peak, the others at their sqrt k.
    // The choices do not depend on one another's costs: all are measured
    // at once.
    SmallVector<std::pair<unsigned, SmallVector<int64_t>>> byScan;
    for (auto [position, trips] : scans) {
      SmallVector<int64_t> divisors;
      for (int64_t k = 1; k <= trips; ++k)
        if (trips % k == 0)
          divisors.push_back(k);
      int64_t sqrtK = atSqrt[position];
      llvm::sort(divisors, [&](int64_t a, int64_t b) {
        return std::make_pair(std::abs(a - sqrtK), a) <
               std::make_pair(std::abs(b - sqrtK), b);
      });
      byScan.push_back({position, std::move(divisors)});
    }
    auto withK = [&](unsigned position, int64_t k) {
      SmallVector<int64_t> choice = atSqrt;
      choice[position] = k;
      return choice;
    };
    SmallVector<SmallVector<int64_t>> divisorChoices;
    for (auto &[position, divisors] : byScan)
      for (int64_t k : divisors)
        divisorChoices.push_back(withK(position, k));
    if (failed(measureAll(function, divisorChoices)))
      return failure();
    SmallVector<int64_t> best = atSqrt;
    for (auto &[position, divisors] : byScan) {
      std::optional<int64_t> lowest;
      for (int64_t k : divisors) {
        const StepCost &cost = measured.at(withK(position, k));
        if (!lowest || cost.peakBytes < *lowest) {
          lowest = cost.peakBytes;
          best[position] = k;
        }
      }
    }
    // Every subset of the scans at those k.
    SmallVector<SmallVector<int64_t>> subsets;
    for (unsigned mask = 1; mask < (1u << scans.size()); ++mask) {
      SmallVector<int64_t> choice = none;
      for (auto [index, scan] : llvm::enumerate(scans))
        if (mask & (1u << index))
          choice[scan.first] = best[scan.first];
      subsets.push_back(std::move(choice));
    }
    if (failed(measureAll(function, subsets)))
      return failure();
    SmallVector<StepCost> costs;
    int64_t lowestPeak = untouched->peakBytes;
    for (const SmallVector<int64_t> &choice : subsets) {
      costs.push_back(measured.at(choice));
      lowestPeak = std::min(lowestPeak, costs.back().peakBytes);
    }
    std::optional<size_t> answer = findCheapestWithin(costs, budget);
    if (!answer)
      return function.emitError()
             << "-remat-checkpoint-loops: budget of " << budget
             << " bytes is infeasible: the least predicted peak is "
             << lowestPeak << " bytes (untouched: " << untouched->peakBytes
             << " bytes)";
    remark(subsets[*answer], costs[*answer]);
    return subsets[*answer];
  }

  /// Rewrites the training steps of the module one after the other, each
  /// planned on copies of itself and its callees (its choices measured on
  /// the thread pool): a module pass, since planning reads the callees while
  /// a function pass could be changing them on another thread.
  void runOnOperation() override {
    for (func::FuncOp function :
         llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(checkpointFunction(function)))
        return signalPassFailure();
  }

  /// Recomputes the marked segments of `function`'s scan bodies and
  /// checkpoints its scans, if it is a training step.
  LogicalResult checkpointFunction(func::FuncOp function) {
    if (!getBackwardOp(function.getBody()))
      return success();
    measured.clear();
    if (failed(recomputeBodySegments(function, /*remarks=*/true)))
      return failure();
    LoopPolicy chosenPolicy = getPolicy();
    SmallVector<int64_t> budgetChoice;
    if (chosenPolicy == LoopPolicy::Budget) {
      FailureOr<SmallVector<int64_t>> choice = planBudget(function);
      if (failed(choice))
        return failure();
      budgetChoice = std::move(*choice);
    }
    numLoops += checkpointScans(
        function,
        [&](int64_t trips, unsigned position) -> int64_t {
          switch (chosenPolicy) {
          case LoopPolicy::Sqrt:
            return getSqrtBlock(trips);
          case LoopPolicy::Every:
            return every;
          case LoopPolicy::Budget:
            return budgetChoice[position];
          }
          llvm_unreachable("unknown loop policy");
        },
        /*remarks=*/true);
    return success();
  }

  /// The choices policy=budget measured for the function, by k per loop.
  std::map<SmallVector<int64_t>, StepCost> measured;
  /// The memory-plan pipeline of policy=budget, built in initialize().
  MemoryPlanPipeline memoryPlans;
};

} // namespace
