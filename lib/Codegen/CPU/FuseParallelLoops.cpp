//===- FuseParallelLoops.cpp - One loop for consecutive row loops ---------===//
//
// This file implements -remat-fuse-parallel-loops: consecutive scf.parallel
// loops of a block with the same iteration space become one loop when no
// iteration of either touches an element another iteration of the other
// touches, and one of them writes.
//
//===----------------------------------------------------------------------===//

#include "ParallelLoops.h"
#include "remat/Codegen/Passes.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace remat {
#define GEN_PASS_DEF_REMATFUSEPARALLELLOOPSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Where a memref's elements are: the buffer it views (an allocation, a
/// global or an argument) and, when known, the bytes of that buffer it
/// spans.
struct Place {
  Value root;
  std::optional<std::pair<int64_t, int64_t>> bytes;
};

/// The bytes of a memref of static shape and an element type of whole
/// bytes, if it has both.
std::optional<int64_t> getStaticBytes(MemRefType type) {
  if (!type.getLayout().isIdentity() || type.getElementTypeBitWidth() % 8)
    return std::nullopt;
  return remat::getTypeBytes(type);
}

/// The Place of `value`. Its bytes are known for a `memref.view` at a
/// constant shift of a buffer, and any number of expand_shape,
/// collapse_shape, reshape, subview and cast ops of it (which see no byte
/// outside the view).
Place getPlace(Value value) {
  std::optional<std::pair<int64_t, int64_t>> bytes;
  bool narrowing = true;
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      std::optional<int64_t> size = getStaticBytes(view.getType());
      if (narrowing && !bytes && shift && size)
        bytes = std::make_pair(*shift, *shift + *size);
      else
        bytes = std::nullopt;
      narrowing = false;
      value = view.getSource();
      continue;
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::ReshapeOp,
            memref::SubViewOp, memref::CastOp>(def)) {
      value = cast<ViewLikeOpInterface>(def).getViewSource();
      continue;
    }
    if (auto viewLike = dyn_cast<ViewLikeOpInterface>(def)) {
      // Another view (a reinterpret_cast) may reach past its source.
      bytes = std::nullopt;
      narrowing = false;
      value = viewLike.getViewSource();
      continue;
    }
    break;
  }
  return Place{value, bytes};
}

/// Whether `a` and `b` may share an element.
bool mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  Place pa = getPlace(a), pb = getPlace(b);
  if (pa.root != pb.root) {
    // Two allocations never overlap; two arguments, or a global seen
    // twice, may.
    auto isAllocation = [](Value root) {
      return root.getDefiningOp<memref::AllocOp>() ||
             root.getDefiningOp<memref::AllocaOp>();
    };
    if (isAllocation(pa.root) || isAllocation(pb.root))
      return false;
    auto ga = pa.root.getDefiningOp<memref::GetGlobalOp>();
    auto gb = pb.root.getDefiningOp<memref::GetGlobalOp>();
    if (ga && gb)
      return ga.getName() == gb.getName();
    return true;
  }
  if (pa.bytes && pb.bytes)
    return pa.bytes->first < pb.bytes->second &&
           pb.bytes->first < pa.bytes->second;
  return true;
}

/// The loads and stores of `loop`'s body, or nothing if the body has
/// another op with a memory effect (a call, a transfer, a reduction).
std::optional<SmallVector<remat::Access>> getAccesses(scf::ParallelOp loop) {
  SmallVector<remat::Access> accesses;
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (std::optional<remat::Access> access = remat::getAccess(op)) {
      accesses.push_back(*access);
      return WalkResult::advance();
    }
    // A body's own stack buffer is its iterations' scratch.
    if (isa<scf::ParallelOp, scf::ForOp, scf::ReduceOp, scf::YieldOp,
            memref::AllocaOp>(op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  return accesses;
}

/// Whether `first` and then `second`, run as one loop whose iterations run
/// `first`'s body and then `second`'s, compute what they computed: same
/// iteration spaces, no reductions, and every buffer one writes and the
/// other touches is one value that both index with each induction
/// variable in the same dimension (getPrivateDims), so that each element
/// of it is touched by the same iteration in both.
bool canFuse(scf::ParallelOp first, scf::ParallelOp second) {
  if (first.getNumReductions() || second.getNumReductions() ||
      first.getNumLoops() != second.getNumLoops())
    return false;
  auto sameConstant = [](Value a, Value b) {
    std::optional<int64_t> ca = getConstantIntValue(a);
    return ca && ca == getConstantIntValue(b);
  };
  for (auto [a, b] : llvm::zip_equal(first.getOperands(), second.getOperands()))
    if (!sameConstant(a, b))
      return false;
  std::optional<SmallVector<uint64_t>> trips = remat::getTripCounts(first);
  std::optional<SmallVector<remat::Access>> firstAccesses = getAccesses(first);
  std::optional<SmallVector<remat::Access>> secondAccesses =
      getAccesses(second);
  if (!trips || !firstAccesses || !secondAccesses)
    return false;
  DenseSet<std::pair<Value, Value>> checked;
  for (const remat::Access &a : *firstAccesses) {
    for (const remat::Access &b : *secondAccesses) {
      if (!(a.isWrite || b.isWrite) || !mayAlias(a.memref, b.memref) ||
          !checked.insert({a.memref, b.memref}).second)
        continue;
      if (a.memref != b.memref)
        return false;
      auto dims = remat::getPrivateDims(first, a.memref, *trips);
      if (!dims || dims != remat::getPrivateDims(second, a.memref, *trips))
        return false;
    }
  }
  return true;
}

/// Moves `first`'s body to the front of `second`'s and erases `first`.
void fuse(RewriterBase &rewriter, scf::ParallelOp first,
          scf::ParallelOp second) {
  Block *from = first.getBody(), *to = second.getBody();
  rewriter.eraseOp(from->getTerminator());
  rewriter.inlineBlockBefore(from, to, to->begin(), to->getArguments());
  rewriter.eraseOp(first);
}

struct RematFuseParallelLoopsPass
    : remat::impl::RematFuseParallelLoopsPassBase<RematFuseParallelLoopsPass> {
  using RematFuseParallelLoopsPassBase::RematFuseParallelLoopsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (Block &block : getOperation().getFunctionBody()) {
      // The last loop, while only ops without memory effects or regions
      // (views, constants) followed it.
      scf::ParallelOp previous;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        auto loop = dyn_cast<scf::ParallelOp>(op);
        if (!loop) {
          if (!isMemoryEffectFree(&op) || op.getNumRegions() != 0)
            previous = nullptr;
          continue;
        }
        if (previous && canFuse(previous, loop)) {
          fuse(rewriter, previous, loop);
          ++numFused;
        }
        previous = loop;
      }
    }
  }
};

} // namespace
