//===- CUDAHostAllocs.cpp - Host allocations through the CUDA runtime -----===//
//
// This file implements -remat-cuda-host-allocs: the generic allocation
// functions of the lowered host code are renamed to the CUDA runtime's
// counting device allocator.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace remat {
#define GEN_PASS_DEF_REMATCUDAHOSTALLOCSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

struct RematCUDAHostAllocsPass
    : remat::impl::RematCUDAHostAllocsPassBase<RematCUDAHostAllocsPass> {
  using RematCUDAHostAllocsPassBase::RematCUDAHostAllocsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    static constexpr std::pair<StringLiteral, StringLiteral> renames[] = {
        {"_mlir_memref_to_llvm_alloc", "remat_cuda_alloc"},
        {"_mlir_memref_to_llvm_aligned_alloc", "remat_cuda_aligned_alloc"},
        {"_mlir_memref_to_llvm_free", "remat_cuda_free"},
    };
    for (auto [from, to] : renames) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!function)
        continue;
      if (module.lookupSymbol(to)) {
        module.emitError("cannot route '")
            << from << "' to the CUDA runtime: '" << to << "' already exists";
        return signalPassFailure();
      }
      auto name = StringAttr::get(&getContext(), to);
      if (failed(SymbolTable::replaceAllSymbolUses(function, name, module)))
        return signalPassFailure();
      SymbolTable::setSymbolName(function, name);
    }
  }
};

} // namespace
