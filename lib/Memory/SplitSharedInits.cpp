//===- SplitSharedInits.cpp - One init tensor per destination op ----------===//
//
// This file implements -remat-split-shared-inits, which undoes CSE's sharing
// of empty and filled init tensors between destination-style ops before
// bufferization turns that sharing into long-lived buffers and copies.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATSPLITSHAREDINITSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns true if `value` is a tensor.empty, or a linalg.fill of a scalar
/// into one: an init that carries no data worth sharing.
bool isFreshInit(Value value) {
  if (value.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && fill.hasPureTensorSemantics() &&
         fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
}

/// Re-creates the init chain of `init` at the builder's insertion point.
Value cloneInit(OpBuilder &builder, Value init) {
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
    return builder.clone(*empty)->getResult(0);
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
