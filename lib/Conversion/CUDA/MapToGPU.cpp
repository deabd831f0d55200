//===- MapToGPU.cpp - Loops of a bufferized step as GPU-mapped loops ------===//
//
// This file implements -remat-map-to-gpu: every loop nest of a bufferized
// training step that touches a buffer becomes a pair of scf.parallel loops
// mapped to blocks and threads, ready for -convert-parallel-loops-to-gpu.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATMAPTOGPUPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

gpu::ParallelLoopDimMappingAttr getMapping(OpBuilder &b, gpu::Processor p) {
  AffineMap identity = b.getDimIdentityMap();
  return gpu::ParallelLoopDimMappingAttr::get(b.getContext(), p, identity,
                                              identity);
}

/// Creates `scf.parallel %b = 0 to numBlocks { scf.parallel %t = 0 to
/// blockSize { body(b * blockSize + t) } }` mapped to block x and thread x
/// before the insertion point of `rewriter`.
void createGrid(RewriterBase &rewriter, Location loc, Value numBlocks,
                int64_t blockSize,
                function_ref<void(OpBuilder &, Location, Value)> body) {
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value threads = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  scf::ParallelOp inner;
  auto outer = scf::ParallelOp::create(
      rewriter, loc, ValueRange{c0}, ValueRange{numBlocks}, ValueRange{c1},
      [&](OpBuilder &b, Location loc, ValueRange blockIds) {
        inner = scf::ParallelOp::create(
            b, loc, ValueRange{c0}, ValueRange{threads}, ValueRange{c1},
            [&](OpBuilder &b, Location loc, ValueRange threadIds) {
              Value base = arith::MulIOp::create(b, loc, blockIds[0], threads);
              body(b, loc, arith::AddIOp::create(b, loc, base, threadIds[0]));
            });
      });
  (void)gpu::setMappingAttr(outer,
                            {getMapping(rewriter, gpu::Processor::BlockX)});
  (void)gpu::setMappingAttr(inner,
                            {getMapping(rewriter, gpu::Processor::ThreadX)});
}

/// Replaces the multi-dimensional `loop` by a grid over its linearized
/// iteration space; each thread recovers its indices by division.
LogicalResult mapParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                              int64_t blockSize) {
  if (!loop.getInitVals().empty())
    return loop.emitOpError("with reductions cannot be mapped to the GPU");
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> tripCounts;
  Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(rewriter, loc, ub, lb);
    Value trip = arith::CeilDivUIOp::create(rewriter, loc, span, step);
    tripCounts.push_back(trip);
    total = arith::MulIOp::create(rewriter, loc, total, trip);
  }
  Value threads = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  Value numBlocks = arith::CeilDivUIOp::create(rewriter, loc, total, threads);

  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  createGrid(rewriter, loc, numBlocks, blockSize,
             [&](OpBuilder &b, Location loc, Value linear) {
               Value inBounds = arith::CmpIOp::create(
                   b, loc, arith::CmpIPredicate::ult, linear, total);
               auto ifOp = scf::IfOp::create(b, loc, inBounds,
                                             /*withElseRegion=*/false);
               OpBuilder::InsertionGuard guard(b);
               b.setInsertionPointToStart(ifOp.thenBlock());
               SmallVector<Value> ivs(tripCounts.size());
               Value rest = linear;
               for (int64_t d = tripCounts.size() - 1; d >= 0; --d) {
                 Value index =
                     arith::RemUIOp::create(b, loc, rest, tripCounts[d]);
                 rest = arith::DivUIOp::create(b, loc, rest, tripCounts[d]);
                 Value scaled =
                     arith::MulIOp::create(b, loc, index, loop.getStep()[d]);
                 ivs[d] = arith::AddIOp::create(b, loc, loop.getLowerBound()[d],
                                                scaled);
               }
               rewriter.inlineBlockBefore(
                   body, ifOp.thenBlock()->getTerminator(), ivs);
             });
  rewriter.eraseOp(loop);
  return success();
}

/// Moves a sequential loop nest (a reduction to a scalar) into a
/// one-thread grid, so that it reads device buffers on the device.
void mapSequentialLoop(RewriterBase &rewriter, scf::ForOp loop) {
  rewriter.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Operation *anchor = nullptr;
  createGrid(rewriter, loc, one, /*blockSize=*/1,
             [&](OpBuilder &b, Location, Value) {
               anchor = arith::ConstantIndexOp::create(b, loc, 0);
             });
  rewriter.moveOpAfter(loop, anchor);
  rewriter.eraseOp(anchor);
}

/// Gives a host global that device code reads a device copy, allocated and
/// filled on the host right after `global` and freed after its last use in
/// the block.
void copyGlobalToDevice(RewriterBase &rewriter, memref::GetGlobalOp global) {
  SmallVector<OpOperand *> deviceUses;
  for (OpOperand &use : global->getUses())
    if (isa<linalg::LinalgOp, memref::CopyOp>(use.getOwner()))
      deviceUses.push_back(&use);
  if (deviceUses.empty())
    return;
  Location loc = global.getLoc();
  rewriter.setInsertionPointAfter(global);
  auto type = cast<MemRefType>(global.getType());
  Value copy = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
  memref::CopyOp::create(rewriter, loc, global, copy);
  Block *block = global->getBlock();
  Operation *last = copy.getDefiningOp();
  for (OpOperand *use : deviceUses) {
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(copy); });
    Operation *ancestor = block->findAncestorOpInBlock(*use->getOwner());
    if (!ancestor) {
      last = block->getTerminator()->getPrevNode();
      break;
    }
    if (last->isBeforeInBlock(ancestor))
      last = ancestor;
  }
  rewriter.setInsertionPointAfter(last);
  memref::DeallocOp::create(rewriter, loc, copy);
}

struct RematMapToGPUPass
    : remat::impl::RematMapToGPUPassBase<RematMapToGPUPass> {
  using RematMapToGPUPassBase::RematMapToGPUPassBase;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (blockSize <= 0) {
      func.emitError("block-size must be positive, got ") << blockSize;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());

    // Copies first, so that the host-side copies of globals made below
    // stay on the host.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      rewriter.setInsertionPoint(op);
      linalg::CopyOp::create(rewriter, op.getLoc(), ValueRange{op.getSource()},
                             ValueRange{op.getTarget()});
      rewriter.eraseOp(op);
    }
    SmallVector<memref::GetGlobalOp> globals;
    func.walk([&](memref::GetGlobalOp op) { globals.push_back(op); });
    for (memref::GetGlobalOp op : globals)
      copyGlobalToDevice(rewriter, op);

    SmallVector<linalg::LinalgOp> linalgOps;
    func.walk([&](linalg::LinalgOp op) { linalgOps.push_back(op); });
    for (linalg::LinalgOp op : linalgOps) {
      rewriter.setInsertionPoint(op);
      if (!op.hasPureBufferSemantics() ||
          failed(linalg::linalgOpToParallelLoops(rewriter, op))) {
        op.emitOpError("cannot be lowered to parallel loops for the GPU");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }

    SmallVector<Operation *> roots;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<scf::ParallelOp, scf::ForOp>(op))
        return WalkResult::advance();
      roots.push_back(op);
      return WalkResult::skip();
    });
    for (Operation *root : roots) {
      if (auto loop = dyn_cast<scf::ParallelOp>(root)) {
        if (failed(mapParallelLoop(rewriter, loop, blockSize)))
          return signalPassFailure();
        continue;
      }
      auto loop = cast<scf::ForOp>(root);
      if (loop->getNumResults() != 0) {
        loop.emitOpError("with results stays on the host, where it cannot "
                         "read device buffers");
        return signalPassFailure();
      }
      mapSequentialLoop(rewriter, loop);
    }
  }
};

} // namespace
