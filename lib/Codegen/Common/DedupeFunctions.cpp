//===- DedupeFunctions.cpp - One copy of each identical function ----------===//
//
// This file implements -remat-dedupe-functions: private functions and GPU
// kernel modules that are identical up to their symbol names are merged into
// the first of them, so the repeated layers of a network are compiled once.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATDEDUPEFUNCTIONSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// A function or kernel module that may be merged with its twins: its own
/// symbol name and those of the symbols it defines (a kernel module's
/// kernels), in order.
struct Candidate {
  Operation *op;
  SmallVector<std::pair<Operation *, StringAttr>> names;
};

/// Returns true for the ops the pass merges: private functions with a body
/// and GPU kernel modules (which a launch names as @module::@kernel).
bool isCandidate(Operation &op) {
  if (auto function = dyn_cast<func::FuncOp>(op))
    return function.isPrivate() && !function.isExternal();
  return isa<gpu::GPUModuleOp>(op);
}

/// A hash of `op`'s structure: every nested op's name, attributes, result
/// types and operand count in walk order. Equal ops hash equally; the
/// grouping confirms with OperationEquivalence.
llvm::hash_code hashStructure(Operation *op) {
  llvm::hash_code hash = mlir::hash_value(op->getName());
  op->walk([&](Operation *nested) {
    hash = llvm::hash_combine(hash,
                              OperationEquivalence::computeHash(
                                  nested, OperationEquivalence::ignoreHashValue,
                                  OperationEquivalence::ignoreHashValue,
                                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// One round: merges each group of identical candidates into its first.
/// Returns the number of candidates erased.
unsigned dedupeOnce(ModuleOp module) {
  MLIRContext *context = module.getContext();
  SmallVector<Candidate> candidates;
  for (Operation &op : module.getBody()->getOperations()) {
    if (!isCandidate(op))
      continue;
    Candidate candidate{&op, {}};
    candidate.names.emplace_back(&op, SymbolTable::getSymbolName(&op));
    if (isa<gpu::GPUModuleOp>(op))
      for (Operation &nested : op.getRegion(0).getOps())
        if (auto name = nested.getAttrOfType<StringAttr>(
                SymbolTable::getSymbolAttrName()))
          candidate.names.emplace_back(&nested, name);
    candidates.push_back(std::move(candidate));
  }
  if (candidates.size() < 2)
    return 0;

  // Names are part of an op's attributes: while the candidates are
  // compared, every one of them carries the same placeholder names.
  StringAttr placeholder = StringAttr::get(context, "__remat_dedupe");
  auto setNames = [&](bool original) {
    for (Candidate &candidate : candidates)
      for (auto [op, name] : candidate.names)
        SymbolTable::setSymbolName(op, original ? name : placeholder);
  };
  setNames(/*original=*/false);
  llvm::MapVector<llvm::hash_code, SmallVector<unsigned>> buckets;
  for (auto [i, candidate] : llvm::enumerate(candidates))
    buckets[hashStructure(candidate.op)].push_back(i);
  // The candidate each one is merged into (itself if kept).
  SmallVector<unsigned> keptAs(candidates.size());
  for (auto &bucket : buckets) {
    SmallVector<unsigned> kept;
    for (unsigned i : bucket.second) {
      keptAs[i] = i;
      for (unsigned k : kept)
        if (OperationEquivalence::isEquivalentTo(
                candidates[k].op, candidates[i].op,
                OperationEquivalence::IgnoreLocations)) {
          keptAs[i] = k;
          break;
        }
      if (keptAs[i] == i)
        kept.push_back(i);
    }
  }
  setNames(/*original=*/true);

  // Every reference to a dropped symbol, or to a symbol it defines, names
  // the kept one's instead.
  DenseMap<StringAttr, unsigned> dropped;
  for (auto [i, kept] : llvm::enumerate(keptAs))
    if (kept != i)
      dropped[candidates[i].names.front().second] = i;
  if (dropped.empty())
    return 0;
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
    auto it = dropped.find(ref.getRootReference());
    if (it == dropped.end())
      return std::nullopt;
    const Candidate &from = candidates[it->second];
    const Candidate &to = candidates[keptAs[it->second]];
    SmallVector<FlatSymbolRefAttr> nested;
    for (FlatSymbolRefAttr leaf : ref.getNestedReferences()) {
      StringAttr name = leaf.getAttr();
      for (auto [fromName, toName] : llvm::zip(from.names, to.names))
        if (fromName.second == leaf.getAttr())
          name = toName.second;
      nested.push_back(FlatSymbolRefAttr::get(name));
    }
    return SymbolRefAttr::get(to.names.front().second, nested);
  });
  DenseSet<Operation *> erased;
  for (auto &entry : dropped)
    erased.insert(candidates[entry.second].op);
  for (Operation &op : module.getBody()->getOperations())
    if (!erased.contains(&op))
      replacer.recursivelyReplaceElementsIn(&op, /*replaceAttrs=*/true,
                                            /*replaceLocs=*/false,
                                            /*replaceTypes=*/false);
  for (Operation *op : erased)
    op->erase();
  return dropped.size();
}

struct RematDedupeFunctionsPass
    : remat::impl::RematDedupeFunctionsPassBase<RematDedupeFunctionsPass> {
  void runOnOperation() override {
    while (unsigned erased = dedupeOnce(getOperation()))
      numErased += erased;
  }
};

} // namespace
