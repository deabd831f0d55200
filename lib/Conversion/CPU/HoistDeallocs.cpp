//===- HoistDeallocs.cpp - Free buffers right after their last use --------===//
//
// This file implements -remat-hoist-deallocs, which turns the end-of-block
// deallocations of ownership-based buffer deallocation into deallocations at
// each buffer's last use, so the allocator's peak reflects liveness.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace remat {
#define GEN_PASS_DEF_REMATHOISTDEALLOCSPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

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
    for (memref::DeallocOp dealloc : deallocs)
      hoist(dealloc, aliases);
  }

  /// Moves `dealloc` after the last op of its block that touches the buffer,
  /// if that is earlier than where it is.
  void hoist(memref::DeallocOp dealloc, const BufferViewFlowAnalysis &aliases) {
    Block *block = dealloc->getBlock();
    Value buffer = dealloc.getMemref();
    Operation *last = nullptr;
    auto later = [&](Operation *op) {
      if (!last || last->isBeforeInBlock(op))
        last = op;
    };

    if (Operation *def = buffer.getDefiningOp()) {
      Operation *inBlock = block->findAncestorOpInBlock(*def);
      if (!inBlock)
        return;
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
          return;
        if (inBlock == dealloc.getOperation())
          continue;
        later(inBlock);
      }
    }
    if (last && last->isBeforeInBlock(dealloc))
      dealloc->moveAfter(last);
  }
};

} // namespace
