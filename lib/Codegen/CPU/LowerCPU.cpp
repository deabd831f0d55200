//===- LowerCPU.cpp - The -remat-lower-cpu pipeline -----------------------===//
//
// This file implements the CPU lowering of a training step, from tensors with
// remat ops down to the LLVM dialect: the shared bufferization, then the
// CPU's runtime calls, vector code, loops and LLVM.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"
#include "remat/Memory/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

/// Drops the fast-math flags that math-extend-to-supported-types and
/// arith-emulate-unsupported-floats put on the conversions they insert:
/// with `contract`, canonicalization folds extf(truncf(x)) into x, which
/// skips the rounding of a 2-byte result between two ops of a fused loop
/// (PyTorch rounds every op's result), and would make a value's bits depend
/// on whether fusion kept it in a buffer: a recomputed segment would no
/// longer be bit-identical to the forward. Then expands the bf16
/// conversions into integer code (arith-expand's bf16 patterns alone, so
/// other ops lower as before): round to nearest even on every host, with
/// or without AVX512-BF16, and no runtime library's conversion routines.
struct RoundEveryResultPass
    : PassWrapper<RoundEveryResultPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RoundEveryResultPass)

  StringRef getName() const override { return "RoundEveryResultPass"; }

  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
        return;
      auto fastMath = cast<arith::ArithFastMathInterface>(op);
      op->setAttr(fastMath.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(op->getContext(),
                                                arith::FastMathFlags::none));
    });
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns),
                                  GreedyRewriteConfig().enableFolding(false))))
      signalPassFailure();
  }
};

} // namespace

void remat::buildRematLowerCPUPipeline(OpPassManager &pm,
                                       const RematLowerCPUOptions &options) {
  buildRematBufferizePipeline(pm, options.fuseElementwise, options.planArena,
                              options.schedule);
  if (options.useBlas) {
    pm.addPass(createRematMatmulToBlasPass());
    pm.addPass(createRematConvToBlasPass());
  }

  // Loops, then LLVM; heap allocations call the runtime's counting
  // allocator (_mlir_memref_to_llvm_aligned_alloc / _free), which sees each
  // buffer's exact size rather than size plus alignment padding.
  pm.addNestedPass<func::FuncOp>(createRematStridedCopiesToLinalgPass());
  // With vector code or without: the sums' order is the split's either way.
  pm.addNestedPass<func::FuncOp>(createRematSplitReductionsPass());
  if (options.vectorize) {
    RematVectorizePassOptions vectorize;
    vectorize.vectorBits = options.vectorBits;
    pm.addNestedPass<func::FuncOp>(createRematVectorizePass(vectorize));
  }
  // Parallel dimensions become scf.parallel (reductions scf.for), and the
  // outermost parallel loops with enough work run on the runtime's pool.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  if (options.vectorize)
    pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass());
  // Runs of loops over the same rows become one loop (the same bits).
  pm.addNestedPass<func::FuncOp>(createRematFuseParallelLoopsPass());
  if (options.parallelLoops) {
    RematOutlineParallelLoopsPassOptions outline;
    outline.minUnitWork = options.minUnitWork;
    pm.addPass(createRematOutlineParallelLoopsPass(outline));
  }
  // A function per loop nest, one copy of each: LLVM's loop passes are
  // superlinear in the loops of one function, and repeated layers give the
  // same nests.
  if (options.outlineLoopNests) {
    pm.addPass(createRematOutlineLoopNestsPass());
    pm.addPass(createRematDedupeFunctionsPass());
  }
  if (options.profile)
    pm.addPass(createRematProfileCallsPass());
  // The passes that lower one function without reading another run on
  // the module's functions in parallel (nestAny): after outlining, the
  // hundreds of nests' functions.
  OpPassManager &eachFunction = pm.nestAny();
  addRematLoopsToCFPasses(eachFunction);
  // bf16 and f16 (autocast's 2-byte types): every op computes in f32 and
  // rounds its result to nearest even (math ops and arith ops alike, as
  // PyTorch's CPU kernels of these types do), and bf16 conversions become
  // integer code (RoundEveryResultPass), so no host needs AVX512-BF16
  // instructions or a runtime library's conversion routines, and every host
  // rounds alike.
  eachFunction.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  eachFunction.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  eachFunction.addPass(std::make_unique<RoundEveryResultPass>());
  // tanh and erf as vector polynomials; then the math ops LLVM has
  // intrinsics or expansions for (rsqrt, exp, ...); only the rest become
  // libm calls, on vectors one lane at a time (vector.extract and insert,
  // so before vector-to-llvm).
  if (options.approximateMath)
    eachFunction.addPass(createRematApproximateMathPass());
  eachFunction.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Vector reductions stay ordered (no reassociation): the vector code adds
  // in the scalar loops' order.
  if (options.vectorize) {
    OpPassManager &eachVectorFunction = pm.nestAny();
    eachVectorFunction.addPass(createConvertVectorToLLVMPass());
    // The vectorizer pads reads with ub.poison.
    eachVectorFunction.addPass(createUBToLLVMConversionPass());
    pm.addPass(createRematWidenBoolVectorsPass());
  }
  addRematHostToLLVMPasses(pm);
  OpPassManager &eachLLVMFunction = pm.nestAny();
  eachLLVMFunction.addPass(createReconcileUnrealizedCastsPass());
  eachLLVMFunction.addPass(createCanonicalizerPass());
}

void remat::registerRematLowerCPUPipeline() {
  PassPipelineRegistration<RematLowerCPUOptions>(
      "remat-lower-cpu",
      "Lower a training step to the LLVM dialect for the CPU (remat ops, "
      "fusion, bufferization, deallocation, BLAS, LLVM)",
      buildRematLowerCPUPipeline);
}
