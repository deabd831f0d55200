//===- Passes.h - remat buffer and memory passes ----------------*- C++ -*-===//
//
// Declares -remat-bufferize, the pipeline from a step's tensors to buffers
// placed in one static arena, and the passes it runs besides the conversion
// of remat's ops.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_MEMORY_PASSES_H
#define REMAT_MEMORY_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::linalg {
class GenericOp;
} // namespace mlir::linalg

namespace remat {

#define GEN_PASS_DECL
#include "remat/Memory/Passes.h.inc"

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

/// The options of -remat-bufferize, which the pipelines that run it
/// (-remat-lower-cpu, -remat-lower-cuda) share: `Derived` is the options
/// struct of the pipeline.
template <typename Derived>
struct RematBufferizeOptionsBase : public mlir::PassPipelineOptions<Derived> {
  mlir::detail::PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse chains of elementwise linalg ops"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> planArena{
      *this, "plan-arena",
      llvm::cl::desc("Place every buffer freed in the step or returned in "
                     "one static arena (-remat-plan-arena)"),
      llvm::cl::init(true)};
  mlir::detail::PassOptions::Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("Reorder the bufferized step's ops for a lower peak "
                     "(-remat-schedule)"),
      llvm::cl::init(true)};
};

/// Options of the `-remat-bufferize` pipeline.
struct RematBufferizeOptions
    : public RematBufferizeOptionsBase<RematBufferizeOptions> {};

/// Builds the tensor-to-buffer half that the CPU and CUDA lowerings share:
/// remat ops to upstream ops, elementwise ops to (fused) linalg, one-shot
/// bufferization, ownership-based deallocation with every dealloc hoisted to
/// its buffer's last use, (with `schedule`) the ops reordered for a lower
/// peak, and (with `planArena`) the step's buffers placed in one static
/// arena.
void buildRematBufferizePipeline(mlir::OpPassManager &pm, bool fuseElementwise,
                                 bool planArena = true, bool schedule = true);

/// Registers `-remat-bufferize`: buildRematBufferizePipeline alone, so that
/// the buffers both lowerings plan and allocate can be read and tested.
void registerRematBufferizePipeline();

#define GEN_PASS_REGISTRATION
#include "remat/Memory/Passes.h.inc"

} // namespace remat

#endif // REMAT_MEMORY_PASSES_H
