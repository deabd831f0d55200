//===- Passes.h - remat lowering passes -------------------------*- C++ -*-===//
//
// Declares remat's lowering passes and pass pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CONVERSION_PASSES_H
#define REMAT_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace remat {

#define GEN_PASS_DECL
#include "remat/Conversion/Passes.h.inc"

/// Options of the `-remat-lower-cpu` pipeline.
struct RematLowerCPUOptions
    : public mlir::PassPipelineOptions<RematLowerCPUOptions> {
  PassOptions::Option<bool> useBlas{
      *this, "use-blas",
      llvm::cl::desc("Call the BLAS for f32 matmuls (else: loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse chains of elementwise linalg ops"),
      llvm::cl::init(true)};
};

/// Builds the CPU lowering of a (rematerialized) training step: remat ops to
/// upstream ops, elementwise ops to fused linalg, one-shot bufferization
/// across function boundaries, ownership-based deallocation, BLAS calls for
/// matmuls, then the LLVM dialect with heap allocations routed through the
/// runtime's counting allocator (`_mlir_memref_to_llvm_alloc/free`).
void buildRematLowerCPUPipeline(mlir::OpPassManager &pm,
                                const RematLowerCPUOptions &options);

/// Registers `-remat-lower-cpu`.
void registerRematLowerCPUPipeline();

#define GEN_PASS_REGISTRATION
#include "remat/Conversion/Passes.h.inc"

/// Registers every lowering pass and pipeline of remat.
inline void registerRematLoweringPasses() {
  registerRematConversionPasses();
  registerRematLowerCPUPipeline();
}

} // namespace remat

#endif // REMAT_CONVERSION_PASSES_H
