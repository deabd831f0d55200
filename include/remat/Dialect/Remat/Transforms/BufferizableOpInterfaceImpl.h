//===- BufferizableOpInterfaceImpl.h - remat bufferization ------*- C++ -*-===//
//
// Declares the bufferization model of remat's ops.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define REMAT_DIALECT_REMAT_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace remat {

/// Attaches BufferizableOpInterface to `remat.barrier`: on tensors it becomes
/// a barrier on the operands' buffers, aliasing them, reading and writing
/// nothing.
void registerBufferizableOpInterfaceExternalModels(
    mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_DIALECT_REMAT_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
