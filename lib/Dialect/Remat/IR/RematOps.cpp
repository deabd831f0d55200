//===- RematOps.cpp - remat dialect operations ----------------------------===//
//
// This file implements the verifiers, costs and helpers of the remat
// operations.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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

std::string remat::formatSegmentPath(ArrayRef<int64_t> path) {
  if (path.empty())
    return "unmarked";
  if (path.size() == 1)
    return std::to_string(path.front());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(path, os);
  os << ']';
  return text;
}

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

std::optional<int64_t> remat::getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(type)) {
    std::optional<int64_t> part = getElementBytes(complex.getElementType());
    return part ? std::optional<int64_t>(2 * *part) : std::nullopt;
  }
  if (auto vector = dyn_cast<VectorType>(type)) {
    if (vector.isScalable())
      return std::nullopt;
    std::optional<int64_t> element = getElementBytes(vector.getElementType());
    return element ? std::optional<int64_t>(vector.getNumElements() * *element)
                   : std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> remat::getTypeBytes(Type type) {
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

llvm::SetVector<Value> remat::getSavedValues(BackwardOp backward) {
  llvm::SetVector<Value> saved;
  backward.getBody().walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!backward->isAncestor(operand.getParentRegion()->getParentOp()))
        saved.insert(operand);
  });
  return saved;
}

std::optional<uint64_t> remat::getConstantTripCount(OpFoldResult lower,
                                                    OpFoldResult upper,
                                                    OpFoldResult step,
                                                    bool isSigned) {
  std::optional<int64_t> stepValue = getConstantIntValue(step);
  if (!stepValue || *stepValue <= 0)
    return std::nullopt;
  // Upstream's rule on one bit more than the bounds have: `upper - lower`
  // of a loop over a whole 64-bit range does not wrap.
  MLIRContext *context = isa<Attribute>(step)
                             ? cast<Attribute>(step).getContext()
                             : cast<Value>(step).getContext();
  auto widen = [&](OpFoldResult bound) -> std::optional<OpFoldResult> {
    std::optional<std::pair<APInt, bool>> value = getConstantAPIntValue(bound);
    if (!value)
      return std::nullopt;
    const APInt &narrow = value->first;
    unsigned bits = narrow.getBitWidth() + 1;
    APInt wide = isSigned ? narrow.sext(bits) : narrow.zext(bits);
    return OpFoldResult(
        IntegerAttr::get(IntegerType::get(context, bits), wide));
  };
  std::optional<OpFoldResult> lb = widen(lower), ub = widen(upper),
                              st = widen(step);
  if (!lb || !ub || !st)
    return std::nullopt;
  std::optional<APInt> trips =
      constantTripCount(*lb, *ub, *st, isSigned,
                        [](Value, Value, bool) -> std::optional<llvm::APSInt> {
                          return std::nullopt;
                        });
  if (!trips || trips->getActiveBits() > 64)
    return std::nullopt;
  return trips->getZExtValue();
}

BackwardOp remat::getBackwardOp(Region &functionBody) {
  if (functionBody.empty())
    return {};
  for (Operation &op : functionBody.front())
    if (auto backward = dyn_cast<BackwardOp>(op))
      return backward;
  return {};
}

LogicalResult remat::verifyMarksTakeEffect(FunctionOpInterface function) {
  if (function.isExternal())
    return success();
  auto isMarked = [](Operation &op) {
    return op.hasAttr(RematDialect::kSegmentAttrName) ||
           op.hasAttr(RematDialect::kPolicyAttrName);
  };
  Region &body = function.getFunctionBody();
  // The dialect verifier keeps marks on ops directly in the body, but IR
  // parsed or rewritten without verification can still hold them in a loop
  // body or a branch, where no pass would read them.
  for (Block &block : body) {
    for (Operation &top : block) {
      WalkResult nested = top.walk([&](Operation *op) {
        if (op == &top || !isMarked(*op))
          return WalkResult::advance();
        if (isa<BackwardOp>(top))
          op->emitOpError() << "is marked for checkpointing but is inside "
                               "'remat.backward': only forward ops belong to "
                               "segments";
        else if (isa<scf::ForOp>(top) && op->getParentOp() == &top)
          op->emitOpError()
              << "is marked for checkpointing in a scan's body: "
                 "-remat-checkpoint-loops recomputes such segments per "
                 "iteration; run it before the passes on the step's own "
                 "segments";
        else
          op->emitOpError()
              << "is marked for checkpointing but is nested in '"
              << op->getParentOp()->getName()
              << "'; segments are formed from the ops directly in "
                 "a function body, and a segment inside a loop "
                 "body is not recomputed per iteration: mark the "
                 "enclosing op instead";
        return WalkResult::interrupt();
      });
      if (nested.wasInterrupted())
        return failure();
    }
  }
  BackwardOp backward = getBackwardOp(body);
  bool afterBackward = false;
  for (Block &block : body) {
    for (Operation &op : block) {
      if (&op == backward.getOperation()) {
        afterBackward = true;
        continue;
      }
      if (!isMarked(op) || (backward && !afterBackward))
        continue;
      if (!backward)
        return op.emitOpError()
               << "is marked for checkpointing, but its function has no "
                  "'remat.backward': marks only take effect in a training "
                  "step";
      InFlightDiagnostic diag =
          op.emitOpError() << "is marked for checkpointing but follows the "
                              "'remat.backward' region; only forward ops "
                              "(before it) belong to segments";
      diag.attachNote(backward.getLoc()) << "the backward region is here";
      return diag;
    }
  }
  return success();
}

Value remat::getMemoryBase(Value value) {
  while (true) {
    if (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
      value = view.getViewSource();
      continue;
    }
    if (auto barrier = value.getDefiningOp<BarrierOp>()) {
      value = barrier.getInputs()[cast<OpResult>(value).getResultNumber()];
      continue;
    }
    return value;
  }
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
  // A type of unknown element size is priced nowhere; count 8 bytes.
  uint64_t width = getElementBytes(shaped.getElementType()).value_or(8);
  return elements * width > kMaxTensorBytes;
}

LogicalResult
remat::verifyTensorSizes(Operation *root,
                         function_ref<void(InFlightDiagnostic &)> annotate) {
  auto diagnose = [&](Location loc, Type type, const Twine &what) {
    InFlightDiagnostic diag = mlir::emitError(loc)
                              << what << " has the type " << type
                              << " of more than 2^40 bytes (1 TiB); remat "
                                 "rejects tensors of absurd sizes";
    if (annotate)
      annotate(diag);
    return WalkResult::interrupt();
  };
  WalkResult walk = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto function = dyn_cast<FunctionOpInterface>(op)) {
      std::string name = ("@" + function.getName()).str();
      for (auto [i, type] : llvm::enumerate(function.getArgumentTypes()))
        if (exceedsMaxTensorBytes(type))
          return diagnose(function.isExternal()
                              ? op->getLoc()
                              : function.getArgument(i).getLoc(),
                          type, "argument #" + Twine(i) + " of " + name);
      for (auto [i, type] : llvm::enumerate(function.getResultTypes()))
        if (exceedsMaxTensorBytes(type))
          return diagnose(op->getLoc(), type,
                          "result #" + Twine(i) + " of " + name);
    }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (exceedsMaxTensorBytes(arg.getType()))
            return diagnose(arg.getLoc(), arg.getType(),
                            "block argument #" + Twine(arg.getArgNumber()) +
                                " of '" + op->getName().getStringRef() + "'");
    for (OpResult result : op->getResults())
      if (exceedsMaxTensorBytes(result.getType()))
        return diagnose(op->getLoc(), result.getType(),
                        "'" + op->getName().getStringRef() + "' result #" +
                            Twine(result.getResultNumber()));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
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
  // Every pass and both lowerings take training steps as func.func; a
  // backward region elsewhere would pass through them untouched.
  if (!isa<func::FuncOp>(parent))
    return emitOpError() << "is inside '" << parent->getName()
                         << "'; a training step is a 'func.func'";

  // A training step is straight-line dataflow at the top level; control
  // flow lives in structured ops (scf.for, scf.if) that segments may hold.
  Region &functionBody = *(*this)->getParentRegion();
  if (!functionBody.hasOneBlock()) {
    InFlightDiagnostic diag =
        emitOpError() << "is in a function body of "
                      << llvm::range_size(functionBody.getBlocks())
                      << " blocks; a training step's body is a single block "
                         "(use structured control flow such as scf.for and "
                         "scf.if instead of branches)";
    diag.attachNote(parent->getLoc()) << "in this function";
    return diag;
  }

  if (unsigned count = getBody().getNumArguments())
    return emitOpError() << "has a region with " << count
                         << " block argument(s); the backward region takes "
                            "none (it reads forward values directly)";

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
  return verifyTensorSizes(parent, [&](InFlightDiagnostic &diag) {
    diag.attachNote(getLoc()) << "in the training step of this "
                                 "'remat.backward'";
  });
}

LogicalResult BackwardOp::verifyRegions() {
  YieldOp yield = getYield();
  if (yield.getOperandTypes() != getResultTypes()) {
    InFlightDiagnostic diag =
        yield.emitOpError() << "yields " << yield.getNumOperands()
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
// ScatterAddRowsOp
//===----------------------------------------------------------------------===//

LogicalResult ScatterAddRowsOp::verify() {
  auto values = cast<RankedTensorType>(getValues().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto dest = cast<RankedTensorType>(getDest().getType());
  for (auto [name, type] :
       {std::pair{"values", values}, {"indices", indices}, {"dest", dest}})
    if (!type.hasStaticShape())
      return emitOpError() << name << " has the dynamic shape " << type
                           << "; training steps need static shapes";
  if (values.getElementType() != dest.getElementType())
    return emitOpError() << "adds values of " << values.getElementType()
                         << " into a dest of " << dest.getElementType()
                         << "; the element types must match";
  if (values.getDimSize(0) != indices.getDimSize(0))
    return emitOpError() << "has " << values.getDimSize(0)
                         << " rows of values but " << indices.getDimSize(0)
                         << " indices; each position adds one row";
  if (values.getDimSize(1) != dest.getDimSize(1))
    return emitOpError() << "adds rows of " << values.getDimSize(1)
                         << " values into rows of " << dest.getDimSize(1)
                         << "; values and dest must have as many columns";
  if (std::optional<int64_t> skip = getSkip();
      skip && (*skip < 0 || *skip >= dest.getDimSize(0)))
    return emitOpError() << "skips row " << *skip << ", which is not a row of "
                         << "dest (0 to " << dest.getDimSize(0) - 1
                         << "); leave skip out to skip no row";
  return success();
}

//===----------------------------------------------------------------------===//
// BarrierOp
//===----------------------------------------------------------------------===//

LogicalResult BarrierOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

//===----------------------------------------------------------------------===//
// CostOpInterface
//===----------------------------------------------------------------------===//

// A random op costs one generated number per element (its results have
// static shapes); the seed and the barrier compute nothing.
int64_t RngUniformOp::getFlops() { return getType().getNumElements(); }
int64_t PhiloxUniformOp::getFlops() { return getType().getNumElements(); }
int64_t RngSeedOp::getFlops() { return 0; }
int64_t BarrierOp::getFlops() { return 0; }
// One addition per element of values (the skipped rows' included: which
// they are depends on the data).
int64_t ScatterAddRowsOp::getFlops() {
  return cast<RankedTensorType>(getValues().getType()).getNumElements();
}
