//===- ParallelLoops.cpp - What the CPU's loop passes read of loops -------===//

#include "ParallelLoops.h"

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

std::optional<uint64_t> remat::getTripCount(Value lower, Value upper,
                                            Value step) {
  return getConstantTripCount(lower, upper, step);
}

std::optional<SmallVector<uint64_t>>
remat::getTripCounts(scf::ParallelOp loop) {
  SmallVector<uint64_t> trips;
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<uint64_t> trip = getTripCount(lb, ub, step);
    if (!trip)
      return std::nullopt;
    trips.push_back(*trip);
  }
  return trips;
}

std::optional<remat::Access> remat::getAccess(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return Access{load.getMemRef(), load.getIndices(), false, false};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return Access{store.getMemRef(), store.getIndices(), false, true};
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return Access{load.getBase(), load.getIndices(), true, false};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return Access{store.getBase(), store.getIndices(), true, true};
  return std::nullopt;
}

std::optional<SmallVector<std::optional<unsigned>>>
remat::getPrivateDims(scf::ParallelOp loop, Value buffer,
                      ArrayRef<uint64_t> trips) {
  unsigned rank = cast<MemRefType>(buffer.getType()).getRank();
  // The dimension each induction variable indexes, fixed by the first use.
  SmallVector<std::optional<unsigned>> dims(trips.size());
  for (OpOperand &use : buffer.getUses()) {
    if (!loop->isProperAncestor(use.getOwner()))
      continue;
    std::optional<Access> access = getAccess(use.getOwner());
    if (!access || access->memref != buffer)
      return std::nullopt;
    for (auto [iv, trip, dim] :
         llvm::zip_equal(loop.getInductionVars(), trips, dims)) {
      if (trip <= 1)
        continue;
      auto position = llvm::find(access->indices, iv);
      if (position == access->indices.end())
        return std::nullopt;
      unsigned at = std::distance(access->indices.begin(), position);
      if ((access->isVector && at == rank - 1) || (dim && *dim != at))
        return std::nullopt;
      dim = at;
    }
  }
  return dims;
}
