//===- Bufferize.cpp - From a step's tensors to planned buffers -----------===//
//
// This file implements -remat-bufferize, the tensor-to-buffer half the CPU
// and CUDA lowerings share and the pipeline MemoryPlan runs to measure a
// step: remat ops to upstream ops, (fused) linalg, one-shot bufferization,
// deallocation at each buffer's last use, the schedule of least peak and the
// static arena.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"
#include "remat/Memory/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void remat::buildRematBufferizePipeline(OpPassManager &pm, bool fuseElementwise,
                                        bool planArena, bool schedule) {
  // Tensors: what the backward can rebuild from arguments is not kept for it,
  // remat ops to upstream ops, elementwise ops to (fused) linalg.
  pm.addNestedPass<func::FuncOp>(createRematRecomputeFromArgumentsPass());
  pm.addPass(createConvertRematToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createRematFoldTransposesPass());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createRematFoldBroadcastsPass());
  if (fuseElementwise)
    pm.addNestedPass<func::FuncOp>(createRematFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createRematSplitSharedInitsPass());

  // Buffers: one-shot across function boundaries, then ownership-based
  // deallocation so every buffer is freed after its last use and
  // rematerialization shows in the allocator's peak. Barriers go only now.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A scan's carry is a new buffer each iteration (scf.for on tensors).
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createRematStripBarriersPass());
  // The scatter-add of rows' loop over columns: the form the CPU's
  // outlining and the CUDA mapping take.
  pm.addPass(createForallToParallelLoopPass());
  // Upstream's buffer deallocation pipeline, with the deallocs whose
  // operands are distinct allocations split in linear time before the
  // simplification, which compares every pair of operands.
  memref::ExpandReallocPassOptions expandRealloc;
  expandRealloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(expandRealloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createRematSplitDeallocsPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // The clones deallocation inserts (a buffer returned twice, say) become
  // allocations and copies.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createRematHoistDeallocsPass());
  // The order of least peak, then in-place reuse in that order.
  if (schedule)
    pm.addNestedPass<func::FuncOp>(createRematSchedulePass());
  pm.addNestedPass<func::FuncOp>(createRematReuseBuffersPass());
  // Float32 sums accumulate in float64, a buffer of the result's shape
  // placed by the arena like any other.
  pm.addNestedPass<func::FuncOp>(createRematWidenSumsPass());
  // Every buffer freed within the step, or returned, becomes a view into
  // one arena allocated once: the static plan is what runs.
  if (planArena)
    pm.addNestedPass<func::FuncOp>(createRematPlanArenaPass());
}

void remat::registerRematBufferizePipeline() {
  PassPipelineRegistration<RematBufferizeOptions>(
      "remat-bufferize",
      "Bufferize a training step the way both lowerings do (remat ops, "
      "fusion, bufferization, deallocation, the static arena)",
      [](OpPassManager &pm, const RematBufferizeOptions &options) {
        buildRematBufferizePipeline(pm, options.fuseElementwise,
                                    options.planArena, options.schedule);
      });
}
