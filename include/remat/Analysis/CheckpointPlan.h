//===- CheckpointPlan.h - What -remat-checkpoint will do --------*- C++ -*-===//
//
// Declares the checkpoint plan: for a training step and its `remat.segment`
// marks, the forward ops that get recomputed, where their clones go in the
// backward region, the values that stay saved and the segment ops that cannot
// be recomputed. Computing a plan does not touch the IR, so planners and
// reports can predict the effect of a marking; `-remat-checkpoint` applies
// exactly the plan computed here.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_CHECKPOINTPLAN_H
#define REMAT_ANALYSIS_CHECKPOINTPLAN_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace remat {

/// Knobs of the checkpoint transform (the options of `-remat-checkpoint`).
struct CheckpointOptions {
  /// Clone only the backward slice of the needed values (true), or the whole
  /// segment at its first use (false, the reentrant behaviour).
  bool earlyStop = true;
};

/// Where a clone or a rewritten backward use takes a value from.
struct PlannedValue {
  enum class Kind {
    /// A forward value, read as it is (only barrier inputs are of this kind).
    Forward,
    /// Result `number` of planned clone `index`.
    Clone,
    /// Result `number` of planned barrier `index`.
    Barrier,
  };

  static PlannedValue forward(mlir::Value value) {
    return {Kind::Forward, value, 0, 0};
  }
  static PlannedValue clone(unsigned index, unsigned number) {
    return {Kind::Clone, {}, index, number};
  }
  static PlannedValue barrier(unsigned index, unsigned number) {
    return {Kind::Barrier, {}, index, number};
  }

  bool operator==(const PlannedValue &other) const {
    return kind == other.kind && value == other.value && index == other.index &&
           number == other.number;
  }

  Kind kind;
  mlir::Value value;
  unsigned index;
  unsigned number;
};

/// A `remat.barrier` to create immediately before `insertBefore`, ahead of
/// the clones of `level` placed there; it reads the saved inputs of those
/// clones (forward values, or clones made at an earlier point).
struct PlannedBarrier {
  mlir::Operation *insertBefore;
  unsigned level;
  llvm::SmallVector<PlannedValue, 4> inputs;
};

/// A copy of the forward op `original` to create immediately before
/// `insertBefore`, a top-level op of the backward region. `sources[i]` gives
/// the value that stands for `CheckpointPlan::getExternalValues(original)[i]`
/// in the copy (a barrier result or another clone's result).
struct PlannedClone {
  mlir::Operation *original;
  mlir::Operation *insertBefore;
  /// 0 for the recomputation of the outermost segment; k + 1 for a
  /// recomputation of a segment nested k + 1 deep (see CheckpointPlan).
  unsigned level;
  /// The `remat.id` the original gets and the clone names in
  /// `remat.clone_of`, or -1 for a constant (ConstantLike op): copying a
  /// constant recomputes nothing, and canonicalization hoists, merges and
  /// erases constants freely, which bookkeeping attributes would not survive.
  int64_t id;
  llvm::SmallVector<PlannedValue, 4> sources;
};

/// A use inside the backward region that the transform redirects to `value`
/// (a clone's result). `consumer` is the top-level backward op holding it.
struct PlannedUse {
  mlir::OpOperand *operand;
  mlir::Operation *consumer;
  PlannedValue value;
};

/// A segment op that keeps its results saved because it cannot be cloned.
struct UnclonableOp {
  mlir::Operation *op;
  /// Why, as a lowercase clause ("it has memory effects").
  std::string reason;
};

/// The effect of `-remat-checkpoint` on one function.
///
/// Segment ops are the top-level forward ops carrying `remat.segment`; of
/// those, the *recomputable* ones are memory-effect free, have no
/// `remat.policy = "save"` and are not stateful random ops. A value of a
/// recomputable op used by a backward op (other than `remat.barrier` and
/// existing clones) is recomputed; everything else the backward region uses
/// stays saved. The rules:
///
/// * Level 0 (outermost segment, key `path[0]`): before each backward op G in
///   order, each recomputable forward value G needs is cloned from the inputs
///   of its segment (values its ops use but that no recomputable op of the
///   same segment defines); with early stop only its backward slice in the
///   segment, otherwise the whole segment. A clone is made once and reused by
///   later backward ops. The inputs are read through one barrier per
///   insertion point and level, placed before that level's clones.
/// * Level k + 1 (nested segments, key `path[0..k+1]`): a level-k clone C of
///   an op nested at least k + 2 deep, placed before backward op G_P, keeps
///   its uses by other clones and by G_P; a use by a later backward op G_Q
///   is redirected to a level-(k + 1) clone made before G_Q from the inner
///   segment's inputs (the values the level-k clones read), again once and
///   through a barrier. Between G_P and G_Q only the inner inputs stay live.
///
/// Complexity: O(n log n + d * n) for n ops and operands and nesting depth d.
class CheckpointPlan {
public:
  /// Plans the transform of `function`. A function without `remat.backward`
  /// gets an empty plan.
  static CheckpointPlan compute(mlir::FunctionOpInterface function,
                                const CheckpointOptions &options = {});

  /// The function's `remat.backward`, or null.
  mlir::Operation *getBackwardOp() const { return backward; }

  /// The clones, in the order they are to be created: by insertion point,
  /// then level, then a topological order of the forward ops.
  llvm::ArrayRef<PlannedClone> getClones() const { return clones; }

  /// The barriers, in the order they are to be created.
  llvm::ArrayRef<PlannedBarrier> getBarriers() const { return barriers; }

  /// The backward uses redirected to clones, in program order.
  llvm::ArrayRef<PlannedUse> getUses() const { return uses; }

  /// The forward values the backward region uses after the transform (the
  /// saved activations), function arguments first, then in program order.
  llvm::ArrayRef<mlir::Value> getSavedValues() const { return saved; }

  /// The forward ops that get at least one clone, in program order.
  llvm::ArrayRef<mlir::Operation *> getRecomputedOps() const {
    return recomputed;
  }

  /// Segment ops (without `remat.policy = "save"`) that cannot be cloned and
  /// stay saved, in program order.
  llvm::ArrayRef<UnclonableOp> getUnclonableOps() const { return unclonable; }

  /// Stateful random ops (`remat.rng_uniform`) in segments without
  /// `remat.policy = "save"`: the transform must refuse to run while there
  /// are any, since a clone would draw different numbers.
  llvm::ArrayRef<mlir::Operation *> getStatefulRandomOps() const {
    return statefulRandom;
  }

  /// The values a copy of the recomputed op `original` must remap: its
  /// operands, then the values its regions use from outside it.
  llvm::ArrayRef<mlir::Value>
  getExternalValues(mlir::Operation *original) const;

  /// Returns true if the transform changes nothing.
  bool empty() const { return clones.empty(); }

private:
  mlir::Operation *backward = nullptr;
  llvm::SmallVector<PlannedClone, 0> clones;
  llvm::SmallVector<PlannedBarrier, 0> barriers;
  llvm::SmallVector<PlannedUse, 0> uses;
  llvm::SmallVector<mlir::Value, 0> saved;
  llvm::SmallVector<mlir::Operation *, 0> recomputed;
  llvm::SmallVector<UnclonableOp, 0> unclonable;
  llvm::SmallVector<mlir::Operation *, 0> statefulRandom;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value, 4>>
      externalValues;

  friend class CheckpointPlanner;
};

/// Returns why `op` cannot be recomputed by cloning it, as a lowercase
/// clause, or an empty string if it can.
std::string getUnclonableReason(mlir::Operation *op);

} // namespace remat

#endif // REMAT_ANALYSIS_CHECKPOINTPLAN_H
