//===- RecomputeFromArguments.cpp - Rebuild what arguments make -----------===//
//
// This file implements -remat-recompute-from-arguments, which lets the
// backward region rebuild the forward values that in-place ops make from the
// step's arguments, and the float conversions of arguments (autocast's
// bfloat16 copies of the parameters), instead of keeping them alive across
// the step.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/Transforms/Passes.h"

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/ApplyCheckpointPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATRECOMPUTEFROMARGUMENTSPASS
#include "remat/Dialect/Remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Whether a recomputed op may read `value` as it is: an argument of the step
/// (whose body is `body`) or a constant, which the backward region reads
/// without keeping a buffer of the step alive for it.
bool isAlwaysAvailable(Value value, Block *body) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return argument.getOwner() == body;
  return matchPattern(value, m_Constant());
}

/// Whether `op` converts an always-available tensor to another float type
/// (`arith.truncf` or `arith.extf`: autocast's bfloat16 copy of a
/// parameter), which the backward rebuilds from the argument for the cost
/// of a conversion instead of keeping the copy alive across the step.
bool isConversionOfArgument(Operation *op, Block *body) {
  if (!op || op->getBlock() != body || !isa<arith::TruncFOp, arith::ExtFOp>(op))
    return false;
  return isa<RankedTensorType>(op->getResult(0).getType()) &&
         isAlwaysAvailable(op->getOperand(0), body);
}

/// Whether `op`'s regions (a linalg payload) are free of memory effects and
/// read from outside only values that are always available.
bool hasRecomputableRegions(Operation *op, Block *body) {
  WalkResult effects = op->walk([&](Operation *nested) {
    return nested == op || isMemoryEffectFree(nested) ? WalkResult::advance()
                                                      : WalkResult::interrupt();
  });
  if (effects.wasInterrupted())
    return false;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return llvm::all_of(
      captured, [&](Value value) { return isAlwaysAvailable(value, body); });
}

/// If `op` is a link of an in-place chain, returns its destination (null for
/// the `tensor.empty` that ends a chain); fails otherwise. A link is a
/// destination-style op without reductions and memory effects whose one
/// result is written into its one destination, and whose other operands are
/// always available.
FailureOr<Value>
getChainDestination(Operation *op, Block *body,
                    SmallVectorImpl<Operation *> &conversions) {
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    if (!empty.getDynamicSizes().empty())
      return failure();
    return Value();
  }
  // A conversion of an argument completes a chain too.
  if (isConversionOfArgument(op, body))
    return Value();
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  if (!dps || !dps.hasPureTensorSemantics() || dps.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !isMemoryEffectFree(op))
    return failure();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (linalgOp.getNumReductionLoops() != 0 ||
        !hasRecomputableRegions(op, body))
      return failure();
  } else if (!isa<tensor::InsertSliceOp>(op)) {
    return failure();
  }
  OpOperand *destination = dps.getDpsInitOperand(0);
  for (OpOperand &operand : op->getOpOperands()) {
    if (&operand == destination || isAlwaysAvailable(operand.get(), body))
      continue;
    // A converted parameter (a transpose of its bfloat16 copy) is rebuilt
    // with the chain.
    Operation *producer = operand.get().getDefiningOp();
    if (!isConversionOfArgument(producer, body))
      return failure();
    conversions.push_back(producer);
  }
  return destination->get();
}

/// The longest chain recomputed: exporters' chains are a few ops long (an
/// empty, a fill, an insert_slice), and the bound keeps the pass linear when
/// chains share their inner ops.
constexpr unsigned kMaxChainLength = 16;

/// Returns the ops that make `value`, from the value's own op down to the
/// `tensor.empty` that ends the chain, if they form an in-place chain in the
/// function body; an empty list otherwise. Inner values may have other uses
/// (CSE shares a zero-filled destination between pads): the clone of the
/// chain writes into one fresh buffer all the same.
SmallVector<Operation *> getRecomputableChain(Value value, Block *body) {
  SmallVector<Operation *> chain, conversions;
  Operation *op = value.getDefiningOp();
  while (op && op->getBlock() == body && chain.size() < kMaxChainLength) {
    FailureOr<Value> destination = getChainDestination(op, body, conversions);
    if (failed(destination))
      return {};
    chain.push_back(op);
    // A tensor.empty (or a conversion of an argument) completes the chain;
    // the conversions its links read are rebuilt first (they come last).
    if (!*destination) {
      for (Operation *conversion : conversions)
        if (!llvm::is_contained(chain, conversion))
          chain.push_back(conversion);
      return chain;
    }
    op = destination->getDefiningOp();
  }
  return {};
}

struct RematRecomputeFromArgumentsPass
    : remat::impl::RematRecomputeFromArgumentsPassBase<
          RematRecomputeFromArgumentsPass> {
  using RematRecomputeFromArgumentsPassBase::
      RematRecomputeFromArgumentsPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    BackwardOp backward = getBackwardOp(function.getBody());
    if (!backward)
      return;
    Block *body = backward->getBlock();
    Block &backwardBlock = backward.getBody().front();

    // The forward values the backward region reads, each with the first op
    // of the region's block that reads it (itself or an op nested in it).
    llvm::MapVector<Value, Operation *> firstReaders;
    backward.walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        if (operand.getParentBlock() != body ||
            !isa<RankedTensorType>(operand.getType()) ||
            isa<BlockArgument>(operand))
          continue;
        Operation *reader = backwardBlock.findAncestorOpInBlock(*op);
        Operation *&first = firstReaders[operand];
        if (!first || reader->isBeforeInBlock(first))
          first = reader;
      }
    });

    OpBuilder builder(&getContext());
    for (auto [value, reader] : firstReaders) {
      SmallVector<Operation *> chain = getRecomputableChain(value, body);
      if (chain.empty())
        continue;
      builder.setInsertionPoint(reader);
      IRMapping mapping;
      for (Operation *original : llvm::reverse(chain)) {
        Operation *clone = builder.clone(*original, mapping);
        stripForwardAttrs(clone);
        if (auto id = original->getAttr(RematDialect::kIdAttrName))
          clone->setAttr(RematDialect::kCloneOfAttrName, id);
      }
      value.replaceUsesWithIf(mapping.lookup(value), [&](OpOperand &use) {
        return backward->isProperAncestor(use.getOwner());
      });
      // The forward chain goes if the backward region was its only reader
      // (a conversion read by the chain goes with it).
      for (Operation *original : chain) {
        if (!original->use_empty())
          continue;
        original->erase();
      }
    }
  }
};

} // namespace
