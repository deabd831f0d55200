//===- ReuseBuffers.cpp - Elementwise ops write into dying operands -------===//
//
// This file implements -remat-reuse-buffers, which lets an elementwise linalg
// op of a bufferized step write its result into the buffer of an operand
// that dies at the op, instead of a buffer of its own.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace remat {
#define GEN_PASS_DEF_REMATREUSEBUFFERSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Returns true if `op` is a reshape of its whole source (memref.reshape,
/// collapse_shape or expand_shape between static, identity-layout types):
/// element i of the view is element i of the source, row-major.
bool isReshapeView(Operation *op) {
  if (!isa<memref::ReshapeOp, memref::CollapseShapeOp, memref::ExpandShapeOp>(
          op))
    return false;
  auto source = cast<MemRefType>(op->getOperand(0).getType());
  auto result = cast<MemRefType>(op->getResult(0).getType());
  return source.hasStaticShape() && result.hasStaticShape() &&
         source.getLayout().isIdentity() && result.getLayout().isIdentity();
}

/// Calls `fn` on each use of `alloc` or of one of its reshape views, other
/// than the uses that make those views.
void forEachUse(memref::AllocOp alloc, function_ref<void(OpOperand &)> fn) {
  SmallVector<Value> aliases{alloc.getResult()};
  for (unsigned next = 0; next < aliases.size(); ++next)
    for (OpOperand &use : aliases[next].getUses()) {
      if (isReshapeView(use.getOwner()) && use.getOperandNumber() == 0)
        aliases.push_back(use.getOwner()->getResult(0));
      else
        fn(use);
    }
}

/// Calls `fn` on each op that uses `alloc` or one of its reshape views,
/// other than those views.
void forEachUser(memref::AllocOp alloc, function_ref<void(Operation *)> fn) {
  forEachUse(alloc, [&](OpOperand &use) { fn(use.getOwner()); });
}

/// Returns the op of `block` that is or holds `user`, or null.
Operation *getOpInBlock(Block &block, Operation *user) {
  return block.findAncestorOpInBlock(*user);
}

/// Returns the allocation `value` is, or is a chain of reshape views of, if
/// it is a `memref.alloc` of `block` of a static, identity-layout type whose
/// every user, and every user of its reshape views, is an op of `block`
/// that makes no other view of it (it may be returned), or an op nested in
/// one that returns no memref: a view made in a loop's body (the subviews of
/// an embedding gradient's scatter) ends with the loop. `aliases` gets the
/// values of the buffer those users read: the allocation's result and its
/// reshape views.
memref::AllocOp getPlainAllocation(Value value, Block &block,
                                   SmallVectorImpl<Value> &aliases) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isReshapeView(def))
      break;
    value = def->getOperand(0);
  }
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &block ||
      !alloc.getType().hasStaticShape() ||
      !alloc.getType().getLayout().isIdentity())
    return nullptr;
  bool plain = true;
  aliases.clear();
  forEachUse(alloc, [&](OpOperand &use) {
    aliases.push_back(use.get());
    Operation *op = getOpInBlock(block, use.getOwner());
    plain &= op &&
             llvm::none_of(op->getResultTypes(), llvm::IsaPred<BaseMemRefType>);
  });
  return plain ? alloc : nullptr;
}

memref::AllocOp getPlainAllocation(Value value, Block &block) {
  SmallVector<Value> aliases;
  return getPlainAllocation(value, block, aliases);
}

/// Returns the deallocations of `alloc`, or failure if one is not a plain
/// `memref.dealloc` of it in its block.
FailureOr<SmallVector<Operation *>> getDeallocs(memref::AllocOp alloc) {
  SmallVector<Operation *> deallocs;
  bool other = false;
  forEachUser(alloc, [&](Operation *user) {
    if (isa<memref::DeallocOp>(user) && user->getOperand(0) == alloc)
      deallocs.push_back(user);
    else if (hasEffect<MemoryEffects::Free>(user))
      other = true;
  });
  if (other)
    return failure();
  return deallocs;
}

/// Returns the bytes of a static memref type.
int64_t getBytes(MemRefType type) {
  return remat::getTypeBytes(type).value_or(0);
}

/// Returns true if `generic` reads the buffer of `aliases` only as inputs
/// through identity maps, each of the type of its init `initType`.
bool isReadAsElementwise(linalg::GenericOp generic, ArrayRef<Value> aliases,
                         Type initType) {
  for (OpOperand &operand : generic->getOpOperands())
    if (llvm::is_contained(aliases, operand.get()) &&
        (generic.isDpsInit(&operand) || operand.get().getType() != initType ||
         !generic.getMatchingIndexingMap(&operand).isIdentity()))
      return false;
  return true;
}

/// Returns true if no user of `alloc` (through its reshape views) comes
/// before `op`.
bool isFirstUser(memref::AllocOp alloc, Operation *op) {
  bool first = true;
  forEachUser(alloc, [&](Operation *user) {
    user = getOpInBlock(*op->getBlock(), user);
    first &= user == op || op->isBeforeInBlock(user);
  });
  return first;
}

/// Returns true if every user of `alloc` (through its reshape views) but its
/// deallocations comes before `op` or is `op`.
bool isLastUser(memref::AllocOp alloc, Operation *op) {
  bool last = true;
  forEachUser(alloc, [&](Operation *user) {
    if (isa<memref::DeallocOp>(user))
      return;
    user = getOpInBlock(*op->getBlock(), user);
    last &= user == op || user->isBeforeInBlock(op);
  });
  return last;
}

/// Returns `source`'s buffer as a value of `result`'s type, made before
/// every use of `result`: `source` itself when the types match, else a
/// collapse to one dimension and an expansion to `result`'s shape; null
/// when `source` does not come before every use of `result` (a reshape view
/// of `result` may precede the op that reuses `source`).
Value viewAs(memref::AllocOp source, memref::AllocOp result) {
  Operation *at = result;
  if (result->isBeforeInBlock(source)) {
    for (Operation *user : result->getUsers())
      if (user->isBeforeInBlock(source))
        return nullptr;
    at = source->getNextNode();
  }
  MemRefType from = source.getType(), to = result.getType();
  if (from == to)
    return source.getResult();
  if (from.getRank() == 0 || to.getRank() == 0)
    return nullptr;
  OpBuilder builder(at);
  Location loc = result.getLoc();
  Value flat = source.getResult();
  if (from.getRank() != 1)
    flat = memref::CollapseShapeOp::create(
        builder, loc, flat,
        {llvm::to_vector(llvm::seq<int64_t>(0, from.getRank()))});
  if (to.getRank() == 1)
    return flat;
  return memref::ExpandShapeOp::create(
      builder, loc, to.getShape(), flat,
      {llvm::to_vector(llvm::seq<int64_t>(0, to.getRank()))});
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
    Value view = viewAs(source, result);
    if (!view)
      continue;
    // The merged buffer lives as long as the result did. (The deallocs are
    // held here: a range-for over `*getDeallocs(...)` would read a
    // destroyed temporary.)
    FailureOr<SmallVector<Operation *>> deallocs = getDeallocs(source);
    for (Operation *dealloc : *deallocs)
      dealloc->erase();
    // The result's deallocations free the source's allocation, not a view.
    FailureOr<SmallVector<Operation *>> resultDeallocs = getDeallocs(result);
    for (Operation *dealloc : *resultDeallocs)
      dealloc->setOperand(0, source.getResult());
    result.replaceAllUsesWith(view);
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

/// Every loop parallel, the result a fresh allocation (or a reshape view of
/// one) whose payload does not read it; each source an allocation of as
/// many bytes and the same element type, read with the result's identity
/// map only, through views of the result's type; both freed by plain
/// deallocations only.
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
    SmallVector<Value> aliases;
    memref::AllocOp source = getPlainAllocation(input->get(), block, aliases);
    if (source && source != result &&
        getBytes(source.getType()) == getBytes(result.getType()) &&
        source.getType().getElementType() ==
            result.getType().getElementType() &&
        isReadAsElementwise(generic, aliases, init.get().getType()) &&
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
