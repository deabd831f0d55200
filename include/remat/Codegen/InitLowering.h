//===- InitLowering.h - Dialects and interfaces lowering needs --*- C++ -*-===//
//
// Declares the registration of every dialect and external interface model
// that remat's lowering pipelines create or rely on.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CONVERSION_INITLOWERING_H
#define REMAT_CONVERSION_INITLOWERING_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace remat {

/// Inserts the dialects of remat's lowering pipelines (and remat's) into
/// `registry` with the bufferization, deallocation and LLVM-translation
/// interface models they need.
void registerLoweringDialects(mlir::DialectRegistry &registry);

/// Also inserts what -remat-lower-cuda needs on top: the GPU and NVVM
/// dialects, the NVVM target (ptxas) and the GPU-to-LLVM-IR translations
/// that embed the cubin and emit the mgpu* calls.
void registerCUDALoweringDialects(mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_CONVERSION_INITLOWERING_H
