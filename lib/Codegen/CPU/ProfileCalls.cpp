//===- ProfileCalls.cpp - Time each call a step makes
//----------------------===//
//
// This file implements -remat-profile-calls: every call a step makes, of a
// runtime kernel or of an outlined loop nest, bracketed with the runtime's
// profile counters, named by what it runs.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"

namespace remat {
#define GEN_PASS_DEF_REMATPROFILECALLSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// The runtime's entry points.
constexpr StringLiteral kBegin = "remat_profile_begin";
constexpr StringLiteral kEnd = "remat_profile_end";
constexpr StringLiteral kParallelFor = "remat_parallel_for";

/// What `op` runs, as the profile names it.
std::string getProfileName(Operation *op) {
  if (isa<memref::CopyOp>(op))
    return "memref.copy";
  auto call = cast<func::CallOp>(op);
  if (call.getCallee() == kParallelFor)
    for (Value operand : call.getOperands())
      if (auto unit = operand.getDefiningOp<func::ConstantOp>())
        return unit.getValue().str();
  return call.getCallee().str();
}

struct RematProfileCallsPass
    : remat::impl::RematProfileCallsPassBase<RematProfileCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<Operation *> calls;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal() || function.isPrivate())
        continue;
      function.walk([&](Operation *op) {
        if (isa<func::CallOp, memref::CopyOp>(op))
          calls.push_back(op);
      });
    }
    if (calls.empty())
      return;

    SymbolTable symbols(module);
    auto ptrType = LLVM::LLVMPointerType::get(context);
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    auto declare = [&](StringRef name, TypeRange arguments) {
      if (auto existing = symbols.lookup<func::FuncOp>(name))
        return existing;
      auto function =
          func::FuncOp::create(builder, module.getLoc(), name,
                               builder.getFunctionType(arguments, {}));
      function.setPrivate();
      symbols.insert(function);
      return function;
    };
    func::FuncOp begin = declare(kBegin, {});
    func::FuncOp end = declare(kEnd, {ptrType});

    // One constant string per name, null-terminated.
    llvm::StringMap<LLVM::GlobalOp> names;
    auto getName = [&](StringRef name) {
      LLVM::GlobalOp &global = names[name];
      if (global)
        return global;
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(module.getBody());
      std::string value = (name + Twine('\0')).str();
      auto type =
          LLVM::LLVMArrayType::get(IntegerType::get(context, 8), value.size());
      global = LLVM::GlobalOp::create(
          builder, module.getLoc(), type, /*isConstant=*/true,
          LLVM::Linkage::Internal, "remat_profile_name",
          builder.getStringAttr(value));
      symbols.insert(global);
      return global;
    };

    for (Operation *op : calls) {
      Location loc = op->getLoc();
      LLVM::GlobalOp name = getName(getProfileName(op));
      builder.setInsertionPoint(op);
      func::CallOp::create(builder, loc, begin, ValueRange());
      builder.setInsertionPointAfter(op);
      Value address = LLVM::AddressOfOp::create(builder, loc, name);
      func::CallOp::create(builder, loc, end, address);
    }
  }
};

} // namespace
