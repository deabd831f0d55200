//===- Pipelines.cpp - The lowering both targets share --------------------===//
//
// This file implements the parts of a training step's lowering that the CPU
// and CUDA pipelines share: the registration of the dialects and interface
// models they need, the tensor-to-buffer pipeline (-remat-bufferize), the
// loops to CF and the host code to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/InitLowering.h"
#include "remat/Conversion/Passes.h"
#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Dialect/Remat/Transforms/BufferizableOpInterfaceImpl.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void remat::registerLoweringDialects(DialectRegistry &registry) {
  registry.insert<RematDialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect>();
  remat::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

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

void remat::addRematLoopsToCFPasses(OpPassManager &pm) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
}

void remat::addRematHostToLLVMPasses(OpPassManager &pm) {
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // Arithmetic converts one function at a time, all of them in parallel.
  OpPassManager &eachFunction = pm.nestAny();
  eachFunction.addPass(createArithToLLVMConversionPass());
  eachFunction.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
}

void remat::registerRematBufferizePipeline() {
  PassPipelineRegistration<RematLowerCPUOptions>(
      "remat-bufferize",
      "Bufferize a training step the way both lowerings do (remat ops, "
      "fusion, bufferization, deallocation, the static arena)",
      [](OpPassManager &pm, const RematLowerCPUOptions &options) {
        buildRematBufferizePipeline(pm, options.fuseElementwise,
                                    options.planArena, options.schedule);
      });
}
