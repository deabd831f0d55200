//===- MatmulToBlas.cpp - linalg matmuls as BLAS calls --------------------===//
//
// This file implements -remat-matmul-to-blas: f32 matmuls on buffers become
// calls into the runtime's BLAS glue, which calls cblas_sgemm.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace remat {
#define GEN_PASS_DEF_REMATMATMULTOBLASPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// The memref type every operand is cast to at the call: fully dynamic sizes
/// and strides, so one runtime entry point serves every shape and layout.
MemRefType getDynamicMemRefType(MLIRContext *context, int64_t rank) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(context, ShapedType::kDynamic, strides);
  return MemRefType::get(shape, Float32Type::get(context), layout);
}

/// Returns true if `op` is a plain f32 (batch) matmul on buffers: default
/// indexing maps and no type conversions, which is what sgemm computes.
bool isBlasMatmul(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    if (matmul.hasUserDefinedMaps())
      return false;
  } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
    if (batch.hasUserDefinedMaps())
      return false;
  } else {
    return false;
  }
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    return cast<MemRefType>(type).getElementType().isF32();
  });
}

/// Returns true if every operand's innermost stride is statically 1, the
/// layouts cuBLAS takes (its leading dimension is the row stride).
bool hasUnitInnermostStrides(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto memref = cast<MemRefType>(type);
    SmallVector<int64_t> strides;
    int64_t offset;
    return succeeded(memref.getStridesAndOffset(strides, offset)) &&
           !strides.empty() && strides.back() == 1;
  });
}

func::FuncOp getOrDeclareRuntimeFunction(ModuleOp module, StringRef name,
                                         int64_t rank) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  MemRefType type = getDynamicMemRefType(context, rank);
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name,
      FunctionType::get(context, {type, type, type}, {}));
  function.setPrivate();
  function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(context));
  return function;
}

struct RematMatmulToBlasPass
    : remat::impl::RematMatmulToBlasPassBase<RematMatmulToBlasPass> {
  using RematMatmulToBlasPassBase::RematMatmulToBlasPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (isBlasMatmul(op) && (!cuda || hasUnitInnermostStrides(op)))
        matmuls.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      bool batched = isa<linalg::BatchMatmulOp>(op.getOperation());
      int64_t rank = batched ? 3 : 2;
      std::string name = batched ? "remat_batch_matmul_f32" : "remat_matmul_f32";
      if (cuda)
        name = batched ? "remat_cuda_batch_matmul_f32" : "remat_cuda_matmul_f32";
      func::FuncOp callee = getOrDeclareRuntimeFunction(module, name, rank);
      rewriter.setInsertionPoint(op);
      MemRefType type = getDynamicMemRefType(&getContext(), rank);
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(
            memref::CastOp::create(rewriter, op.getLoc(), type, operand));
      func::CallOp::create(rewriter, op.getLoc(), callee, operands);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
