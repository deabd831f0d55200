//===- CheckpointScans.h - Save every k-th carry of a scan ------*- C++ -*-===//
//
// Declares the rewrites of -remat-checkpoint-loops (docs/Loops.md): a
// forward scan saves every k-th carry instead of stacking what its reverse
// backward loop reads, and the marked ops of a scan's body are recomputed
// per iteration. The pass's policies choose the k (Planning).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_CHECKPOINTSCANS_H
#define REMAT_TRANSFORMS_CHECKPOINTSCANS_H

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace remat {

/// The forward `scf.for` ops directly in the body of `function`, before its
/// backward region.
llvm::SmallVector<mlir::scf::ForOp> getForwardLoops(mlir::func::FuncOp function,
                                                    BackwardOp backwardOp);

/// The trip count n of `loop` if it is a scan checkpointScans rewrites: it
/// runs over index from 0 to a constant n step 1 without memory effects,
/// and one loop directly in `backwardOp` reads its stacks at slot n - 1 - j
/// (docs/Loops.md); none otherwise.
std::optional<int64_t> matchCheckpointableScan(mlir::scf::ForOp loop,
                                               BackwardOp backwardOp);

/// The largest divisor of n not above sqrt(n): policy=sqrt's k for a scan
/// of n iterations.
int64_t getSqrtBlock(int64_t n);

/// The k a policy picks for the scan of `trips` iterations at `position`
/// among the forward loops directly in the function body; 0 leaves it alone.
using ChooseBlock = llvm::function_ref<int64_t(int64_t trips, unsigned)>;

/// Rewrites the scans of `function` at the k `choose` picks, in program
/// order, with a remark per loop if `remarks`. The pass runs this on the
/// step and policy=budget on copies of it, so a prediction is of the very
/// rewrite the pass then makes. Returns the number of rewritten scans.
unsigned checkpointScans(mlir::func::FuncOp function, ChooseBlock choose,
                         bool remarks);

/// Recomputes the marked ops of the scans' bodies in `function` per
/// iteration (docs/Loops.md, "Segments inside a scan's body"), with a
/// remark per scan if `remarks`. A loop whose body holds marks but that is
/// not a scan this pass rewrites is an error: its marks would be ignored.
mlir::LogicalResult recomputeBodySegments(mlir::func::FuncOp function,
                                          bool remarks);

} // namespace remat

#endif // REMAT_TRANSFORMS_CHECKPOINTSCANS_H
