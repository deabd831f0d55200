//===- OutlineLoopNests.cpp - A function per loop nest
//---------------------===//
//
// This file implements -remat-outline-loop-nests: each loop nest at the top
// level of a function becomes a private, never inlined function of its own,
// so that LLVM optimizes each nest apart and the nests of repeated layers can
// be deduplicated and compiled in parallel.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "ParallelLoops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATOUTLINELOOPNESTSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns true if `op` is a loop, or a branch that holds one: what makes
/// LLVM's loop passes slow when thousands of them share a function.
bool isLoopNest(Operation &op) {
  if (isa<scf::ForOp, scf::ParallelOp, scf::WhileOp>(op))
    return true;
  if (!isa<scf::IfOp>(op))
    return false;
  return op
      .walk([](Operation *nested) {
        return isa<scf::ForOp, scf::ParallelOp, scf::WhileOp>(nested)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Returns true for the types a function argument or result may have here
/// (each lowers to LLVM through the function's type conversion).
bool isPassable(Type type) {
  return isa<MemRefType, IndexType, IntegerType, FloatType, VectorType,
             LLVM::LLVMPointerType>(type);
}

/// Returns true if `value` is made by a constant op the nest can make again.
bool isClonableConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>() &&
         def->getNumOperands() == 0 && def->getNumRegions() == 0;
}

struct RematOutlineLoopNestsPass
    : remat::impl::RematOutlineLoopNestsPassBase<RematOutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      // Private functions are what this pass and the parallel loops'
      // outlining made: a nest each already.
      if (function.isExternal() || function.isPrivate() ||
          !function.getBody().hasOneBlock())
        continue;
      unsigned count = 0;
      for (Operation &op :
           llvm::make_early_inc_range(function.getBody().front()))
        if (isLoopNest(op) && succeeded(outline(symbols, function, op, count)))
          ++numOutlined;
    }
  }

  /// Replaces `nest` by a call of a new function holding it.
  LogicalResult outline(SymbolTable &symbols, func::FuncOp parent,
                        Operation &nest, unsigned &count) {
    // What the nest uses from above, in the order of first use.
    llvm::SetVector<Value> captures, constants;
    nest.walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        if (nest.isAncestor(operand.getParentRegion()->getParentOp()))
          continue;
        if (isClonableConstant(operand))
          constants.insert(operand);
        else
          captures.insert(operand);
      }
    });
    if (!llvm::all_of(captures.getArrayRef(),
                      [](Value v) { return isPassable(v.getType()); }) ||
        !llvm::all_of(nest.getResultTypes(), isPassable))
      return failure();

    OpBuilder builder(parent);
    Location loc = nest.getLoc();
    auto type = builder.getFunctionType(
        llvm::to_vector(llvm::map_range(captures.getArrayRef(),
                                        [](Value v) { return v.getType(); })),
        nest.getResultTypes());
    auto function = func::FuncOp::create(builder, loc,
                                         (parent.getSymName() + "_" +
                                          remat::getLoopNestKind(&nest) +
                                          "_loops_" + Twine(count++))
                                             .str(),
                                         type);
    function.setPrivate();
    // LLVM would inline a private function called once right back; the
    // LLVM dialect passes `passthrough` on as the function's attributes.
    function->setAttr("passthrough",
                      builder.getArrayAttr(builder.getStringAttr("noinline")));
    symbols.insert(function);

    Block *entry = function.addEntryBlock();
    IRMapping mapping;
    mapping.map(captures.getArrayRef(), entry->getArguments());
    builder.setInsertionPointToStart(entry);
    for (Value constant : constants)
      builder.clone(*constant.getDefiningOp(), mapping);
    Operation *clone = builder.clone(nest, mapping);
    func::ReturnOp::create(builder, loc, clone->getResults());

    builder.setInsertionPoint(&nest);
    auto call =
        func::CallOp::create(builder, loc, function, captures.getArrayRef());
    nest.replaceAllUsesWith(call.getResults());
    nest.erase();
    return success();
  }
};

} // namespace
