//===- ApplyCheckpointPlan.h - Carry out a checkpoint plan ------*- C++ -*-===//
//
// Declares the rewrite that carries out a checkpoint plan
// (remat/Analysis/CheckpointPlan.h computes it without touching the IR).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_APPLYCHECKPOINTPLAN_H
#define REMAT_TRANSFORMS_APPLYCHECKPOINTPLAN_H

#include "remat/Analysis/CheckpointPlan.h"

namespace remat {

/// Applies `plan`, computed on the function as it is now: creates the
/// planned barriers and clones in the backward region, gives originals and
/// clones their `remat.id` / `remat.clone_of` and redirects the planned uses.
/// Then the backward ops that CSE could merge into a forward op whose results
/// the backward region does not read get their forward operands through a
/// barrier (see -remat-checkpoint). This is what `-remat-checkpoint` does;
/// planners call it on a copy to measure a marking exactly.
void applyCheckpointPlan(const CheckpointPlan &plan);

/// Removes remat's per-op attributes from `clone` and the ops nested in it:
/// segment membership and policies describe the forward ops only, and the
/// dialect rejects `remat.segment` in the backward region. Every pass that
/// copies a forward op into the backward region calls it on the copy.
void stripForwardAttrs(mlir::Operation *clone);

} // namespace remat

#endif // REMAT_TRANSFORMS_APPLYCHECKPOINTPLAN_H
