//===- RematOps.h - remat dialect operations --------------------*- C++ -*-===//
//
// Declares the operations of the remat dialect and helpers to read the
// discardable attributes of remat's IR contract.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_IR_REMATOPS_H
#define REMAT_DIALECT_REMAT_IR_REMATOPS_H

#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Interfaces/CostOpInterface.h"
#include "llvm/ADT/SetVector.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "remat/Dialect/Remat/IR/RematOps.h.inc"

namespace remat {

/// The selective-checkpointing policy of an op (`remat.policy`).
enum class Policy { None, Save, Recompute };

/// Returns the segment path of `op` from the outermost to the innermost
/// segment: `remat.segment = 3` gives {3}, `[0, 2]` gives {0, 2}, no attribute
/// gives {}. The attribute must have been verified.
llvm::SmallVector<int64_t, 2> getSegmentPath(mlir::Operation *op);

/// Sets `remat.segment` on `op`: an i64 for a path of one, an array otherwise;
/// an empty path removes the attribute.
void setSegmentPath(mlir::Operation *op, llvm::ArrayRef<int64_t> path);

/// Formats a segment path as `remat.segment` spells it: `3` or `[0, 2]`;
/// `unmarked` for the empty path. Every diagnostic and report uses it.
std::string formatSegmentPath(llvm::ArrayRef<int64_t> path);

/// Returns the `remat.policy` of `op`.
Policy getPolicy(mlir::Operation *op);

/// Returns the bytes of one element of `type`: its bits rounded up to bytes
/// for integers and floats (i1 takes a byte), 8 for index, twice the part for
/// complex numbers, the whole vector for a static vector; std::nullopt for a
/// type of unknown size.
std::optional<int64_t> getElementBytes(mlir::Type type);

/// Returns the bytes of a value of `type`: the element count of a statically
/// shaped tensor, memref or vector times getElementBytes of its element, the
/// element bytes of a scalar; std::nullopt for a dynamic shape or an element
/// of unknown size. Every price remat puts on a value (saved bytes, peaks,
/// buffer sizes, stack slots) is this one.
std::optional<int64_t> getTypeBytes(mlir::Type type);

/// Returns getTypeBytes of `value`'s type.
inline std::optional<int64_t> getValueBytes(mlir::Value value) {
  return getTypeBytes(value.getType());
}

/// Returns the saved values of the training step of `backward`: the values
/// defined outside its region (forward values and function arguments) that
/// an op inside it uses, in the order a walk of the region first uses them.
/// They stay live from their definition to their last backward use.
llvm::SetVector<mlir::Value> getSavedValues(BackwardOp backward);

/// Returns the iterations of a loop from `lower` to `upper` by `step` (signed
/// or unsigned bounds) when all three are constants, with upstream's rule
/// (mlir::constantTripCount): 0 when `upper` is not above `lower`,
/// std::nullopt for a step that is not a positive constant or a count beyond
/// 64 bits. Every trip count remat reads of a loop is this one.
std::optional<uint64_t> getConstantTripCount(mlir::OpFoldResult lower,
                                             mlir::OpFoldResult upper,
                                             mlir::OpFoldResult step,
                                             bool isSigned = true);

/// Emits an error at the first tensor, memref or vector of more than 1 TiB
/// in `root` (`root` included): arguments and results of every function
/// (declarations too), block arguments and op results, and fails; `annotate`
/// may attach notes. remat prices every tensor in int64 bytes, so absurd
/// sizes are errors rather than wrapped prices: the verifier of
/// `remat.backward` checks its step, remat-run the whole module it lowers.
mlir::LogicalResult verifyTensorSizes(
    mlir::Operation *root,
    llvm::function_ref<void(mlir::InFlightDiagnostic &)> annotate = {});

/// Returns the `remat.backward` op of a function body, or null.
BackwardOp getBackwardOp(mlir::Region &functionBody);

/// Checks that the marks (`remat.segment`, `remat.policy`) of `function` can
/// take effect: they sit on forward ops of a training step, directly in its
/// body and before its `remat.backward`. Emits a located error at the first
/// mark that cannot (in a function without a backward region, after it, or
/// on an op nested in another op's region, such as a loop body, which the
/// dialect verifier rejects too but which IR that skipped verification can
/// still hold) and fails. Passes that read marks call it, so that no mark is
/// silently ignored.
mlir::LogicalResult verifyMarksTakeEffect(mlir::FunctionOpInterface function);

/// Returns the value whose memory `value` designates: through view-like ops
/// (subviews, casts, reshapes) and barriers, which pass their inputs on.
mlir::Value getMemoryBase(mlir::Value value);

/// Returns true if `op` is nested (at any depth) in a `remat.backward` region.
bool isInBackwardRegion(mlir::Operation *op);

/// Returns true if `type` is a statically shaped tensor, memref or vector of
/// more than 2^40 bytes (1 TiB), element counts that overflow int64 included:
/// remat prices every tensor in int64 bytes and rejects absurd sizes.
bool exceedsMaxTensorBytes(mlir::Type type);

} // namespace remat

#endif // REMAT_DIALECT_REMAT_IR_REMATOPS_H
