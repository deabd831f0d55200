//===- MergeKernelModules.cpp - A few large kernel modules ----------------===//
//
// This file implements -remat-merge-kernel-modules: the kernel modules of a
// step, gathered a few at a time into one, so that each NVPTX compile,
// ptxas process and module load serves many kernels.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"

namespace remat {
#define GEN_PASS_DEF_REMATMERGEKERNELMODULESPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// A symbol's new place: the module it moved to and its name there.
using Place = std::pair<StringAttr, StringAttr>;

/// Moves the ops of `from` into `into`, whose symbol table is `symbols`,
/// dropping each symbol `into` already holds as the same op and renaming
/// each other whose name is taken. Records every symbol's new name in
/// `places`, keyed by (from's name, its old name).
void mergeInto(gpu::GPUModuleOp into, SymbolTable &symbols,
               gpu::GPUModuleOp from, DenseMap<Place, Place> &places) {
  StringAttr fromName = from.getNameAttr();
  StringAttr intoName = into.getNameAttr();
  // New names first, inside `from`, so its own references follow them.
  SmallVector<Operation *> duplicates;
  for (Operation &op : from.getBody()->getOperations()) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name)
      continue;
    Operation *existing = symbols.lookup(name);
    if (!existing) {
      places[{fromName, name}] = {intoName, name};
      continue;
    }
    if (OperationEquivalence::isEquivalentTo(
            existing, &op, OperationEquivalence::IgnoreLocations)) {
      places[{fromName, name}] = {intoName, name};
      duplicates.push_back(&op);
      continue;
    }
    // A name unique in `into`: the module's own name (unique in the parent
    // module) first, then numbered.
    std::string base = (fromName.strref() + "_" + name.strref()).str();
    std::string unique = base;
    for (unsigned i = 0; symbols.lookup(unique); ++i)
      unique = base + "_" + std::to_string(i);
    StringAttr newName = StringAttr::get(op.getContext(), unique);
    if (failed(SymbolTable::replaceAllSymbolUses(&op, newName, from)))
      llvm_unreachable("symbol uses inside a kernel module are known");
    SymbolTable::setSymbolName(&op, newName);
    places[{fromName, name}] = {intoName, newName};
  }
  for (Operation *op : duplicates)
    op->erase();
  Block *body = into.getBody();
  while (!from.getBody()->empty()) {
    Operation &op = from.getBody()->front();
    op.moveBefore(body, body->end());
    if (SymbolTable::getSymbolName(&op))
      symbols.insert(&op);
  }
}

struct RematMergeKernelModulesPass
    : remat::impl::RematMergeKernelModulesPassBase<
          RematMergeKernelModulesPass> {
  using RematMergeKernelModulesPassBase::RematMergeKernelModulesPassBase;

  void runOnOperation() override {
    if (kernelsPerModule < 2)
      return;
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(
        module.getOps<gpu::GPUModuleOp>());
    DenseMap<Place, Place> places;
    // Groups of consecutive modules with the same targets.
    size_t first = 0;
    while (first < kernelModules.size()) {
      gpu::GPUModuleOp into = kernelModules[first];
      SymbolTable symbols(into);
      size_t next = first + 1;
      for (; next < kernelModules.size() && next < first + kernelsPerModule &&
             kernelModules[next].getTargetsAttr() == into.getTargetsAttr() &&
             kernelModules[next].getOffloadingHandlerAttr() ==
                 into.getOffloadingHandlerAttr();
           ++next) {
        mergeInto(into, symbols, kernelModules[next], places);
        kernelModules[next]->erase();
      }
      first = next;
    }
    if (places.empty())
      return;
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
      if (ref.getNestedReferences().size() != 1)
        return std::nullopt;
      auto it = places.find({ref.getRootReference(), ref.getLeafReference()});
      if (it == places.end())
        return std::nullopt;
      return SymbolRefAttr::get(it->second.first,
                                {FlatSymbolRefAttr::get(it->second.second)});
    });
    for (Operation &op : module.getBody()->getOperations())
      if (!isa<gpu::GPUModuleOp>(op))
        replacer.recursivelyReplaceElementsIn(&op, /*replaceAttrs=*/true,
                                              /*replaceLocs=*/false,
                                              /*replaceTypes=*/false);
  }
};

} // namespace
