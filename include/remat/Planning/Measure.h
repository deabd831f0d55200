//===- Measure.h - What a rewrite of a step costs ---------------*- C++ -*-===//
//
// Declares how the planners measure a choice of what to recompute: the
// rewrite the pass would make (a marking checkpointed by -remat-checkpoint,
// scans checkpointed by -remat-checkpoint-loops) applied to a copy of the
// step, whose recompute FLOPs and memory plan are its cost; and the one rule
// every budget is answered by.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_MEASURE_H
#define REMAT_PLANNING_MEASURE_H

#include "remat/Memory/MemoryPlan.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace remat {

/// What a training step costs after a rewrite (a marking checkpointed by
/// -remat-checkpoint, scans by -remat-checkpoint-loops): its static peak, as
/// -remat-report states it, and the FLOPs its backward region recomputes.
struct StepCost {
  int64_t peakBytes = 0;
  int64_t recomputeFlops = 0;
};

/// The cost of `function` rewritten by `rewrite` on a copy made for planning
/// (copyForPlanning): the recompute FLOPs of the copy's backward region and
/// its memory plan's peak, with returned buffers kept apart if
/// `keepReturned` (mustKeepReturnedBuffers of `function`, which the copy
/// cannot tell). Fails with the reason in `error`. Thread-safe: reads
/// `function` only.
llvm::FailureOr<StepCost> measureRewrittenCopy(
    mlir::FunctionOpInterface function,
    llvm::function_ref<void(mlir::FunctionOpInterface)> rewrite,
    const MemoryPlanPipeline &pipeline, bool keepReturned, std::string &error);

/// What measureRewrittenCopy gives for one rewrite: its cost, or why its
/// memory plan failed.
struct MeasuredCost {
  std::optional<StepCost> cost;
  std::string error;
};

/// measureRewrittenCopy of `count` rewrites of `function`, the i-th made by
/// `rewrite(i, copy)`, on the MLIR context's thread pool (one bufferized
/// copy per rewrite and thread at once); the results are those of one
/// thread, in order.
llvm::SmallVector<MeasuredCost> measureRewrittenCopies(
    mlir::FunctionOpInterface function, size_t count,
    llvm::function_ref<void(size_t, mlir::FunctionOpInterface)> rewrite,
    const MemoryPlanPipeline &pipeline, bool keepReturned);

/// The cheapest of `costs` with peak <= `budget`: fewest recompute FLOPs,
/// then lowest peak, then first; none if none fits. Both budget policies
/// answer their budget by this rule.
std::optional<size_t> findCheapestWithin(llvm::ArrayRef<StepCost> costs,
                                         int64_t budget);

} // namespace remat

#endif // REMAT_PLANNING_MEASURE_H
