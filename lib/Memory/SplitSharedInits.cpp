//===- SplitSharedInits.cpp - One init tensor per destination op ----------===//
//
// This file implements -remat-split-shared-inits, which undoes CSE's sharing
// of empty and filled init tensors between destination-style ops before
// bufferization turns that sharing into long-lived buffers and copies, and
// fills the inits that are splat constants instead of copying them from a
// global.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATSPLITSHAREDINITSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns the splat value of `value` if it is a statically shaped splat
/// tensor constant.
std::optional<TypedAttr> getSplatInit(Value value) {
  SplatElementsAttr splat;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      !matchPattern(value, m_Constant(&splat)))
    return std::nullopt;
  if (auto scalar = dyn_cast<TypedAttr>(splat.getSplatValue<Attribute>()))
    return scalar;
  return std::nullopt;
}

/// Returns true if `value` is a tensor.empty, a linalg.fill of a scalar
/// into one, or a splat constant: an init that carries no data worth
/// sharing. Bufferized, a splat constant is a global, and a writer gets a
/// copy of it (ResNet's and GPT-2's embedding gradients: a 154 MB global of
/// zeros in the step's object, copied each step); a fill writes the same
/// bits.
bool isFreshInit(Value value) {
  if (value.getDefiningOp<tensor::EmptyOp>() || getSplatInit(value))
    return true;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && fill.hasPureTensorSemantics() &&
         fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
}

/// Re-creates the init chain of `init` at the builder's insertion point: a
/// splat constant as a fill of its scalar into a tensor.empty.
Value cloneInit(OpBuilder &builder, Value init) {
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
    return builder.clone(*empty)->getResult(0);
  if (std::optional<TypedAttr> scalar = getSplatInit(init)) {
    auto type = cast<RankedTensorType>(init.getType());
    Location loc = init.getLoc();
    Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                          type.getElementType());
    Value value = arith::ConstantOp::create(builder, loc, *scalar);
    return linalg::FillOp::create(builder, loc, value, empty).getResult(0);
  }
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Value empty = cloneInit(builder, fill.getDpsInits()[0]);
  IRMapping mapping;
  mapping.map(fill.getDpsInits()[0], empty);
  return builder.clone(*fill, mapping)->getResult(0);
}

struct RematSplitSharedInitsPass
    : remat::impl::RematSplitSharedInitsPassBase<RematSplitSharedInitsPass> {
  using RematSplitSharedInitsPassBase::RematSplitSharedInitsPassBase;

  void runOnOperation() override {
    OpBuilder builder(&getContext());
    llvm::SetVector<Operation *> fills, empties;
    getOperation().walk([&](DestinationStyleOpInterface op) {
      // A fill that is itself an init chain is handled by its users.
      if (isa<linalg::FillOp>(op.getOperation()))
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        Value value = init.get();
        if (!isa<RankedTensorType>(value.getType()) || !isFreshInit(value))
          continue;
        // Right before the writer, even for the last user of a shared init:
        // a tensor.empty becomes an allocation where it is defined.
        builder.setInsertionPoint(op);
        init.set(cloneInit(builder, value));
        if (auto fill = value.getDefiningOp<linalg::FillOp>()) {
          fills.insert(fill);
          value = fill.getDpsInits()[0];
        }
        // An empty or a constant.
        empties.insert(value.getDefiningOp());
      }
    });
    // Drop the original chains left unused: fills first, then empties.
    for (Operation *op : llvm::concat<Operation *const>(fills, empties))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
