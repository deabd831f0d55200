//===- ParallelLoops.h - What the CPU's loop passes read of loops -*- C++
//-*-===//
//
// The trip counts of scf loops and the memory accesses of their bodies, as
// -remat-fuse-parallel-loops and -remat-outline-parallel-loops read them:
// which elements of a buffer each iteration of a parallel loop touches.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_CONVERSION_CPU_PARALLELLOOPS_H
#define REMAT_LIB_CONVERSION_CPU_PARALLELLOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>
#include <tuple>

namespace remat {

/// The trip count of a loop from `lower` to `upper` by `step`, if all three
/// are constants and `step` is positive.
std::optional<uint64_t> getTripCount(mlir::Value lower, mlir::Value upper,
                                     mlir::Value step);

/// The trip counts of every dimension of `loop`, if all are static.
std::optional<llvm::SmallVector<uint64_t>>
getTripCounts(mlir::scf::ParallelOp loop);

/// One load or store of a buffer.
struct Access {
  mlir::Value memref;
  mlir::ValueRange indices;
  /// A vector moves along the memref's last dimension.
  bool isVector;
  bool isWrite;
};

/// The access `op` makes, if it is a memref or vector load or store.
std::optional<Access> getAccess(mlir::Operation *op);

/// The dimension of `buffer` that each of `loop`'s induction variables
/// indexes, if every use of `buffer` in the body is a load or store whose
/// index in one fixed dimension is that induction variable, for each of the
/// loop's dimensions that runs more than once (`trips`), and a vector access
/// moves along a dimension no induction variable indexes: then no two
/// iterations touch the same element. None for a dimension that runs once.
std::optional<llvm::SmallVector<std::optional<unsigned>>>
getPrivateDims(mlir::scf::ParallelOp loop, mlir::Value buffer,
               llvm::ArrayRef<uint64_t> trips);

/// What the loop nest `nest` computes, as the name of the function it is
/// outlined into says it (a profile of the generated code groups its
/// samples by it): "reduction" if some iteration reads what an earlier one
/// computed (a loop-carried value, a vector reduction, or a store whose
/// indices do not depend on an enclosing loop of the nest), else "copy" if
/// it computes no floating-point value (it only moves, broadcasts or
/// transposes elements), else "elementwise".
llvm::StringRef getLoopNestKind(mlir::Operation *nest);

} // namespace remat

#endif // REMAT_LIB_CONVERSION_CPU_PARALLELLOOPS_H
