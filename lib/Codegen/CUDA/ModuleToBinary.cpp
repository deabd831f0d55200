//===- ModuleToBinary.cpp - Kernel modules to binaries in parallel --------===//
//
// This file implements -remat-gpu-module-to-binary: upstream's
// -gpu-module-to-binary with the modules serialized on the context's
// threads, then replaced by their binaries in module order.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"

#include "llvm/ADT/StringSwitch.h"

namespace remat {
#define GEN_PASS_DEF_REMATGPUMODULETOBINARYPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns `object` without the compile times upstream's NVVM target
/// records in its properties (ISAToBinaryTimeInMs, LLVMIRToISATimeInMs):
/// the same kernel must give the same IR, whatever the machine's load.
Attribute dropTimes(Attribute object) {
  auto gpuObject = dyn_cast<gpu::ObjectAttr>(object);
  if (!gpuObject || !gpuObject.getProperties())
    return object;
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute property : gpuObject.getProperties())
    if (!property.getName().strref().ends_with("TimeInMs"))
      kept.push_back(property);
  DictionaryAttr properties =
      kept.empty() ? DictionaryAttr()
                   : DictionaryAttr::get(object.getContext(), kept);
  return gpu::ObjectAttr::get(object.getContext(), gpuObject.getTarget(),
                              gpuObject.getFormat(), gpuObject.getObject(),
                              properties, gpuObject.getKernels());
}

struct RematGpuModuleToBinaryPass
    : remat::impl::RematGpuModuleToBinaryPassBase<RematGpuModuleToBinaryPass> {
  using RematGpuModuleToBinaryPassBase::RematGpuModuleToBinaryPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<gpu::CompilationTarget> format =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(
            compilationTarget)
            .Cases({"offloading", "llvm"}, gpu::CompilationTarget::Offload)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Case("fatbin", gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!format) {
      module.emitError() << "-remat-gpu-module-to-binary: unknown format '"
                         << compilationTarget << "'";
      return signalPassFailure();
    }

    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp kernel : kernels)
      if (!kernel.getTargetsAttr() || kernel.getTargetsAttr().empty()) {
        kernel.emitError("the kernel module has no target attributes");
        return signalPassFailure();
      }
    // Built before the threads start: a target that asks for the symbol
    // table (to resolve external symbols) only reads it.
    SymbolTable symbols(module);
    auto getSymbols = [&]() -> SymbolTable * { return &symbols; };
    gpu::TargetOptions options(toolkitPath, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"", *format,
                               getSymbols);

    // Each module's objects, one per target; every module is serialized
    // apart from the others.
    std::vector<SmallVector<Attribute>> objects(kernels.size());
    if (failed(failableParallelForEachN(
            &getContext(), 0, kernels.size(), [&](size_t i) -> LogicalResult {
              gpu::GPUModuleOp kernel = kernels[i];
              for (Attribute attr : kernel.getTargetsAttr()) {
                auto target = cast<gpu::TargetAttrInterface>(attr);
                std::optional<SmallVector<char, 0>> serialized =
                    target.serializeToObject(kernel, options);
                if (!serialized)
                  return kernel.emitError(
                      "the kernel module could not be serialized");
                Attribute object =
                    target.createObject(kernel, *serialized, options);
                if (!object)
                  return kernel.emitError(
                      "the kernel module's object could not be made");
                objects[i].push_back(dropTimes(object));
              }
              return success();
            })))
      return signalPassFailure();

    OpBuilder builder(&getContext());
    for (auto [kernel, kernelObjects] : llvm::zip(kernels, objects)) {
      builder.setInsertionPointAfter(kernel);
      auto handler =
          dyn_cast_or_null<gpu::OffloadingLLVMTranslationAttrInterface>(
              kernel.getOffloadingHandlerAttr());
      gpu::BinaryOp::create(builder, kernel.getLoc(), kernel.getName(), handler,
                            builder.getArrayAttr(kernelObjects));
      kernel->erase();
      ++numModules;
    }
  }
};

} // namespace
