//===- PlanArena.cpp - One static arena per training step -----------------===//
//
// This file implements -remat-plan-arena, which allocates a bufferized
// step's planned heap buffers as views into one arena at the offsets of
// remat::planArena.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/MemoryPlan.h"
#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace remat {
#define GEN_PASS_DEF_REMATPLANARENAPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

struct RematPlanArenaPass
    : remat::impl::RematPlanArenaPassBase<RematPlanArenaPass> {
  using RematPlanArenaPassBase::RematPlanArenaPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    StepBuffers buffers =
        collectStepBuffers(function, mustKeepReturnedBuffers(function));
    numUnplanned += buffers.unplanned.size();
    if (buffers.allocs.empty() && buffers.loopArenas.empty())
      return;
    ArenaPlan plan = planArena(buffers.getArenaLifetimes());
    numPlanned += buffers.allocs.size();
    arenaBytes += plan.size;

    Block &entry = function.getBody().front();
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    Location loc = function.getLoc();
    auto arenaType = MemRefType::get({plan.size}, builder.getI8Type());
    auto arena = memref::AllocOp::create(
        builder, loc, arenaType, builder.getI64IntegerAttr(kArenaAlignment));
    for (auto [alloc, offset] : llvm::zip(buffers.allocs, plan.offsets))
      placeInArena(alloc, arena, offset);
    // A loop's buffers at their offsets in its own arena, itself one buffer
    // of the step's.
    for (auto [index, loopArena] : llvm::enumerate(buffers.loopArenas)) {
      int64_t base = plan.offsets[buffers.allocs.size() + index];
      numPlanned += loopArena.allocs.size();
      for (auto [alloc, offset] :
           llvm::zip(loopArena.allocs, loopArena.plan.offsets))
        placeInArena(alloc, arena, base + offset);
    }
    if (!llvm::is_contained(buffers.escapes, true)) {
      builder.setInsertionPoint(entry.getTerminator());
      memref::DeallocOp::create(builder, loc, arena);
    }
  }

  /// Replaces `alloc` by a view of `arena` at `offset` and drops its
  /// deallocations.
  void placeInArena(memref::AllocOp alloc, Value arena, int64_t offset) {
    OpBuilder builder(alloc);
    Location loc = alloc.getLoc();
    Value shift = arith::ConstantIndexOp::create(builder, loc, offset);
    auto view = memref::ViewOp::create(builder, loc, alloc.getType(), arena,
                                       shift, ValueRange());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(view.getResult());
    alloc.erase();
  }
};

} // namespace
