//===- CostModel.h - Bytes and FLOPs of values and ops ----------*- C++ -*-===//
//
// The cost model of remat's analyses: the bytes of a value and the FLOPs of
// an op, the latter behind CostOpInterface so that any dialect can plug in.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_COSTMODEL_H
#define REMAT_ANALYSIS_COSTMODEL_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

#include "remat/Interfaces/CostOpInterface.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace remat {

/// Emits the error for a result whose bytes getValueBytes cannot tell, at its
/// op: a dynamic shape, or an element of unknown size. `consumer` names what
/// needs the size ("the memory profile", "planning").
mlir::InFlightDiagnostic emitUnsizedResultError(mlir::OpResult result,
                                                llvm::StringRef consumer);

/// FLOP counts saturate at this bound (2^62): a count that reaches it means
/// "at least this many", never a wrapped int64.
constexpr int64_t kFlopsLimit = int64_t(1) << 62;

/// `a + b` and `a * b` for non-negative FLOP counts, saturating at
/// kFlopsLimit.
int64_t addFlops(int64_t a, int64_t b);
int64_t mulFlops(int64_t a, int64_t b);

/// FLOPs of `op` through CostOpInterface, at most kFlopsLimit; std::nullopt
/// if the op has no model or its model cannot tell.
std::optional<int64_t> getOpFlops(mlir::Operation *op);

/// The ops an op with regions runs, for its FLOPs: an `scf.for` with
/// constant bounds runs its body `times` times; an `scf.if` runs the
/// costlier of its branches once (the then branch on a tie; a missing else
/// costs 0). std::nullopt for any other op and for an `scf.for` whose bounds
/// are not constant. Trip counts above kFlopsLimit saturate.
struct NestedRun {
  mlir::Block *block = nullptr;
  int64_t times = 0;
};
std::optional<NestedRun> getNestedRun(mlir::Operation *op);

/// FLOPs of the ops of `block`, those without a model counting 0.
int64_t getBlockFlops(mlir::Block &block);

/// Ops without a cost model in `op`: 1 if getOpFlops cannot tell, else the
/// count over the ops nested in an `scf.for` or `scf.if` (every branch).
int64_t countOpsWithoutCostModel(mlir::Operation *op);

/// Returns true if `op`, in the backward region, recomputes forward work: a
/// clone (`remat.clone_of`) or a loop that reruns iterations of a forward
/// scan (`remat.rerun_of`, written by -remat-checkpoint-loops).
bool isRecomputation(mlir::Operation *op);

/// The FLOPs of a training step by where they run.
struct StepFlops {
  int64_t forward = 0, backward = 0, recompute = 0;
  /// The recomputations (isRecomputation) the backward region runs.
  int64_t recomputedOps = 0;
  /// countOpsWithoutCostModel over the step's ops.
  int64_t opsWithoutCostModel = 0;
};

/// Counts the FLOPs of the step around `backward` (a remat.backward op): its
/// forward ops in the function body, the backward region's own ops and its
/// recomputations, wherever nested in the backward region's `scf.for` and
/// `scf.if` ops, each times the iterations getNestedRun gives the ops around
/// it. `onRecompute`, if given, is called with each recomputation and its
/// FLOPs so counted. -remat-report states these figures and the planners
/// measure their recompute FLOPs with them.
StepFlops countStepFlops(
    mlir::Operation *backward,
    llvm::function_ref<void(mlir::Operation *, int64_t)> onRecompute = {});

/// countStepFlops(backward).recompute, asking the cost model of the
/// recomputations only: the planners measure a marking by this figure, and
/// the other ops' FLOPs, the same for every marking, were a sixth of the
/// budget planner's time on the model.
int64_t countRecomputeFlops(mlir::Operation *backward);

/// Attaches CostOpInterface to upstream ops: every linalg structured op
/// (product of its loop ranges times the arithmetic ops of its payload),
/// elementwise arith and math ops (one per element, one for a scalar; zero
/// for `index` results, which address memory and count loop iterations),
/// data-movement tensor ops and constants (zero), `scf.for` and `scf.if`
/// (getNestedRun: trip count times the body's FLOPs, the costlier branch),
/// and remat's random ops (one per element).
void registerCostModelExternalModels(mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_ANALYSIS_COSTMODEL_H
