//===- MemoryProfile.h - Saved activations and peak memory ------*- C++ -*-===//
//
// Declares the memory profile of a training step: which forward values the
// backward region keeps alive (the saved activations) and the static peak of
// live tensor bytes over the step's program order.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_MEMORYPROFILE_H
#define REMAT_ANALYSIS_MEMORYPROFILE_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"

namespace remat {

/// A forward value used inside the backward region.
struct SavedValue {
  mlir::Value value;
  int64_t bytes = 0;
  /// Segment path of the defining op ({} for unmarked ops and arguments).
  llvm::SmallVector<int64_t, 2> segment;
  bool isArgument = false;
};

/// What a training step holds in memory.
///
/// The schedule is program order: the forward ops, then the ops of the
/// backward region, then the rest of the function (its return); an op
/// nested in a region counts at its ancestor in the schedule. A tensor is
/// live from its defining op to its last use, both included. The static peak
/// predicts the heap bytes of code lowered by -remat-lower-cpu, so it counts
/// what that code allocates:
///   - function arguments are the caller's and are not counted (their saved
///     bytes are reported apart), nor are constants (static globals);
///   - `tensor.empty` has no storage until an op writes into it, nor has a
///     `linalg.fill` of one that only serves as a destination (lowering
///     re-creates it right before each writer);
///   - a destination-style op whose init dies at the op writes into the
///     init's storage, and an elementwise op into that of an operand of its
///     type that dies at the op (as lowering's elementwise fusion does);
///   - an elementwise result whose only user is elementwise is fused into
///     that user and never stored; barriers, reshapes, casts and the backward
///     region's results share their source's storage.
struct MemoryProfile {
  llvm::SmallVector<mlir::Operation *> schedule;
  llvm::SmallVector<SavedValue> saved; ///< arguments first, then by def
  int64_t savedActivationBytes = 0;    ///< saved values defined by ops
  int64_t savedArgumentBytes = 0;      ///< saved function arguments
  int64_t peakBytes = 0;
  mlir::Operation *peakOp = nullptr;    ///< where the peak is reached
  llvm::SmallVector<int64_t> liveBytes; ///< per schedule position
};

/// Returns true if `result` gets storage of its own in the memory profile
/// (it may still share it in place with a value that dies where it is
/// defined): false for constants, empties, aliases (barriers, reshapes,
/// casts), fresh inits and elementwise results fused into their only user.
bool hasOwnStorage(mlir::OpResult result);

/// Returns true if `op` is lowered to a (fused) linalg op that writes its
/// result into an operand of the result's type when that operand dies at
/// `op`: an elementwise op with one ranked tensor result.
bool writesIntoOperand(mlir::Operation *op);

/// Returns true if elementwise fusion computes a result of `producer` inside
/// `consumer` when `consumer` is its only use: an elementwise (or
/// counter-based random) op read by an elementwise op, which is when
/// linalg's elementwise fusion folds a producer into its consumer. Such a
/// result never exists as a tensor.
bool canFuseElementwise(mlir::Operation *producer, mlir::Operation *consumer);

/// Computes the memory profile of `function`, which must hold a
/// `remat.backward`. Fails with a diagnostic on a tensor of dynamic shape.
/// O(n log n) in the number of values and uses.
llvm::FailureOr<MemoryProfile>
computeMemoryProfile(mlir::FunctionOpInterface function);

} // namespace remat

#endif // REMAT_ANALYSIS_MEMORYPROFILE_H
