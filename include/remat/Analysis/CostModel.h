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

#include <optional>

#include "remat/Interfaces/CostOpInterface.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace remat {

/// Bytes of `value`: element count times element size (getElementBytes) for
/// statically shaped tensors, memrefs and vectors, the size of the scalar
/// otherwise. std::nullopt for a dynamic shape or a type without a size.
std::optional<int64_t> getValueBytes(mlir::Value value);

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

/// Attaches CostOpInterface to upstream ops: every linalg structured op
/// (product of its loop ranges times the arithmetic ops of its payload),
/// elementwise arith and math ops (one per element, one for a scalar),
/// data-movement tensor ops and constants (zero), and remat's random ops
/// (one per element).
void registerCostModelExternalModels(mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_ANALYSIS_COSTMODEL_H
