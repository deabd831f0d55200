//===- ReuseBuffers.cpp - Elementwise ops write into dying operands -------===//
//
// This file implements -remat-reuse-buffers, which lets an elementwise linalg
// op of a bufferized step write its result into the buffer of an operand
// that dies at the op, instead of a buffer of its own.
//
//===----------------------------------------------------------------------===//

#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace remat {
#define GEN_PASS_DEF_REMATREUSEBUFFERSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns the allocation `value` is, if it is a `memref.alloc` of `block`
/// whose every user is an op of `block` that makes no view of it (it may
/// be returned).
memref::AllocOp getPlainAllocation(Value value, Block &block) {
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &block)
    return nullptr;
  for (Operation *user : alloc->getUsers()) {
    if (user->getBlock() != &block)
      return nullptr;
    if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
      return nullptr;
  }
  return alloc;
}

/// Returns the deallocations of `alloc`, or failure if one is not a plain
/// `memref.dealloc` of it in its block.
FailureOr<SmallVector<Operation *>> getDeallocs(memref::AllocOp alloc) {
  SmallVector<Operation *> deallocs;
  for (Operation *user : alloc->getUsers()) {
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
    else if (hasEffect<MemoryEffects::Free>(user))
      return failure();
  }
  return deallocs;
}

/// Returns true if `generic` reads `source` only through identity maps.
bool isReadAsElementwise(linalg::GenericOp generic, memref::AllocOp source) {
  for (OpOperand &operand : generic->getOpOperands())
    if (operand.get() == source.getResult() &&
        (generic.isDpsInit(&operand) ||
         !generic.getMatchingIndexingMap(&operand).isIdentity()))
      return false;
  return true;
}

/// Returns true if no user of `alloc` comes before `op`.
bool isFirstUser(memref::AllocOp alloc, Operation *op) {
  return llvm::all_of(alloc->getUsers(), [&](Operation *user) {
    return user == op || op->isBeforeInBlock(user);
  });
}

/// Returns true if every user of `alloc` but its deallocations comes before
/// `op` or is `op`.
bool isLastUser(memref::AllocOp alloc, Operation *op) {
  return llvm::all_of(alloc->getUsers(), [&](Operation *user) {
    return user == op || isa<memref::DeallocOp>(user) ||
           user->isBeforeInBlock(op);
  });
}

/// Writes the result of `generic` into an operand's buffer when legal
/// (getReusableOperands) and the operand dies at `generic`, whose result is
/// first used there.
bool reuseOperand(linalg::GenericOp generic, Block &block) {
  SmallVector<memref::AllocOp> sources;
  memref::AllocOp result = remat::getReusableOperands(generic, block, sources);
  if (!result || !isFirstUser(result, generic))
    return false;
  for (memref::AllocOp source : sources) {
    if (!isLastUser(source, generic))
      continue;
    // The merged buffer lives as long as the result did. (The deallocs are
    // held here: a range-for over `*getDeallocs(...)` would read a
    // destroyed temporary.)
    FailureOr<SmallVector<Operation *>> deallocs = getDeallocs(source);
    for (Operation *dealloc : *deallocs)
      dealloc->erase();
    result.replaceAllUsesWith(source.getResult());
    result.erase();
    return true;
  }
  return false;
}

struct RematReuseBuffersPass
    : remat::impl::RematReuseBuffersPassBase<RematReuseBuffersPass> {
  using RematReuseBuffersPassBase::RematReuseBuffersPassBase;

  void runOnOperation() override {
    numReused += remat::reuseDyingOperandBuffers(getOperation());
  }
};

} // namespace

/// Every loop parallel, the result a fresh allocation whose payload does not
/// read it; each source read with the result's identity map only, of the
/// result's type; both freed by plain deallocations only.
memref::AllocOp
remat::getReusableOperands(linalg::GenericOp generic, Block &block,
                           SmallVectorImpl<memref::AllocOp> &sources) {
  if (generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  OpOperand &init = generic.getDpsInitsMutable()[0];
  if (!generic.getMatchingIndexingMap(&init).isIdentity() ||
      generic.payloadUsesValueFromOperand(&init))
    return nullptr;
  memref::AllocOp result = getPlainAllocation(init.get(), block);
  if (!result || failed(getDeallocs(result)))
    return nullptr;
  size_t before = sources.size();
  for (OpOperand *input : generic.getDpsInputOperands()) {
    memref::AllocOp source = getPlainAllocation(input->get(), block);
    if (source && source != result && source.getType() == result.getType() &&
        isReadAsElementwise(generic, source) &&
        succeeded(getDeallocs(source)) && !llvm::is_contained(sources, source))
      sources.push_back(source);
  }
  return sources.size() > before ? result : nullptr;
}

unsigned remat::reuseDyingOperandBuffers(func::FuncOp function) {
  Region &body = function.getBody();
  if (!body.hasOneBlock())
    return 0;
  Block &block = body.front();
  SmallVector<linalg::GenericOp> candidates;
  for (Operation &op : block)
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      candidates.push_back(generic);
  unsigned reused = 0;
  for (linalg::GenericOp generic : candidates)
    reused += reuseOperand(generic, block);
  return reused;
}
