//===- LowerCUDA.cpp - The -remat-lower-cuda pipeline ---------------------===//
//
// This file implements the CUDA lowering of a training step, from tensors
// with remat ops down to a cubin per kernel module and host code in the LLVM
// dialect that calls remat's CUDA runtime, and the registration of what it
// needs.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/InitLowering.h"
#include "remat/Codegen/Passes.h"
#include "remat/Memory/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

/// The CUDA toolkit to take ptxas and libdevice from when none is given:
/// $CUDA_HOME, $CUDA_PATH, the toolkit of the ptxas on PATH, or
/// /usr/local/cuda. MLIR looks only at its build-time default otherwise, and
/// without libdevice ptxas fails on the first math function.
static std::string getDefaultToolkitPath() {
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && *value)
      return value;
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  return "/usr/local/cuda";
}

void remat::registerCUDALoweringDialects(DialectRegistry &registry) {
  registerLoweringDialects(registry);
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers the other dialects of a kernel (the branches
  // of its reduction loops, say) through these interfaces. Math ops are
  // left to its libdevice patterns.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}

namespace {

/// Refuses a float64 step (remat-torch-export --float64: f64 arguments or
/// results) with an error on its function: the CUDA runtime has no f64
/// matmul or convolution entry points, and no GPU has run remat's f64
/// kernels. f64 values inside a step of other types (float32 sums widened
/// to f64, a cumsum's accumulator) are lowered as before.
struct RefuseFloat64StepsPass
    : PassWrapper<RefuseFloat64StepsPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RefuseFloat64StepsPass)

  StringRef getName() const override { return "RefuseFloat64StepsPass"; }

  void runOnOperation() override {
    auto isF64 = [](Type type) { return getElementTypeOrSelf(type).isF64(); };
    getOperation()->walk([&](FunctionOpInterface function) {
      if (function.isExternal() ||
          (llvm::none_of(function.getArgumentTypes(), isF64) &&
           llvm::none_of(function.getResultTypes(), isF64)))
        return;
      function.emitError("'")
          << function.getName()
          << "' is a float64 step: -remat-lower-cuda lowers float32, "
             "bfloat16 and float16 steps; float64 steps run on the CPU "
             "(-remat-lower-cpu)";
      signalPassFailure();
    });
  }
};

} // namespace

void remat::buildRematLowerCUDAPipeline(OpPassManager &pm,
                                        const RematLowerCUDAOptions &options) {
  pm.addPass(std::make_unique<RefuseFloat64StepsPass>());
  buildRematBufferizePipeline(pm, options.fuseElementwise, options.planArena,
                              options.schedule);
  if (options.useCublas) {
    // Convolutions as im2col gathers and matmuls first, as on the CPU's
    // runtime, then every matmul to cuBLAS.
    pm.addPass(createRematConvToCublasPass());
    pm.addPass(createRematMatmulToCublasPass());
  }

  // Every remaining loop nest becomes a kernel: linalg to parallel loops
  // linearized over blocks and threads, then gpu.launch, outlined.
  RematMapToGPUPassOptions map;
  map.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createRematMapToGPUPass(map));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One kernel module per distinct loop nest: the repeated layers of a
  // network, and the tiles of a view, launch the same kernels, compiled
  // once.
  pm.addPass(createRematGeneralizeKernelOffsetsPass());
  pm.addPass(createRematDedupeFunctionsPass());
  // A few large modules, each one NVPTX compile, ptxas run and module load.
  pm.addPass(createRematMergeKernelModulesPass());
  addRematLoopsToCFPasses(pm);

  // Device code to NVVM. Math ops become libdevice calls (__nv_expf, ...)
  // without fast-math or flush-to-zero, and no mul/add is contracted, so a
  // kernel computes the same bits wherever its ops are recomputed.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host code to LLVM; heap buffers come from the CUDA runtime's counting
  // device allocator, launches and modules go through its mgpu* functions.
  addRematHostToLLVMPasses(pm);
  pm.addPass(createRematCUDAHostAllocsPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  // Kernels to cubins with the toolkit's ptxas, on all cores.
  RematGpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit.empty() ? getDefaultToolkitPath()
                                               : options.toolkit.getValue();
  binary.compilationTarget = "bin";
  pm.addPass(createRematGpuModuleToBinaryPass(binary));
  pm.addPass(createCanonicalizerPass());
}

void remat::registerRematLowerCUDAPipeline() {
  PassPipelineRegistration<RematLowerCUDAOptions>(
      "remat-lower-cuda",
      "Lower a training step to cubins and host code for CUDA (remat ops, "
      "fusion, bufferization, deallocation, cuBLAS, GPU kernels, NVVM)",
      buildRematLowerCUDAPipeline);
}
