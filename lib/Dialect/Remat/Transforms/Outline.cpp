//===- Outline.cpp - Split a training step into forward and backward ------===//
//
// This file implements -remat-outline, which turns a training step into a
// forward function returning its saved values and a backward function taking
// them, so that a framework can run the two at different times.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATOUTLINEPASS
#include "remat/Dialect/Remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

/// Drops the marks and the clone bookkeeping from `op` and the ops nested in
/// it: once a step is split in two, no pass acts on them.
static void dropBookkeeping(Operation *op) {
  op->walk([](Operation *inner) {
    for (StringRef name :
         {RematDialect::kSegmentAttrName, RematDialect::kPolicyAttrName,
          RematDialect::kIdAttrName, RematDialect::kCloneOfAttrName,
          RematDialect::kRerunOfAttrName})
      inner->removeDiscardableAttr(name);
  });
}

/// Fails with an error unless the backward region ends `step` and neither
/// outlined function's name is taken.
static LogicalResult checkOutlinable(func::FuncOp step, BackwardOp backward,
                                     ArrayRef<std::string> names,
                                     SymbolTable &symbols) {
  Operation *ret = step.getBody().front().getTerminator();
  if (backward->getNextNode() != ret)
    return backward->getNextNode()->emitOpError()
           << "follows 'remat.backward'; -remat-outline needs the backward "
              "region to end the step";
  for (StringRef name : names)
    if (Operation *existing = symbols.lookup(name)) {
      InFlightDiagnostic diag = step.emitOpError() << "cannot be outlined: @"
                                                   << name << " exists already";
      diag.attachNote(existing->getLoc()) << "defined here";
      return diag;
    }
  return success();
}

/// The values the backward region reads from before it, each once: the
/// step's arguments by index, then forward values in program order.
struct SavedValues {
  SmallVector<Value> args, values;

  SmallVector<Value> getAll() const {
    SmallVector<Value> all = args;
    llvm::append_range(all, values);
    return all;
  }
};

static SavedValues collectSavedValues(Block &body, BackwardOp backward) {
  llvm::SetVector<Value> savedValues;
  SavedValues saved;
  for (Value value : getSavedValues(backward)) {
    if (isa<BlockArgument>(value))
      saved.args.push_back(value);
    else
      savedValues.insert(value);
  }
  llvm::sort(saved.args, [](Value a, Value b) {
    return cast<BlockArgument>(a).getArgNumber() <
           cast<BlockArgument>(b).getArgNumber();
  });
  for (Operation &op : body)
    for (Value result : op.getResults())
      if (savedValues.contains(result))
        saved.values.push_back(result);
  return saved;
}

/// Builds @f_fwd before `step`: the forward ops, returning the forward values
/// the step returns, then the saved forward values (the caller has the saved
/// arguments).
static func::FuncOp buildForward(func::FuncOp step, BackwardOp backward,
                                 StringRef name, ArrayRef<Value> results) {
  OpBuilder builder(step);
  Location loc = step.getLoc();
  auto fwd = func::FuncOp::create(
      builder, loc, name,
      FunctionType::get(step.getContext(), step.getArgumentTypes(),
                        ValueRange(results).getTypes()));
  fwd.setAllArgAttrs(step.getAllArgAttrs());
  fwd.setPrivate();
  Block &body = step.getBody().front();
  Block *entry = fwd.addEntryBlock();
  IRMapping mapping;
  mapping.map(body.getArguments(), entry->getArguments());
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  for (Operation &op : body) {
    if (&op == backward.getOperation())
      break;
    dropBookkeeping(inner.clone(op, mapping));
  }
  SmallVector<Value> mapped;
  for (Value value : results)
    mapped.push_back(mapping.lookup(value));
  func::ReturnOp::create(inner, loc, mapped);
  return fwd;
}

/// Builds @f_bwd before `step`: the backward region on the saved values, the
/// seed argument keeping its mark.
static func::FuncOp buildBackward(func::FuncOp step, BackwardOp backward,
                                  StringRef name, ArrayRef<Value> saved) {
  MLIRContext *context = step.getContext();
  OpBuilder builder(step);
  Location loc = step.getLoc();
  std::optional<unsigned> seedIndex;
  for (unsigned i = 0, e = step.getNumArguments(); i < e && !seedIndex; ++i)
    if (step.getArgAttr(i, RematDialect::kRngSeedAttrName))
      seedIndex = i;

  auto bwd = func::FuncOp::create(
      builder, loc, name,
      FunctionType::get(context, ValueRange(saved).getTypes(),
                        backward.getResultTypes()));
  bwd.setPrivate();
  Block *entry = bwd.addEntryBlock();
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(saved, entry->getArguments())) {
    mapping.map(value, arg);
    auto blockArg = dyn_cast<BlockArgument>(value);
    if (blockArg && seedIndex && blockArg.getArgNumber() == *seedIndex)
      bwd.setArgAttr(arg.getArgNumber(), RematDialect::kRngSeedAttrName,
                     UnitAttr::get(context));
  }
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  for (Operation &op : backward.getBody().front().without_terminator())
    dropBookkeeping(inner.clone(op, mapping));
  SmallVector<Value> results;
  for (Value value : backward.getYield().getOperands())
    results.push_back(mapping.lookupOrDefault(value));
  func::ReturnOp::create(inner, loc, results);
  return bwd;
}

/// Replaces the body of `step` with a call of `fwd` and a call of `bwd` on
/// the saved values, returning what the step returned.
static void replaceWithCalls(func::FuncOp step, BackwardOp backward,
                             func::FuncOp fwd, func::FuncOp bwd,
                             ArrayRef<Value> forwardResults,
                             const SavedValues &saved) {
  Block &body = step.getBody().front();
  Location loc = step.getLoc();
  Operation *ret = body.getTerminator();
  SmallVector<Value> newResults(ret->getOperands());
  ret->erase();
  SmallVector<Operation *> toErase;
  for (Operation &op : llvm::reverse(body))
    toErase.push_back(&op);
  OpBuilder calls = OpBuilder::atBlockEnd(&body);
  auto fwdCall = func::CallOp::create(calls, loc, fwd, body.getArguments());
  IRMapping mapping;
  unsigned numForward = forwardResults.size();
  for (auto [i, value] : llvm::enumerate(forwardResults))
    mapping.map(value, fwdCall.getResult(i));
  SmallVector<Value> bwdOperands = saved.args;
  for (unsigned i = 0, e = saved.values.size(); i < e; ++i)
    bwdOperands.push_back(fwdCall.getResult(numForward + i));
  auto bwdCall = func::CallOp::create(calls, loc, bwd, bwdOperands);
  mapping.map(backward.getResults(), bwdCall.getResults());
  for (Value &value : newResults)
    value = mapping.lookupOrDefault(value);
  func::ReturnOp::create(calls, loc, newResults);
  for (Operation *op : toErase) {
    op->dropAllUses();
    op->erase();
  }
}

/// Splits `step` into @f_fwd and @f_bwd, which @f calls.
static LogicalResult outline(func::FuncOp step, SymbolTable &symbols) {
  BackwardOp backward = getBackwardOp(step.getBody());
  std::string names[] = {(step.getSymName() + "_fwd").str(),
                         (step.getSymName() + "_bwd").str()};
  if (failed(checkOutlinable(step, backward, names, symbols)))
    return failure();

  SavedValues saved = collectSavedValues(step.getBody().front(), backward);
  // Forward values the step returns (backward results and arguments are
  // returned by @f itself).
  llvm::SetVector<Value> forwardResults;
  for (Value value : step.getBody().front().getTerminator()->getOperands())
    if (value.getDefiningOp() && value.getDefiningOp() != backward)
      forwardResults.insert(value);

  SmallVector<Value> fwdResults(forwardResults.getArrayRef());
  llvm::append_range(fwdResults, saved.values);
  func::FuncOp fwd = buildForward(step, backward, names[0], fwdResults);
  func::FuncOp bwd = buildBackward(step, backward, names[1], saved.getAll());
  replaceWithCalls(step, backward, fwd, bwd, forwardResults.getArrayRef(),
                   saved);
  symbols.insert(fwd);
  symbols.insert(bwd);
  return success();
}

namespace {

struct RematOutlinePass : remat::impl::RematOutlinePassBase<RematOutlinePass> {
  using RematOutlinePassBase::RematOutlinePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> steps;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && getBackwardOp(function.getBody()))
        steps.push_back(function);
    for (func::FuncOp step : steps)
      if (failed(outline(step, symbols)))
        return signalPassFailure();
  }
};

} // namespace
