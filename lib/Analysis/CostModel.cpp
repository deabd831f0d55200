//===- CostModel.cpp - Bytes and FLOPs of values and ops ------------------===//
//
// This file implements remat's cost model and its external models on
// upstream ops.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace remat;

std::optional<int64_t> remat::getValueBytes(Value value) {
  Type type = value.getType();
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!shaped.hasStaticShape())
      return std::nullopt;
    std::optional<int64_t> element = getElementBytes(shaped.getElementType());
    if (!element)
      return std::nullopt;
    return shaped.getNumElements() * *element;
  }
  return getElementBytes(type);
}

int64_t remat::addFlops(int64_t a, int64_t b) {
  assert(a >= 0 && b >= 0 && "FLOP counts are non-negative");
  a = std::min(a, kFlopsLimit);
  b = std::min(b, kFlopsLimit);
  return a > kFlopsLimit - b ? kFlopsLimit : a + b;
}

int64_t remat::mulFlops(int64_t a, int64_t b) {
  assert(a >= 0 && b >= 0 && "FLOP counts are non-negative");
  if (a == 0 || b == 0)
    return 0;
  return a > kFlopsLimit / b ? kFlopsLimit : std::min(a * b, kFlopsLimit);
}

std::optional<int64_t> remat::getOpFlops(Operation *op) {
  auto cost = dyn_cast<CostOpInterface>(op);
  if (!cost)
    return std::nullopt;
  int64_t flops = cost.getFlops();
  if (flops < 0)
    return std::nullopt;
  return std::min(flops, kFlopsLimit);
}

InFlightDiagnostic remat::emitUnsizedResultError(OpResult result,
                                                 StringRef consumer) {
  InFlightDiagnostic diag = result.getOwner()->emitOpError()
                            << "result #" << result.getResultNumber()
                            << " of type " << result.getType();
  auto shaped = dyn_cast<ShapedType>(result.getType());
  if (shaped && !shaped.hasStaticShape())
    diag << " has a dynamic shape; " << consumer << " needs static shapes";
  else
    diag << " has elements of unknown size; " << consumer
         << " needs integer, float, index, complex or vector elements";
  return diag;
}

namespace {

/// Element count of `op`'s first result (1 for a scalar), or -1 for a
/// dynamic shape.
int64_t resultElements(Operation *op) {
  if (op->getNumResults() == 0)
    return 0;
  auto shaped = dyn_cast<ShapedType>(op->getResult(0).getType());
  if (!shaped)
    return 1;
  return shaped.hasStaticShape() ? shaped.getNumElements() : -1;
}

/// linalg structured ops: loop-range product times payload arithmetic.
template <typename OpTy>
struct LinalgCostModel
    : public CostOpInterface::ExternalModel<LinalgCostModel<OpTy>, OpTy> {
  int64_t getFlops(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    int64_t iterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range))
        return -1;
      iterations = mulFlops(iterations, range);
    }
    int64_t payload = 0;
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      if (!isa<linalg::IndexOp, arith::ConstantOp>(inner))
        ++payload;
    return mulFlops(iterations, payload);
  }
};

/// Elementwise arith and math ops: one operation per element.
template <typename OpTy>
struct ElementwiseCostModel
    : public CostOpInterface::ExternalModel<ElementwiseCostModel<OpTy>, OpTy> {
  int64_t getFlops(Operation *op) const { return resultElements(op); }
};

/// Ops that move or materialize data without arithmetic.
template <typename OpTy>
struct FreeCostModel
    : public CostOpInterface::ExternalModel<FreeCostModel<OpTy>, OpTy> {
  int64_t getFlops(Operation *op) const { return 0; }
};

template <template <typename> class Model, typename... Ops>
void attach(MLIRContext *context) {
  (Ops::template attachInterface<Model<Ops>>(*context), ...);
}

} // namespace

void remat::registerCostModelExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attach<LinalgCostModel, linalg::GenericOp, linalg::MatmulOp,
           linalg::BatchMatmulOp, linalg::FillOp, linalg::TransposeOp,
           linalg::BroadcastOp, linalg::ReduceOp, linalg::MapOp,
           linalg::ElementwiseOp, linalg::MatvecOp, linalg::DotOp,
           linalg::CopyOp, linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp,
           linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attach<ElementwiseCostModel, arith::AddFOp, arith::SubFOp, arith::MulFOp,
           arith::DivFOp, arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
           arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp, arith::CmpFOp,
           arith::SelectOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
           arith::CmpIOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
           arith::UIToFPOp, arith::FPToSIOp, arith::FPToUIOp, arith::ExtUIOp,
           arith::ExtSIOp, arith::TruncIOp, arith::AndIOp, arith::OrIOp,
           arith::XOrIOp, arith::MaxSIOp, arith::MinSIOp, arith::DivSIOp,
           arith::RemSIOp>(ctx);
    attach<FreeCostModel, arith::ConstantOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attach<ElementwiseCostModel, math::TanhOp, math::ExpOp, math::LogOp,
           math::RsqrtOp, math::SqrtOp, math::ErfOp, math::AbsFOp, math::PowFOp,
           math::SinOp, math::CosOp, math::FmaOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attach<FreeCostModel, tensor::EmptyOp, tensor::ExtractSliceOp,
           tensor::InsertSliceOp, tensor::ConcatOp, tensor::ExpandShapeOp,
           tensor::CollapseShapeOp, tensor::ReshapeOp, tensor::CastOp>(ctx);
  });
}
