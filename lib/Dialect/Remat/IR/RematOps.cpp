//===- RematOps.cpp - remat dialect operations ----------------------------===//
//
// This file implements the verifiers and helpers of the remat operations.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace remat;

/// The largest tensor of a training step remat accepts, in bytes (1 TiB):
/// far beyond any device, far below int64 overflow in sums of bytes.
static constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 40;

#define GET_OP_CLASSES
#include "remat/Dialect/Remat/IR/RematOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Attribute helpers
//===----------------------------------------------------------------------===//

SmallVector<int64_t, 2> remat::getSegmentPath(Operation *op) {
  SmallVector<int64_t, 2> path;
  Attribute attr = op->getAttr(RematDialect::kSegmentAttrName);
  if (auto id = dyn_cast_or_null<IntegerAttr>(attr)) {
    path.push_back(id.getInt());
  } else if (auto array = dyn_cast_or_null<ArrayAttr>(attr)) {
    for (Attribute element : array)
      path.push_back(cast<IntegerAttr>(element).getInt());
  }
  return path;
}

void remat::setSegmentPath(Operation *op, ArrayRef<int64_t> path) {
  if (path.empty()) {
    op->removeAttr(RematDialect::kSegmentAttrName);
    return;
  }
  Builder builder(op->getContext());
  Attribute attr = path.size() == 1
                       ? Attribute(builder.getI64IntegerAttr(path.front()))
                       : Attribute(builder.getI64ArrayAttr(path));
  op->setAttr(RematDialect::kSegmentAttrName, attr);
}

Policy remat::getPolicy(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(RematDialect::kPolicyAttrName);
  if (!attr)
    return Policy::None;
  return attr.getValue() == "save" ? Policy::Save : Policy::Recompute;
}

BackwardOp remat::getBackwardOp(Region &functionBody) {
  if (functionBody.empty())
    return {};
  for (Operation &op : functionBody.front())
    if (auto backward = dyn_cast<BackwardOp>(op))
      return backward;
  return {};
}

bool remat::isInBackwardRegion(Operation *op) {
  return op->getParentOfType<BackwardOp>() != nullptr;
}

bool remat::exceedsMaxTensorBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return false;
  uint64_t elements = 1;
  for (int64_t dim : shaped.getShape()) {
    if (dim != 0 && elements > kMaxTensorBytes / uint64_t(dim))
      return true;
    elements *= uint64_t(dim);
  }
  Type element = shaped.getElementType();
  uint64_t width =
      element.isIntOrFloat() ? (element.getIntOrFloatBitWidth() + 7) / 8 : 8;
  return elements * width > kMaxTensorBytes;
}

//===----------------------------------------------------------------------===//
// BackwardOp
//===----------------------------------------------------------------------===//

YieldOp BackwardOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult BackwardOp::verify() {
  Operation *parent = (*this)->getParentOp();
  if (!isa_and_nonnull<FunctionOpInterface>(parent))
    return emitOpError("must be directly inside a function body");

  for (Operation &other :
       llvm::make_range((*this)->getBlock()->begin(), Block::iterator(*this))) {
    if (isa<BackwardOp>(other)) {
      InFlightDiagnostic diag = emitOpError(
          "is the second 'remat.backward' in this function; a training step "
          "has exactly one backward region");
      diag.attachNote(other.getLoc()) << "the first one is here";
      return diag;
    }
  }

  for (OpResult result : getResults()) {
    auto shaped = dyn_cast<ShapedType>(result.getType());
    if (shaped && !shaped.hasStaticShape())
      return emitOpError() << "result #" << result.getResultNumber()
                           << " has the dynamic shape " << result.getType()
                           << "; training steps need static shapes";
  }

  // remat prices every tensor of a step in int64 bytes: absurd sizes (and
  // element counts that overflow int64) are errors, not wrapped prices.
  auto tooLarge = [](Type type) { return exceedsMaxTensorBytes(type); };
  auto diagnoseSize = [&](Location loc, Type type, Twine what) {
    InFlightDiagnostic diag = mlir::emitError(loc)
                              << what << " has the type " << type
                              << " of more than 2^40 bytes (1 TiB); remat "
                                 "rejects tensors of absurd sizes";
    diag.attachNote(getLoc()) << "in the training step of this "
                                 "'remat.backward'";
    return diag;
  };
  for (BlockArgument arg : parent->getRegion(0).getArguments())
    if (tooLarge(arg.getType()))
      return diagnoseSize(arg.getLoc(), arg.getType(),
                          "argument #" + Twine(arg.getArgNumber()));
  WalkResult walk = parent->walk([&](Operation *op) {
    for (OpResult result : op->getResults())
      if (tooLarge(result.getType())) {
        (void)diagnoseSize(op->getLoc(), result.getType(),
                           "'" + op->getName().getStringRef() +
                               "' result #" + Twine(result.getResultNumber()));
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult BackwardOp::verifyRegions() {
  YieldOp yield = getYield();
  if (yield.getOperandTypes() != getResultTypes()) {
    InFlightDiagnostic diag = yield.emitOpError()
                              << "yields " << yield.getNumOperands()
                              << " value(s) of types (" << yield.getOperandTypes()
                              << ") but the enclosing 'remat.backward' returns ("
                              << getResultTypes() << ")";
    diag.attachNote(getLoc()) << "enclosing 'remat.backward' is here";
    return diag;
  }

  // Values flow from the forward part into the backward region, never back:
  // the forward only sees the region's results.
  WalkResult walk = getBody().walk([&](Operation *inner) {
    for (Value result : inner->getResults()) {
      for (Operation *user : result.getUsers()) {
        if (getOperation()->isAncestor(user))
          continue;
        InFlightDiagnostic diag =
            user->emitOpError()
            << "uses a value defined inside 'remat.backward'; ops outside "
               "the backward region may only use its results";
        diag.attachNote(inner->getLoc()) << "the value is defined here";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// BarrierOp
//===----------------------------------------------------------------------===//

LogicalResult BarrierOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}
