//===- remat-opt.cpp - The remat optimizer driver -------------------------===//
//
// This file implements remat-opt: mlir-opt with the remat dialect and passes
// and the upstream dialects and passes that remat's pipelines use.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/InitLowering.h"
#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/InitAllPasses.h"
#include "remat/Support/ParserHazards.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

/// Prints the diagnostics that have no location as command-line errors of
/// remat-opt: they are about options (bad pass option values, checked when
/// the pipeline is parsed or initialized), not about the input file. LLVM's
/// option parser prints its own message, after which MLIR emits an empty
/// error; that one is dropped.
static mlir::LogicalResult printUnlocated(mlir::Diagnostic &diag) {
  if (!llvm::isa<mlir::UnknownLoc>(diag.getLocation()))
    return mlir::failure();
  std::string message = diag.str();
  if (message.empty())
    return mlir::success();
  switch (diag.getSeverity()) {
  case mlir::DiagnosticSeverity::Error:
    llvm::errs() << "remat-opt: error: ";
    break;
  case mlir::DiagnosticSeverity::Warning:
    llvm::errs() << "remat-opt: warning: ";
    break;
  default:
    llvm::errs() << "remat-opt: ";
    break;
  }
  llvm::errs() << message << "\n";
  return mlir::success();
}

/// Sets up the pass pipeline of `config` on `pm`'s context, with the
/// unlocated diagnostics printed by printUnlocated from then on (for the
/// rest of this input). Under -verify-diagnostics every diagnostic stays
/// with the verifier, which reports unlocated ones as unexpected.
static mlir::LogicalResult setupPipeline(const mlir::MlirOptMainConfig &config,
                                         mlir::PassManager &pm) {
  if (!config.shouldVerifyDiagnostics())
    pm.getContext()->getDiagEngine().registerHandler(printUnlocated);
  return config.setupPassPipeline(pm);
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  remat::registerCUDALoweringDialects(registry);
  registry.insert<remat::RematDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::NVVM::NVVMDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect>();

  remat::registerAllRematPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerInlinerPass();

  // The upstream steps of remat's lowering pipelines, to run one at a time.
  mlir::registerConvertElementwiseToLinalgPass();
  mlir::registerLinalgElementwiseOpFusionPass();
  mlir::registerConvertLinalgToLoopsPass();
  mlir::bufferization::registerOneShotBufferizePass();
  mlir::bufferization::registerBufferizationPipelines();
  mlir::registerConvertBufferizationToMemRefPass();
  mlir::registerLowerAffinePass();
  mlir::registerSCFToControlFlowPass();
  mlir::memref::registerExpandStridedMetadataPass();
  mlir::registerConvertMathToLLVMPass();
  mlir::registerConvertMathToLibmPass();
  mlir::registerFinalizeMemRefToLLVMConversionPass();
  mlir::registerArithToLLVMConversionPass();
  mlir::registerConvertIndexToLLVMPass();
  mlir::registerConvertFuncToLLVMPass();
  mlir::registerConvertControlFlowToLLVMPass();
  mlir::registerReconcileUnrealizedCastsPass();
  mlir::registerConvertParallelLoopToGpuPass();
  mlir::registerGpuKernelOutliningPass();
  mlir::registerGpuNVVMAttachTarget();
  mlir::registerConvertGpuOpsToNVVMOps();
  mlir::registerGpuToLLVMConversionPass();
  mlir::registerGpuModuleToBinaryPass();

  llvm::InitLLVM init(argc, argv);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "remat optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  mlir::MlirOptMainConfig pipeline = config;
  config.setPassPipelineSetupFn([pipeline](mlir::PassManager &pm) {
    return setupPipeline(pipeline, pm);
  });

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "remat-opt: " << error << "\n";
    return EXIT_FAILURE;
  }
  // Inputs MLIR 22's parser would crash on are rejected before it runs.
  llvm::SourceMgr hazards;
  hazards.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  if (failed(remat::checkParserHazards(hazards, llvm::errs())))
    return EXIT_FAILURE;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "remat-opt: " << error << "\n";
    return EXIT_FAILURE;
  }
  if (failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
