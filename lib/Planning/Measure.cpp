//===- Measure.cpp - What a rewrite of a step costs -----------------------===//
//
// This file implements the measurement both budget policies make of a
// choice (a rewrite of a copy of the step, its recompute FLOPs and memory
// plan) and the rule that answers a budget.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/Measure.h"

#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/IR/Threading.h"

using namespace mlir;

namespace remat {

FailureOr<StepCost>
measureRewrittenCopy(FunctionOpInterface function,
                     function_ref<void(FunctionOpInterface)> rewrite,
                     const MemoryPlanPipeline &pipeline, bool keepReturned,
                     std::string &error) {
  OwningOpRef<ModuleOp> copy = copyForPlanning(function);
  if (!copy) {
    error = "the function is not in a module";
    return failure();
  }
  auto copyFunction =
      cast<FunctionOpInterface>(copy->lookupSymbol(function.getNameAttr()));
  rewrite(copyFunction);
  StepCost cost;
  cost.recomputeFlops =
      countRecomputeFlops(getBackwardOp(copyFunction.getFunctionBody()));
  FailureOr<StepMemoryPlan> plan =
      pipeline.plan(*copy, function.getName(), keepReturned, error);
  if (failed(plan))
    return failure();
  cost.peakBytes = plan->peakBytes;
  return cost;
}

SmallVector<MeasuredCost>
measureRewrittenCopies(FunctionOpInterface function, size_t count,
                       function_ref<void(size_t, FunctionOpInterface)> rewrite,
                       const MemoryPlanPipeline &pipeline, bool keepReturned) {
  SmallVector<MeasuredCost> results(count);
  parallelFor(function->getContext(), 0, count, [&](size_t index) {
    MeasuredCost &result = results[index];
    FailureOr<StepCost> cost = measureRewrittenCopy(
        function, [&](FunctionOpInterface copy) { rewrite(index, copy); },
        pipeline, keepReturned, result.error);
    if (succeeded(cost))
      result.cost = *cost;
  });
  return results;
}

std::optional<size_t> findCheapestWithin(ArrayRef<StepCost> costs,
                                         int64_t budget) {
  std::optional<size_t> best;
  for (auto [index, cost] : llvm::enumerate(costs)) {
    if (cost.peakBytes > budget)
      continue;
    if (!best ||
        std::make_pair(cost.recomputeFlops, cost.peakBytes) <
            std::make_pair(costs[*best].recomputeFlops, costs[*best].peakBytes))
      best = index;
  }
  return best;
}

} // namespace remat
