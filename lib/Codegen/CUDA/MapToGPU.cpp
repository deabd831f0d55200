//===- MapToGPU.cpp - Loops of a bufferized step as GPU-mapped loops ------===//
//
// This file implements -remat-map-to-gpu: every loop nest of a bufferized
// training step that touches a buffer becomes a pair of scf.parallel loops
// mapped to blocks and threads, ready for -convert-parallel-loops-to-gpu.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"
#include "remat/Codegen/Reductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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
#include "remat/Codegen/Passes.h.inc"
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

/// Splits `linear` into the indices of a row-major iteration space with
/// trip counts `tripCounts` (outermost first).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> tripCounts) {
  SmallVector<Value> indices(tripCounts.size());
  Value rest = linear;
  for (int64_t d = tripCounts.size() - 1; d >= 0; --d) {
    indices[d] = arith::RemUIOp::create(b, loc, rest, tripCounts[d]);
    rest = arith::DivUIOp::create(b, loc, rest, tripCounts[d]);
  }
  return indices;
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
               SmallVector<Value> ivs = delinearize(b, loc, linear, tripCounts);
               for (auto [iv, lb, step] :
                    llvm::zip(ivs, loop.getLowerBound(), loop.getStep()))
                 iv = arith::AddIOp::create(
                     b, loc, lb, arith::MulIOp::create(b, loc, iv, step));
               rewriter.inlineBlockBefore(
                   body, ifOp.thenBlock()->getTerminator(), ivs);
             });
  rewriter.eraseOp(loop);
  return success();
}

/// A reduction with fewer outputs than this runs one block per output
/// (mapReductionToBlocks); with more, one thread per output fills the GPU.
constexpr int64_t kMaxBlockReductionOutputs = 1 << 15;
/// Reductions shorter than this stay one sequential loop per thread.
constexpr int64_t kMinBlockReductionLength = 64;

/// Applies `map` to `ivs`: the indices an operand is read at.
SmallVector<Value> getIndices(OpBuilder &b, Location loc, AffineMap map,
                              ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
    indices.push_back(
        affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
  return indices;
}

/// Replaces a reduction with few outputs (a loss, a bias gradient, a
/// normalization's statistics) by a kernel of one block per output: each of
/// the block's threads folds a strided slice of the reduction into a private
/// accumulator, then a tree in shared memory combines the threads' values,
/// and thread 0 folds the total into the output. One thread per output would
/// leave most of the GPU idle and walk the whole reduction sequentially.
/// The order of the terms depends only on the shapes and the block size, so
/// the kernel computes the same bits on every run, recomputed or not.
LogicalResult mapReductionToBlocks(RewriterBase &rewriter,
                                   linalg::LinalgOp op) {
  Operation *combiner = remat::getReorderableCombiner(op);
  if (!combiner)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> parallelDims, reductionDims;
  int64_t numOutputs = 1, length = 1;
  for (auto [dim, iterator] : llvm::enumerate(iterators)) {
    if (linalg::isParallelIterator(iterator)) {
      parallelDims.push_back(dim);
      numOutputs *= ranges[dim];
    } else {
      reductionDims.push_back(dim);
      length *= ranges[dim];
    }
  }
  if (numOutputs == 0 || numOutputs >= kMaxBlockReductionOutputs ||
      length < kMinBlockReductionLength)
    return failure();

  // Few blocks get many threads each, so that the whole reduction is still
  // spread over the GPU.
  int64_t blockSize = numOutputs < 128 ? 1024 : 256;
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  Value output = op.getDpsInitOperand(0)->get();
  Type accType = cast<MemRefType>(output.getType()).getElementType();
  auto sharedType = MemRefType::get(
      {blockSize}, accType, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));

  rewriter.setInsertionPoint(op);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, numOutputs),
      one, one, arith::ConstantIndexOp::create(rewriter, loc, blockSize), one,
      one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange{}, TypeRange{sharedType});
  Block &kernel = launch.getBody().front();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&kernel);
  Value shared = launch.getWorkgroupAttributions().front();
  Value threadId = launch.getThreadIds().x;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  // The loops' indices: `dims` (outermost first) from `linear`.
  auto setIndices = [&](OpBuilder &b, Value linear, ArrayRef<unsigned> dims,
                        MutableArrayRef<Value> ivs) {
    SmallVector<Value> tripCounts;
    for (unsigned dim : dims)
      tripCounts.push_back(arith::ConstantIndexOp::create(b, loc, ranges[dim]));
    for (auto [dim, index] :
         llvm::zip(dims, delinearize(b, loc, linear, tripCounts)))
      ivs[dim] = index;
  };
  SmallVector<Value> ivs(ranges.size(), zero);
  setIndices(rewriter, launch.getBlockIds().x, parallelDims, ivs);

  // This thread's terms: threadId, threadId + blockSize, ... in the order
  // of the reduction loops.
  Value neutral = arith::ConstantOp::create(
      rewriter, loc, *arith::getNeutralElement(combiner));
  Block *body = op.getBlock();
  auto loop = scf::ForOp::create(
      rewriter, loc, threadId,
      arith::ConstantIndexOp::create(rewriter, loc, length),
      arith::ConstantIndexOp::create(rewriter, loc, blockSize),
      ValueRange{neutral},
      [&](OpBuilder &b, Location loc, Value linear, ValueRange iterArgs) {
        SmallVector<Value> termIvs(ivs);
        setIndices(b, linear, reductionDims, termIvs);
        IRMapping mapping;
        for (OpOperand *input : op.getDpsInputOperands()) {
          Value value = input->get();
          if (isa<MemRefType>(value.getType()))
            value = memref::LoadOp::create(
                b, loc, value,
                getIndices(b, loc, op.getMatchingIndexingMap(input), termIvs));
          mapping.map(op.getMatchingBlockArgument(input), value);
        }
        mapping.map(op.getMatchingBlockArgument(op.getDpsInitOperand(0)),
                    iterArgs.front());
        for (Operation &nested : body->without_terminator()) {
          if (auto index = dyn_cast<linalg::IndexOp>(nested)) {
            mapping.map(index.getResult(), termIvs[index.getDim()]);
            continue;
          }
          b.clone(nested, mapping);
        }
        scf::YieldOp::create(
            b, loc, mapping.lookup(body->getTerminator()->getOperand(0)));
      });

  // A tree over the threads' values in shared memory.
  auto combine = [&](OpBuilder &b, Value lhs, Value rhs) {
    IRMapping mapping;
    mapping.map(combiner->getOperand(0), lhs);
    mapping.map(combiner->getOperand(1), rhs);
    return b.clone(*combiner, mapping)->getResult(0);
  };
  memref::StoreOp::create(rewriter, loc, loop.getResult(0), shared, threadId);
  gpu::BarrierOp::create(rewriter, loc);
  for (int64_t stride = blockSize / 2; stride > 0; stride /= 2) {
    Value strideValue = arith::ConstantIndexOp::create(rewriter, loc, stride);
    Value active = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, threadId, strideValue);
    auto ifOp = scf::IfOp::create(rewriter, loc, active,
                                  /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      Value partner =
          arith::AddIOp::create(rewriter, loc, threadId, strideValue);
      Value lhs = memref::LoadOp::create(rewriter, loc, shared, threadId);
      Value rhs = memref::LoadOp::create(rewriter, loc, shared, partner);
      memref::StoreOp::create(rewriter, loc, combine(rewriter, lhs, rhs),
                              shared, threadId);
    }
    gpu::BarrierOp::create(rewriter, loc);
  }

  // Thread 0 folds the block's total into the output.
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      threadId, zero);
  auto ifOp = scf::IfOp::create(rewriter, loc, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> indices = getIndices(
        rewriter, loc, op.getMatchingIndexingMap(op.getDpsInitOperand(0)), ivs);
    Value init = memref::LoadOp::create(rewriter, loc, output, indices);
    Value total = memref::LoadOp::create(rewriter, loc, shared, zero);
    memref::StoreOp::create(rewriter, loc, combine(rewriter, init, total),
                            output, indices);
  }
  gpu::TerminatorOp::create(rewriter, loc);
  return success();
}

/// Moves `op` into a one-thread grid created in its place, so that it reads
/// device buffers on the device.
void moveIntoOneThread(RewriterBase &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Operation *anchor = nullptr;
  createGrid(rewriter, loc, one, /*blockSize=*/1,
             [&](OpBuilder &b, Location, Value) {
               anchor = arith::ConstantIndexOp::create(b, loc, 0);
             });
  rewriter.moveOpAfter(op, anchor);
  rewriter.eraseOp(anchor);
}

/// Gives a host global that device code reads a device copy, allocated and
/// uploaded (gpu.memcpy) right after `global` and freed after its last use
/// in the block. The host never reads or writes device memory itself.
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
  auto tokenType = gpu::AsyncTokenType::get(rewriter.getContext());
  Value start = gpu::WaitOp::create(rewriter, loc, tokenType, ValueRange{})
                    .getAsyncToken();
  Value copied = gpu::MemcpyOp::create(rewriter, loc, tokenType,
                                       ValueRange{start}, copy, global)
                     .getAsyncToken();
  gpu::WaitOp::create(rewriter, loc, Type(), ValueRange{copied});
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

/// Moves a linalg op without loops (a scalar's update: a loss, a sum's
/// final rounding) into a one-thread grid, where it becomes plain loads and
/// stores: on the host they would read device memory.
LogicalResult mapScalarOp(RewriterBase &rewriter, linalg::LinalgOp op) {
  moveIntoOneThread(rewriter, op);
  rewriter.setInsertionPoint(op);
  if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
    return op.emitOpError("cannot be lowered for the GPU");
  rewriter.eraseOp(op);
  return success();
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

    SmallVector<linalg::LinalgOp> linalgOps, scalarOps;
    func.walk([&](linalg::LinalgOp op) {
      (op.getNumLoops() == 0 ? scalarOps : linalgOps).push_back(op);
    });
    for (linalg::LinalgOp op : linalgOps) {
      if (succeeded(mapReductionToBlocks(rewriter, op))) {
        rewriter.eraseOp(op);
        continue;
      }
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
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
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
      // A sequential loop nest (a reduction to a scalar).
      moveIntoOneThread(rewriter, loop);
    }
    for (linalg::LinalgOp op : scalarOps)
      if (failed(mapScalarOp(rewriter, op)))
        return signalPassFailure();

    // What is left on the host must not touch a buffer: device memory is
    // not the host's to read.
    WalkResult result = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, scf::ParallelOp>(op))
        return WalkResult::skip();
      if (!isa<memref::LoadOp, memref::StoreOp, memref::CopyOp>(op))
        return WalkResult::advance();
      op->emitOpError("reads or writes a device buffer on the host; the CUDA "
                      "lowering runs every buffer access in a kernel");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
  }
};

} // namespace
