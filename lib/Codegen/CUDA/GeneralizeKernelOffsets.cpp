//===- GeneralizeKernelOffsets.cpp - Kernels' memref offsets dynamic ------===//
//
// This file implements -remat-generalize-kernel-offsets: a kernel's strided
// memref arguments take a dynamic offset, so that kernels differing only in
// the offset of the view they read are one kernel after deduplication.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATGENERALIZEKERNELOFFSETSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// `type` with a dynamic offset, if it is a strided memref with a static
/// one.
std::optional<MemRefType> getGeneralized(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return std::nullopt;
  auto layout = StridedLayoutAttr::get(memref.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(memref.getShape(), memref.getElementType(), layout,
                         memref.getMemorySpace());
}

/// Returns true if every use of `value` reads or writes through it or
/// reads its metadata: ops valid for a memref of any layout.
bool hasLayoutFreeUses(Value value) {
  return llvm::all_of(value.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto load = dyn_cast<memref::LoadOp>(user))
      return load.getMemRef() == value;
    if (auto store = dyn_cast<memref::StoreOp>(user))
      return store.getMemRef() == value;
    return isa<memref::DimOp, memref::ExtractStridedMetadataOp>(user);
  });
}

struct RematGeneralizeKernelOffsetsPass
    : remat::impl::RematGeneralizeKernelOffsetsPassBase<
          RematGeneralizeKernelOffsetsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The generalized argument positions of each kernel, by its full name.
    llvm::MapVector<SymbolRefAttr, SmallVector<unsigned>> changed;
    for (auto kernelModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : kernelModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        // The kernel's operands, not its workgroup and private attributions
        // (which are block arguments too).
        unsigned numInputs = kernel.getFunctionType().getNumInputs();
        SmallVector<unsigned> positions;
        for (BlockArgument arg : kernel.getArguments().take_front(numInputs)) {
          std::optional<MemRefType> type = getGeneralized(arg.getType());
          if (!type || !hasLayoutFreeUses(arg))
            continue;
          arg.setType(*type);
          positions.push_back(arg.getArgNumber());
        }
        if (positions.empty())
          continue;
        kernel.setFunctionType(FunctionType::get(
            &getContext(),
            TypeRange(kernel.front().getArgumentTypes()).take_front(numInputs),
            kernel.getFunctionType().getResults()));
        numGeneralized += positions.size();
        changed[SymbolRefAttr::get(
            kernelModule.getNameAttr(),
            {FlatSymbolRefAttr::get(kernel.getNameAttr())})] =
            std::move(positions);
      }
    if (changed.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = changed.find(launch.getKernel());
      if (it == changed.end())
        return;
      OpBuilder builder(launch);
      SmallVector<Value> operands(launch.getKernelOperands());
      for (unsigned position : it->second) {
        std::optional<MemRefType> type =
            getGeneralized(operands[position].getType());
        if (type)
          operands[position] = memref::CastOp::create(
              builder, launch.getLoc(), *type, operands[position]);
      }
      launch.getKernelOperandsMutable().assign(operands);
    });
  }
};

} // namespace
