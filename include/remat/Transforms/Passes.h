//===- Passes.h - remat transformation passes -------------------*- C++ -*-===//
//
// Declares remat's passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_PASSES_H
#define REMAT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::linalg {
class GenericOp;
} // namespace mlir::linalg

namespace remat {

/// How -remat-mark chooses segments (its `policy` option).
enum class MarkPolicy { Annotations, Sequential, Sqrt, Selective, Budget };

/// The option value that names `policy`, as remat.plan records it.
llvm::StringRef stringifyMarkPolicy(MarkPolicy policy);

/// How -remat-checkpoint-loops chooses each scan's k (its `policy` option).
enum class LoopPolicy { Sqrt, Every, Budget };

/// The output format of -remat-report (its `format` option).
enum class ReportFormat { Text, Json };

#define GEN_PASS_DECL
#include "remat/Transforms/Passes.h.inc"

/// Adds the patterns of -remat-fold-transposes: a (batch) matmul on tensors
/// reads a `linalg.transpose`'s input through a permuted indexing map.
void populateRematFoldTransposesPatterns(mlir::RewritePatternSet &patterns);

/// Adds the patterns of -remat-fold-broadcasts: a `linalg.generic` on
/// tensors reads a `linalg.broadcast`'s input through its indexing map.
void populateRematFoldBroadcastsPatterns(mlir::RewritePatternSet &patterns);

/// Lets each elementwise `linalg.generic` of `function`'s body (a single
/// block, bufferized) write its result into the buffer of an operand that
/// dies at it (-remat-reuse-buffers). Returns how many results it moved.
unsigned reuseDyingOperandBuffers(mlir::func::FuncOp function);

/// The part of -remat-reuse-buffers' rule that does not depend on the order
/// of `block`'s ops: returns the fresh allocation `generic` writes its result
/// into, and appends to `sources` the allocations of its operands whose
/// buffer it may write the result into instead (elementwise, same type,
/// freed only by plain deallocations), in the order the pass tries them;
/// null when there is none. The pass also needs `generic` to be the
/// result's first user and each source's last; -remat-schedule models that
/// part for every order it weighs.
mlir::memref::AllocOp
getReusableOperands(mlir::linalg::GenericOp generic, mlir::Block &block,
                    llvm::SmallVectorImpl<mlir::memref::AllocOp> &sources);

#define GEN_PASS_REGISTRATION
#include "remat/Transforms/Passes.h.inc"

} // namespace remat

#endif // REMAT_TRANSFORMS_PASSES_H
