//===- StridedCopiesToLinalg.cpp - Strided copies as generated loops ------===//
//
// This file implements -remat-strided-copies-to-linalg: a memref.copy that
// memref-to-llvm would lower to a call of the C runner's generic memrefCopy
// (one memcpy per element for a strided operand) becomes a linalg.copy,
// which the CPU lowering turns into loops LLVM compiles for the shapes.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATSTRIDEDCOPIESTOLINALGPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// Returns true if memref-to-llvm copies `type` with one memcpy: the rule of
/// its memref.copy lowering.
static bool isCopiedWithMemcpy(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

namespace {

struct RematStridedCopiesToLinalgPass
    : remat::impl::RematStridedCopiesToLinalgPassBase<
          RematStridedCopiesToLinalgPass> {
  using RematStridedCopiesToLinalgPassBase::RematStridedCopiesToLinalgPassBase;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      // Only ranked memrefs: linalg.copy takes no unranked operand.
      if (isa<MemRefType>(copy.getSource().getType()) &&
          isa<MemRefType>(copy.getTarget().getType()) &&
          (!isCopiedWithMemcpy(copy.getSource().getType()) ||
           !isCopiedWithMemcpy(copy.getTarget().getType())))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
    numCopies += copies.size();
  }
};

} // namespace
