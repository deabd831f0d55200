//===- HoistDeallocs.cpp - Free buffers right after their last use --------===//
//
// This file implements -remat-hoist-deallocs, which turns the end-of-block
// deallocations of ownership-based buffer deallocation into deallocations at
// each buffer's last use, so the allocator's peak reflects liveness.
//
// Upstream's -optimize-allocation-liveness does this for one case: the
// single dealloc of an op with an Allocate effect, freeing that op's result
// itself, in the same block. After ownership-based deallocation a step also
// frees buffers that no alloc in its block defines (results of calls to
// outlined functions, of scf.for and scf.if) and buffers through casts; those
// would stay at the end of the block and keep the peak of the whole step.
// And upstream orders ops with isBeforeInBlock after each move, which
// renumbers the block every time: quadratic on steps of 10^4 ops. This pass
// moves every memref.dealloc, finds all targets first and then moves.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace remat {
#define GEN_PASS_DEF_REMATHOISTDEALLOCSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Each op's position in its block, numbered once per block: unlike
/// isBeforeInBlock, it survives ops being moved later.
struct BlockPositions {
  unsigned of(Operation *op) {
    auto it = positions.find(op);
    if (it != positions.end())
      return it->second;
    unsigned position = 0;
    for (Operation &inBlock : *op->getBlock())
      positions[&inBlock] = position++;
    return positions.lookup(op);
  }
  DenseMap<Operation *, unsigned> positions;
};

struct RematHoistDeallocsPass
    : remat::impl::RematHoistDeallocsPassBase<RematHoistDeallocsPass> {
  using RematHoistDeallocsPassBase::RematHoistDeallocsPassBase;

  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    if (deallocs.empty())
      return;
    BufferViewFlowAnalysis aliases(getOperation());
    // Every target is found in the original order and the moves come after:
    // a move invalidates the block's op order, and comparing ops
    // (isBeforeInBlock) after each one would renumber the block every time,
    // O(ops x deallocs).
    BlockPositions positions;
    SmallVector<std::pair<memref::DeallocOp, Operation *>> moves;
    for (memref::DeallocOp dealloc : deallocs)
      if (Operation *last = findLastUse(dealloc, aliases, positions))
        moves.push_back({dealloc, last});
    for (auto [dealloc, last] : moves)
      dealloc->moveAfter(last);
  }

  /// The last op of the block of `dealloc` that touches its buffer, if that
  /// is earlier than the dealloc: where the dealloc goes.
  static Operation *findLastUse(memref::DeallocOp dealloc,
                                const BufferViewFlowAnalysis &aliases,
                                BlockPositions &positions) {
    Block *block = dealloc->getBlock();
    Value buffer = dealloc.getMemref();
    Operation *last = nullptr;
    auto later = [&](Operation *op) {
      if (!last || positions.of(last) < positions.of(op))
        last = op;
    };

    if (Operation *def = buffer.getDefiningOp()) {
      Operation *inBlock = block->findAncestorOpInBlock(*def);
      if (!inBlock)
        return nullptr;
      later(inBlock);
    }
    for (Value alias : aliases.resolve(buffer)) {
      if (Operation *def = alias.getDefiningOp())
        if (Operation *inBlock = block->findAncestorOpInBlock(*def))
          later(inBlock);
      for (Operation *user : alias.getUsers()) {
        if (user == dealloc.getOperation())
          continue;
        Operation *inBlock = block->findAncestorOpInBlock(*user);
        // Used outside this block (or returned): the dealloc stays put.
        if (!inBlock)
          return nullptr;
        if (inBlock == dealloc.getOperation())
          continue;
        later(inBlock);
      }
    }
    if (last && positions.of(last) < positions.of(dealloc))
      return last;
    return nullptr;
  }
};

} // namespace
