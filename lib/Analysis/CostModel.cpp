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
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace remat;

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

int64_t remat::getBlockFlops(Block &block) {
  int64_t flops = 0;
  for (Operation &op : block)
    flops = addFlops(flops, getOpFlops(&op).value_or(0));
  return flops;
}

/// The constant `value` holds, looking through barriers: -remat-checkpoint
/// passes a cloned loop's bounds through one.
static std::optional<int64_t> getConstantThroughBarriers(Value value) {
  while (auto barrier = value.getDefiningOp<BarrierOp>())
    value = barrier.getInputs()[cast<OpResult>(value).getResultNumber()];
  return getConstantIntValue(value);
}

/// The iterations of `loop` if its bounds and step are constants, at most
/// kFlopsLimit.
static std::optional<int64_t> getTripCount(scf::ForOp loop) {
  std::optional<uint64_t> trips;
  if (loop.getUnsignedCmp()) {
    trips = getConstantTripCount(loop.getLowerBound(), loop.getUpperBound(),
                                 loop.getStep(), /*isSigned=*/false);
  } else {
    std::optional<int64_t> lb =
        getConstantThroughBarriers(loop.getLowerBound());
    std::optional<int64_t> ub =
        getConstantThroughBarriers(loop.getUpperBound());
    std::optional<int64_t> step = getConstantThroughBarriers(loop.getStep());
    if (!lb || !ub || !step)
      return std::nullopt;
    Builder builder(loop.getContext());
    trips = getConstantTripCount(builder.getIndexAttr(*lb),
                                 builder.getIndexAttr(*ub),
                                 builder.getIndexAttr(*step));
  }
  if (!trips)
    return std::nullopt;
  return int64_t(std::min<uint64_t>(*trips, kFlopsLimit));
}

std::optional<NestedRun> remat::getNestedRun(Operation *op) {
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<int64_t> trips = getTripCount(loop);
    if (!trips)
      return std::nullopt;
    return NestedRun{loop.getBody(), *trips};
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    Block *thenBlock = branch.thenBlock(), *elseBlock = branch.elseBlock();
    if (elseBlock && getBlockFlops(*elseBlock) > getBlockFlops(*thenBlock))
      return NestedRun{elseBlock, 1};
    return NestedRun{thenBlock, 1};
  }
  return std::nullopt;
}

int64_t remat::countOpsWithoutCostModel(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>())
    return 0;
  if (!getOpFlops(op))
    return 1;
  if (!isa<scf::ForOp, scf::IfOp>(op))
    return 0;
  int64_t count = 0;
  for (Region &region : op->getRegions())
    for (Operation &inner : region.getOps())
      count += countOpsWithoutCostModel(&inner);
  return count;
}

bool remat::isRecomputation(Operation *op) {
  return op->hasAttr(RematDialect::kCloneOfAttrName) ||
         op->hasAttr(RematDialect::kRerunOfAttrName);
}

/// Adds the FLOPs of `op`, a backward op run `times` times, to `counts`;
/// with `recomputeOnly`, those of the recomputations alone (counts.backward
/// stays 0).
static void
countBackwardOp(Operation &op, int64_t times, StepFlops &counts,
                function_ref<void(Operation *, int64_t)> onRecompute,
                bool recomputeOnly = false) {
  if (op.hasTrait<OpTrait::IsTerminator>())
    return;
  if (isRecomputation(&op)) {
    int64_t flops = mulFlops(times, getOpFlops(&op).value_or(0));
    ++counts.recomputedOps;
    counts.recompute = addFlops(counts.recompute, flops);
    if (onRecompute)
      onRecompute(&op, flops);
    return;
  }
  if (std::optional<NestedRun> run = getNestedRun(&op)) {
    for (Operation &inner : *run->block)
      countBackwardOp(inner, mulFlops(times, run->times), counts, onRecompute,
                      recomputeOnly);
    return;
  }
  if (recomputeOnly)
    return;
  counts.backward =
      addFlops(counts.backward, mulFlops(times, getOpFlops(&op).value_or(0)));
}

StepFlops
remat::countStepFlops(Operation *backward,
                      function_ref<void(Operation *, int64_t)> onRecompute) {
  StepFlops counts;
  for (Operation &op : *backward->getBlock()) {
    if (&op == backward)
      break;
    counts.forward = addFlops(counts.forward, getOpFlops(&op).value_or(0));
    counts.opsWithoutCostModel += countOpsWithoutCostModel(&op);
  }
  for (Operation &op : backward->getRegion(0).getOps()) {
    countBackwardOp(op, 1, counts, onRecompute);
    counts.opsWithoutCostModel += countOpsWithoutCostModel(&op);
  }
  return counts;
}

int64_t remat::countRecomputeFlops(Operation *backward) {
  StepFlops counts;
  for (Operation &op : backward->getRegion(0).getOps())
    countBackwardOp(op, 1, counts, /*onRecompute=*/{}, /*recomputeOnly=*/true);
  return counts.recompute;
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

/// Element count of `op`'s first result (1 for a scalar, 0 for an `index`),
/// or -1 for a dynamic shape.
int64_t resultElements(Operation *op) {
  if (op->getNumResults() == 0 || op->getResult(0).getType().isIndex())
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

/// `scf.for` and `scf.if`: the FLOPs of the ops they run (getNestedRun).
template <typename OpTy>
struct NestedCostModel
    : public CostOpInterface::ExternalModel<NestedCostModel<OpTy>, OpTy> {
  int64_t getFlops(Operation *op) const {
    // A branch's FLOPs directly: through getNestedRun, nested branches would
    // price each of their branches three times.
    if (auto branch = dyn_cast<scf::IfOp>(op))
      return std::max(getBlockFlops(*branch.thenBlock()),
                      branch.elseBlock() ? getBlockFlops(*branch.elseBlock())
                                         : 0);
    std::optional<NestedRun> run = getNestedRun(op);
    if (!run)
      return -1;
    return mulFlops(run->times, getBlockFlops(*run->block));
  }
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
  registry.addExtension(+[](MLIRContext *ctx, scf::SCFDialect *) {
    attach<NestedCostModel, scf::ForOp, scf::IfOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attach<FreeCostModel, tensor::EmptyOp, tensor::ExtractSliceOp,
           tensor::InsertSliceOp, tensor::ConcatOp, tensor::ExpandShapeOp,
           tensor::CollapseShapeOp, tensor::ReshapeOp, tensor::CastOp>(ctx);
  });
}
