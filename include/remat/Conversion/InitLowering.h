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

} // namespace remat

#endif // REMAT_CONVERSION_INITLOWERING_H
