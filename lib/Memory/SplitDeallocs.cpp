//===- SplitDeallocs.cpp - Plain frees for distinct allocations -----------===//
//
// This file implements -remat-split-deallocs, the linear-time special case
// of upstream's buffer-deallocation simplification that a straight-line
// training step needs: every buffer is its own allocation, so deciding which
// ones to free takes one lookup each.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATSPLITDEALLOCSPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Splits `dealloc` into plain frees if all its operands are known; returns
/// failure, leaving it untouched, otherwise.
LogicalResult splitDealloc(bufferization::DeallocOp dealloc,
                           IRRewriter &rewriter) {
  // Each memref a distinct allocation, freed unconditionally.
  llvm::SmallDenseMap<Value, bool, 16> retainedAlloc;
  for (auto [memref, condition] :
       llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
    if (!memref.getDefiningOp<memref::AllocOp>() ||
        !matchPattern(condition, m_One()))
      return failure();
    if (!retainedAlloc.try_emplace(memref, false).second)
      return failure();
  }

  // Each retained value is a view of one of them (kept, result true), of
  // another allocation or of a function argument (result false); anything
  // else may alias in ways only the upstream analysis can tell.
  SmallVector<bool> retainedResult;
  for (Value retained : dealloc.getRetained()) {
    Value base = remat::getMemoryBase(retained);
    auto it = retainedAlloc.find(base);
    if (it != retainedAlloc.end()) {
      it->second = true;
      retainedResult.push_back(true);
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(base);
    bool isFunctionArgument =
        arg && arg.getOwner()->isEntryBlock() &&
        isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (!base.getDefiningOp<memref::AllocOp>() && !isFunctionArgument)
      return failure();
    retainedResult.push_back(false);
  }

  rewriter.setInsertionPoint(dealloc);
  for (Value memref : dealloc.getMemrefs())
    if (!retainedAlloc.lookup(memref))
      memref::DeallocOp::create(rewriter, dealloc.getLoc(), memref);
  SmallVector<Value> results;
  for (bool kept : retainedResult)
    results.push_back(arith::ConstantOp::create(rewriter, dealloc.getLoc(),
                                                rewriter.getBoolAttr(kept)));
  rewriter.replaceOp(dealloc, results);
  return success();
}

struct RematSplitDeallocsPass
    : remat::impl::RematSplitDeallocsPassBase<RematSplitDeallocsPass> {
  using RematSplitDeallocsPassBase::RematSplitDeallocsPassBase;

  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk(
        [&](bufferization::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    IRRewriter rewriter(&getContext());
    for (bufferization::DeallocOp dealloc : deallocs)
      (void)splitDealloc(dealloc, rewriter);
  }
};

} // namespace
