//===- Outline.cpp - Split a training step into forward and backward ------===//
//
// This file implements -remat-outline, which turns a training step into a
// forward function returning its saved values and a backward function taking
// them, so that a framework can run the two at different times.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATOUTLINEPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// Drops the marks and the clone bookkeeping from `op` and the ops nested in
/// it: once a step is split in two, no pass acts on them.
void dropBookkeeping(Operation *op) {
  op->walk([](Operation *inner) {
    for (StringRef name :
         {RematDialect::kSegmentAttrName, RematDialect::kPolicyAttrName,
          RematDialect::kIdAttrName, RematDialect::kCloneOfAttrName})
      inner->removeDiscardableAttr(name);
  });
}

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

  LogicalResult outline(func::FuncOp step, SymbolTable &symbols) {
    Block &body = step.getBody().front();
    BackwardOp backward = getBackwardOp(step.getBody());
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    if (backward->getNextNode() != ret.getOperation())
      return backward->getNextNode()->emitOpError()
             << "follows 'remat.backward'; -remat-outline needs the backward "
                "region to end the step";
    std::string fwdName = (step.getSymName() + "_fwd").str();
    std::string bwdName = (step.getSymName() + "_bwd").str();
    for (StringRef name : {StringRef(fwdName), StringRef(bwdName)})
      if (Operation *existing = symbols.lookup(name)) {
        InFlightDiagnostic diag = step.emitOpError()
                                  << "cannot be outlined: @" << name
                                  << " exists already";
        diag.attachNote(existing->getLoc()) << "defined here";
        return diag;
      }

    // The saved values: arguments first, then forward values, each once.
    llvm::SetVector<Value> savedArgs, savedValues;
    backward.getBody().walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        if (backward->isProperAncestor(
                operand.getParentBlock()->getParentOp()) ||
            operand.getParentBlock()->getParentOp() == backward.getOperation())
          continue;
        (isa<BlockArgument>(operand) ? savedArgs : savedValues).insert(operand);
      }
    });
    // Arguments by index, forward values in program order.
    SmallVector<Value> args = savedArgs.takeVector();
    llvm::sort(args, [](Value a, Value b) {
      return cast<BlockArgument>(a).getArgNumber() <
             cast<BlockArgument>(b).getArgNumber();
    });
    SmallVector<Value> values;
    for (Operation &op : body)
      for (Value result : op.getResults())
        if (savedValues.contains(result))
          values.push_back(result);
    SmallVector<Value> saved = args;
    llvm::append_range(saved, values);
    // Forward values the step returns (backward results and arguments are
    // returned by @f itself).
    llvm::SetVector<Value> forwardResults;
    for (Value value : ret.getOperands())
      if (value.getDefiningOp() && value.getDefiningOp() != backward)
        forwardResults.insert(value);

    MLIRContext *context = &getContext();
    OpBuilder builder(step);
    Location loc = step.getLoc();
    auto seedIndex = [&]() -> std::optional<unsigned> {
      for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
        if (step.getArgAttr(i, RematDialect::kRngSeedAttrName))
          return i;
      return std::nullopt;
    }();

    // @f_fwd: the forward ops; it returns the saved forward values, the
    // caller has the saved arguments.
    SmallVector<Type> fwdResultTypes;
    for (Value value : llvm::concat<const Value>(forwardResults, values))
      fwdResultTypes.push_back(value.getType());
    auto fwd = func::FuncOp::create(
        builder, loc, fwdName,
        FunctionType::get(context, step.getArgumentTypes(), fwdResultTypes));
    fwd.setAllArgAttrs(step.getAllArgAttrs());
    fwd.setPrivate();
    {
      Block *entry = fwd.addEntryBlock();
      IRMapping mapping;
      mapping.map(body.getArguments(), entry->getArguments());
      OpBuilder inner = OpBuilder::atBlockEnd(entry);
      for (Operation &op : body) {
        if (&op == backward.getOperation())
          break;
        dropBookkeeping(inner.clone(op, mapping));
      }
      SmallVector<Value> results;
      for (Value value : llvm::concat<const Value>(forwardResults, values))
        results.push_back(mapping.lookup(value));
      func::ReturnOp::create(inner, loc, results);
    }

    // @f_bwd: the backward region on the saved values.
    SmallVector<Type> savedTypes;
    for (Value value : saved)
      savedTypes.push_back(value.getType());
    auto bwd = func::FuncOp::create(
        builder, loc, bwdName,
        FunctionType::get(context, savedTypes, backward.getResultTypes()));
    bwd.setPrivate();
    {
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
    }

    // @f calls both.
    SmallVector<Value> newResults(ret.getOperands());
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
    SmallVector<Value> bwdOperands = args;
    for (unsigned i = 0, e = values.size(); i < e; ++i)
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

    symbols.insert(fwd);
    symbols.insert(bwd);
    return success();
  }
};

} // namespace
