//===- ParallelLoops.cpp - What the CPU's loop passes read of loops -------===//

#include "ParallelLoops.h"

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
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

/// Returns true if `value` is `iv` or computed from it inside `nest`.
static bool dependsOn(Value value, Value iv, Operation *nest,
                      DenseMap<std::pair<Value, Value>, bool> &memo) {
  if (value == iv)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || !nest->isAncestor(def))
    return false;
  auto [it, inserted] = memo.try_emplace({value, iv}, false);
  if (!inserted)
    return it->second;
  bool depends = llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, iv, nest, memo);
  });
  memo[{value, iv}] = depends;
  return depends;
}

StringRef remat::getLoopNestKind(Operation *nest) {
  bool computes = false;
  DenseMap<std::pair<Value, Value>, bool> memo;
  WalkResult result = nest->walk([&](Operation *op) {
    if (isa<vector::ReductionOp, vector::MultiDimReductionOp>(op))
      return WalkResult::interrupt();
    if (auto loop = dyn_cast<scf::ForOp>(op);
        loop && loop.getNumRegionIterArgs() != 0)
      return WalkResult::interrupt();
    if (auto loop = dyn_cast<scf::ParallelOp>(op);
        loop && !loop.getInitVals().empty())
      return WalkResult::interrupt();
    if (std::optional<Access> access = getAccess(op);
        access && access->isWrite) {
      // A store that every iteration of an enclosing loop makes to the
      // same element accumulates there.
      for (Operation *loop = op->getParentOp(); loop && nest->isAncestor(loop);
           loop = loop->getParentOp()) {
        SmallVector<Value> ivs;
        if (auto forOp = dyn_cast<scf::ForOp>(loop))
          ivs.push_back(forOp.getInductionVar());
        else if (auto parallel = dyn_cast<scf::ParallelOp>(loop))
          llvm::append_range(ivs, parallel.getInductionVars());
        for (Value iv : ivs)
          if (llvm::none_of(access->indices, [&](Value index) {
                return dependsOn(index, iv, nest, memo);
              }))
            return WalkResult::interrupt();
      }
    }
    if (!computes && !op->hasTrait<OpTrait::ConstantLike>() &&
        isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
      computes = llvm::any_of(op->getResultTypes(), [](Type type) {
        return isa<FloatType>(getElementTypeOrSelf(type));
      });
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return "reduction";
  return computes ? "elementwise" : "copy";
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
