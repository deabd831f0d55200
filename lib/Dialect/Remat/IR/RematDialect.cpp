//===- RematDialect.cpp - The remat dialect -------------------------------===//
//
// This file implements the remat dialect and the verification of its
// discardable attributes (`remat.segment`, `remat.policy`, `remat.name`,
// `remat.rng_seed`).
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace remat;

#include "remat/Dialect/Remat/IR/RematOpsDialect.cpp.inc"

#include "remat/Dialect/Remat/IR/RematEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "remat/Dialect/Remat/IR/RematAttrs.cpp.inc"

void RematDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "remat/Dialect/Remat/IR/RematOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "remat/Dialect/Remat/IR/RematAttrs.cpp.inc"
      >();
}

LogicalResult MarkingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef policy, int64_t segments,
                                  std::optional<int64_t> predictedPeak,
                                  std::optional<int64_t> recomputeFlops,
                                  std::optional<int64_t> budget,
                                  std::optional<int64_t> lowerBound) {
  if (!symbolizeMarkPolicy(policy))
    return emitError() << "a plan's policy is one of -remat-mark's, not '"
                       << policy << "'";
  // The prediction is both figures or neither (-remat-mark predict=false).
  if (predictedPeak.has_value() != recomputeFlops.has_value())
    return emitError() << "a plan has both 'predictedPeak' and "
                          "'recomputeFlops', or neither";
  for (auto [name, value] :
       {std::pair<StringRef, std::optional<int64_t>>{"segments", segments},
        {"predictedPeak", predictedPeak},
        {"recomputeFlops", recomputeFlops},
        {"budget", budget},
        {"lowerBound", lowerBound}})
    if (value && *value < 0)
      return emitError() << "a plan's '" << name << "' is negative: " << *value;
  return success();
}

/// Returns true if `attr` is a non-negative i64 integer attribute.
static bool isSegmentId(Attribute attr) {
  auto intAttr = dyn_cast_if_present<IntegerAttr>(attr);
  return intAttr && intAttr.getType().isSignlessInteger(64) &&
         !intAttr.getValue().isNegative();
}

/// Checks where a mark (`remat.segment` or `remat.policy`) sits: on an op
/// directly in a function body, the only ops that segments are formed from,
/// or directly in the body of an `scf.for` there (a scan's body, whose
/// segments -remat-checkpoint-loops recomputes per iteration). Whether that
/// function is a training step, and whether the op comes before its
/// backward region, is checked by the passes that read marks
/// (`verifyMarksTakeEffect`): outlined forward functions keep their marks.
static LogicalResult verifyMarkPlacement(Operation *op, StringRef name) {
  if (isa<FunctionOpInterface, ModuleOp, BackwardOp>(op))
    return op->emitOpError()
           << "carries '" << name
           << "', which belongs on the forward ops of a training step";
  if (isInBackwardRegion(op))
    return op->emitOpError() << "'" << name
                             << "' is not allowed inside 'remat.backward': "
                                "only forward ops belong to segments";
  Operation *parent = op->getParentOp();
  if (isa_and_present<scf::ForOp>(parent) &&
      isa_and_present<FunctionOpInterface>(parent->getParentOp()))
    return success();
  if (parent && !isa<FunctionOpInterface>(parent))
    return op->emitOpError()
           << "carries '" << name << "' but is nested in '" << parent->getName()
           << "'; segments are formed from the ops directly in a function "
              "body or in a scan's body (an 'scf.for' there): mark the "
              "enclosing op instead";
  return success();
}

static LogicalResult verifySegmentAttr(Operation *op, Attribute value) {
  bool wellFormed = isSegmentId(value);
  if (auto array = dyn_cast<ArrayAttr>(value))
    wellFormed = !array.empty() && llvm::all_of(array, isSegmentId);
  if (!wellFormed)
    return op->emitOpError()
           << "'" << RematDialect::kSegmentAttrName
           << "' must be a non-negative i64 or a non-empty array of them, got "
           << value;

  if (failed(verifyMarkPlacement(op, RematDialect::kSegmentAttrName)))
    return failure();

  // Checkpointing prices every value of a segment in bytes.
  for (OpResult result : op->getResults()) {
    auto shaped = dyn_cast<ShapedType>(result.getType());
    if (shaped && !shaped.hasStaticShape())
      return op->emitOpError()
             << "is in a checkpoint segment but result #"
             << result.getResultNumber() << " has the dynamic shape "
             << result.getType() << "; segments need static shapes";
  }
  return success();
}

/// `remat.plan`: a MarkingAttr (which verifies its own fields) on a function.
static LogicalResult verifyMarkingAttr(Operation *op, Attribute value) {
  if (!isa<FunctionOpInterface>(op))
    return op->emitOpError() << "'" << RematDialect::kMarkingAttrName
                             << "' belongs on a function";
  if (!isa<MarkingAttr>(value))
    return op->emitOpError() << "'" << RematDialect::kMarkingAttrName
                             << "' must be a #remat.plan<...>, got " << value;
  return success();
}

LogicalResult RematDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();

  if (name == kSegmentAttrName)
    return verifySegmentAttr(op, value);

  if (name == kPolicyAttrName) {
    auto policy = dyn_cast<StringAttr>(value);
    if (!policy ||
        (policy.getValue() != "save" && policy.getValue() != "recompute"))
      return op->emitOpError()
             << "'" << kPolicyAttrName
             << "' must be \"save\" or \"recompute\", got " << value;
    if (failed(verifyMarkPlacement(op, kPolicyAttrName)))
      return failure();
    if (!op->hasAttr(kSegmentAttrName))
      return op->emitOpError()
             << "carries '" << kPolicyAttrName
             << "' but no 'remat.segment': a policy only chooses between "
                "saving and recomputing inside a checkpoint segment";
    return success();
  }

  if (name == kNameAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    if (!str || str.getValue().empty())
      return op->emitOpError() << "'" << kNameAttrName
                               << "' must be a non-empty string, got " << value;
    return success();
  }

  if (name == kIdAttrName || name == kCloneOfAttrName ||
      name == kRerunOfAttrName) {
    if (!isSegmentId(value))
      return op->emitOpError()
             << "'" << name << "' must be a non-negative i64, got " << value;
    bool inBackward = isInBackwardRegion(op);
    if (name == kIdAttrName && inBackward)
      return op->emitOpError() << "'" << name
                               << "' marks forward ops; it is not allowed "
                                  "inside 'remat.backward'";
    if (name != kIdAttrName && !inBackward)
      return op->emitOpError() << "'" << name
                               << "' marks recomputed ops; it is only allowed "
                                  "inside 'remat.backward'";
    return success();
  }

  if (name == kMarkingAttrName)
    return verifyMarkingAttr(op, value);

  if (name == kRngSeedAttrName)
    return op->emitOpError() << "'" << kRngSeedAttrName
                             << "' belongs on an i64 function argument, not "
                                "on an operation";

  return op->emitOpError() << "has unknown remat attribute '" << name << "'";
}

LogicalResult RematDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kRngSeedAttrName)
    return op->emitOpError() << "has unknown remat argument attribute '" << name
                             << "' on argument #" << argIndex;

  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError()
           << "'" << kRngSeedAttrName << "' on argument #" << argIndex
           << " must be a unit attribute, got " << attr.getValue();

  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0)
    return op->emitOpError() << "'" << kRngSeedAttrName
                             << "' is only allowed on function arguments";

  Type type = function.getArgumentTypes()[argIndex];
  if (!type.isSignlessInteger(64))
    return op->emitOpError() << "'" << kRngSeedAttrName << "' argument #"
                             << argIndex << " must be i64, got " << type;

  for (unsigned i = 0; i < argIndex; ++i)
    if (function.getArgAttr(i, kRngSeedAttrName))
      return op->emitOpError()
             << "has two '" << kRngSeedAttrName << "' arguments (#" << i
             << " and #" << argIndex << "); a step has one seed";
  return success();
}
