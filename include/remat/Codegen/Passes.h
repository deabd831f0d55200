//===- Passes.h - remat code generation -------------------------*- C++ -*-===//
//
// Declares the CPU and CUDA code generation of a training step: the
// -remat-lower-cpu and -remat-lower-cuda pipelines and their passes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CODEGEN_PASSES_H
#define REMAT_CODEGEN_PASSES_H

#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace remat {

#define GEN_PASS_DECL
#include "remat/Codegen/Passes.h.inc"

/// Adds the CPU's library calls: each BLAS matmul on buffers to a call of
/// the runtime's GEMM (-remat-matmul-to-blas).
void populateMatmulToBlasPatterns(mlir::RewritePatternSet &patterns);

/// Adds the CPU's convolution calls: each convolution on buffers to a call
/// of the runtime's convolution kernels (-remat-conv-to-blas).
void populateConvToBlasPatterns(mlir::RewritePatternSet &patterns);

/// Adds the CUDA target's library calls: each BLAS matmul whose operands
/// cuBLAS takes to a call of the CUDA runtime's cuBLAS glue
/// (-remat-matmul-to-cublas).
void populateMatmulToCublasPatterns(mlir::RewritePatternSet &patterns);

/// Adds the CUDA target's convolution rewrite: each f32 convolution of one
/// group to im2col gathers and matmuls, for the matmul patterns to call
/// cuBLAS on (-remat-conv-to-cublas).
void populateConvToCublasPatterns(mlir::RewritePatternSet &patterns);

/// Options of the `-remat-lower-cpu` pipeline.
struct RematLowerCPUOptions
    : public RematBufferizeOptionsBase<RematLowerCPUOptions> {
  PassOptions::Option<bool> useBlas{
      *this, "use-blas",
      llvm::cl::desc("Call the BLAS for f32 matmuls and the runtime's "
                     "convolution kernels for f32 convolutions (else: "
                     "loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile elementwise and reduction ops into vector code "
                     "(-remat-vectorize; outputs bit-identical without)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Bits of the host's vector registers "
                     "(remat-run passes its CPU's: 128, 256 or 512)"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Evaluate tanh and erf as vector polynomials "
                     "(-remat-approximate-math), not per-lane libm calls"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Run the generated loops' parallel dimensions on the "
                     "runtime's thread pool (-remat-outline-parallel-loops; "
                     "outputs bit-identical without)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> minUnitWork{
      *this, "min-unit-work",
      llvm::cl::desc("Elements a unit of a parallel loop computes at least "
                     "(-remat-outline-parallel-loops)"),
      llvm::cl::init(32768)};
  PassOptions::Option<bool> outlineLoopNests{
      *this, "outline-loop-nests",
      llvm::cl::desc("A function per loop nest, one copy of each identical "
                     "function (-remat-outline-loop-nests, "
                     "-remat-dedupe-functions; outputs bit-identical "
                     "without)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Time each call of the step for the runtime's "
                     "per-kernel profile (-remat-profile-calls)"),
      llvm::cl::init(false)};
};

/// Builds the CPU lowering of a (rematerialized) training step: remat ops to
/// upstream ops, elementwise ops to fused linalg, one-shot bufferization
/// across function boundaries, ownership-based deallocation, BLAS calls for
/// matmuls, vector tiles of elementwise and reduction ops, then the LLVM
/// dialect with heap allocations routed through the
/// runtime's counting allocator (`_mlir_memref_to_llvm_alloc/free`).
void buildRematLowerCPUPipeline(mlir::OpPassManager &pm,
                                const RematLowerCPUOptions &options);

/// Registers `-remat-lower-cpu`.
void registerRematLowerCPUPipeline();

/// Options of the `-remat-lower-cuda` pipeline.
struct RematLowerCUDAOptions
    : public RematBufferizeOptionsBase<RematLowerCUDAOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture the cubin is for"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit whose ptxas and libdevice are used "
                     "(default: $CUDA_HOME, $CUDA_PATH, the ptxas on PATH's, "
                     "/usr/local/cuda)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> useCublas{
      *this, "use-cublas",
      llvm::cl::desc("Call cuBLAS for f32 matmuls (else: GPU loop kernels)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size", llvm::cl::desc("Threads per block of every kernel"),
      llvm::cl::init(256)};
};

/// Adds the loop lowering both targets share: affine and SCF to the CF
/// dialect, strided metadata expanded.
void addRematLoopsToCFPasses(mlir::OpPassManager &pm);

/// Adds the host-code conversion both targets share: memref (heap through
/// the generic, counted `_mlir_memref_to_llvm_*` functions), arith, index,
/// func and CF to the LLVM dialect.
void addRematHostToLLVMPasses(mlir::OpPassManager &pm);

/// Builds the CUDA lowering of a (rematerialized) training step: the shared
/// bufferization, cuBLAS calls for matmuls, every other loop nest a GPU
/// kernel (parallel loops -> gpu.launch -> NVVM), kernels serialized to a
/// cubin with the toolkit's ptxas, host code in the LLVM dialect calling
/// remat's CUDA runtime (`mgpu*`, counting device allocator `remat_cuda_*`).
void buildRematLowerCUDAPipeline(mlir::OpPassManager &pm,
                                 const RematLowerCUDAOptions &options);

/// Registers `-remat-lower-cuda`.
void registerRematLowerCUDAPipeline();

#define GEN_PASS_REGISTRATION
#include "remat/Codegen/Passes.h.inc"

/// Registers the code generation passes and the two lowering pipelines.
inline void registerRematCodegenPassesAndPipelines() {
  registerRematCodegenPasses();
  registerRematLowerCPUPipeline();
  registerRematLowerCUDAPipeline();
}

} // namespace remat

#endif // REMAT_CODEGEN_PASSES_H
