//===- MatmulToBlas.cpp - linalg matmuls as BLAS calls --------------------===//
//
// This file implements -remat-matmul-to-blas: f32 matmuls on buffers become
// calls into the runtime's BLAS glue, which calls cblas_sgemm; matmuls of
// bf16 or f16 inputs into an f32 result (autocast's) call its 2-byte entry
// points, which convert the inputs to f32 first.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace remat {
#define GEN_PASS_DEF_REMATMATMULTOBLASPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// The memref type every operand is cast to at the call: fully dynamic sizes
/// and strides, so one runtime entry point serves every shape and layout.
MemRefType getDynamicMemRefType(Type elementType, int64_t rank) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(elementType.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, elementType, layout);
}

/// The element type of a matmul's inputs the runtime multiplies: f32 with
/// an f32 result, or bf16 or f16 (both inputs) accumulated into an f32
/// result (autocast's products). Null for anything else.
Type getBlasInputType(linalg::LinalgOp op) {
  auto elementType = [&](unsigned index) {
    return cast<MemRefType>(op->getOperand(index).getType()).getElementType();
  };
  Type a = elementType(0), b = elementType(1), c = elementType(2);
  if (!c.isF32() || a != b || !(a.isF32() || a.isBF16() || a.isF16()))
    return {};
  return a;
}

/// The runtime's suffix for products of `inputType`.
StringRef getTypeSuffix(Type inputType) {
  return inputType.isBF16() ? "bf16" : inputType.isF16() ? "f16" : "f32";
}

/// For each input of a (batch) matmul, whether it is read transposed: its
/// indexing map is the default one with the last two results swapped.
/// Fails if a map is neither, or the result's is not the default.
FailureOr<SmallVector<bool, 2>> getTransposedInputs(linalg::LinalgOp op) {
  SmallVector<AffineMap> defaults =
      isa<linalg::MatmulOp>(op.getOperation())
          ? linalg::MatmulOp::getDefaultIndexingMaps(op.getContext())
          : linalg::BatchMatmulOp::getDefaultIndexingMaps(op.getContext());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[2] != defaults[2])
    return failure();
  SmallVector<bool, 2> transposed;
  for (int64_t index : {0, 1}) {
    AffineMap map = defaults[index];
    SmallVector<AffineExpr> swapped(map.getResults());
    std::swap(swapped[swapped.size() - 2], swapped.back());
    if (maps[index] == map)
      transposed.push_back(false);
    else if (maps[index] ==
             AffineMap::get(map.getNumDims(), 0, swapped, op.getContext()))
      transposed.push_back(true);
    else
      return failure();
  }
  return transposed;
}

/// Returns true if `op` is a (batch) matmul on buffers that sgemm
/// computes: f32, or 2-byte inputs into an f32 result (getBlasInputType),
/// each input read as it is or transposed.
bool isBlasMatmul(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() ||
      !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
    return false;
  FailureOr<SmallVector<bool, 2>> transposed = getTransposedInputs(op);
  if (failed(transposed))
    return false;
  return static_cast<bool>(getBlasInputType(op));
}

/// Returns true if every operand's innermost stride is statically 1, the
/// layouts cuBLAS takes (its leading dimension is the row stride; a
/// transposed input is a view of such a buffer with the strides swapped).
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
                                         Type inputType, int64_t rank) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  MemRefType type = getDynamicMemRefType(inputType, rank);
  MemRefType result = getDynamicMemRefType(Float32Type::get(context), rank);
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name,
      FunctionType::get(context, {type, type, result}, {}));
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
      Type inputType = getBlasInputType(op);
      std::string name =
          (Twine(batched ? "remat_batch_matmul_" : "remat_matmul_") +
           getTypeSuffix(inputType))
              .str();
      // CUDA: cublasSgemm, or cublasGemmEx with f32 compute for 2-byte
      // inputs.
      if (cuda)
        name = (Twine(batched ? "remat_cuda_batch_matmul_"
                              : "remat_cuda_matmul_") +
                getTypeSuffix(inputType))
                   .str();
      func::FuncOp callee =
          getOrDeclareRuntimeFunction(module, name, inputType, rank);
      rewriter.setInsertionPoint(op);
      // A transposed input is passed as a transposed view (strides swapped),
      // which the runtime hands to sgemm as a transposed operand.
      SmallVector<bool, 2> transposed = *getTransposedInputs(op);
      SmallVector<Value> operands;
      for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
        Value value = operand;
        if (index < 2 && transposed[index]) {
          auto permutation = llvm::to_vector(llvm::seq<unsigned>(0, rank));
          std::swap(permutation[rank - 2], permutation[rank - 1]);
          value = memref::TransposeOp::create(
              rewriter, op.getLoc(), value,
              AffineMapAttr::get(
                  AffineMap::getPermutationMap(permutation, &getContext())));
        }
        Type elementType = cast<MemRefType>(value.getType()).getElementType();
        operands.push_back(memref::CastOp::create(
            rewriter, op.getLoc(), getDynamicMemRefType(elementType, rank),
            value));
      }
      func::CallOp::create(rewriter, op.getLoc(), callee, operands);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
