//===- Vectorize.cpp - Vector tiles of elementwise and reduction ops ------===//
//
// This file implements -remat-vectorize: linalg ops on static buffers that
// read no windows become loop nests over vector tiles of their innermost
// dimension, in the scalar loops' order, so that outputs keep their bits.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "remat-vectorize"

namespace remat {
#define GEN_PASS_DEF_REMATVECTORIZEPASS
#define GEN_PASS_DEF_REMATWIDENBOOLVECTORSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

/// Bits of one element of `type` in memory (a byte for i1: vectors of i1
/// are widened to bytes in memory by -remat-widen-bool-vectors), or 0 for
/// types not vectorized.
static unsigned getElementBits(Type type) {
  if (type.isIndex())
    return 64;
  if (!type.isIntOrFloat())
    return 0;
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits == 1)
    return 8;
  return bits % 8 == 0 ? bits : 0;
}

/// The loop dimension of `ranges` that vector tiles cover: the innermost
/// that runs more than once (the dimensions after it run once: a mean's
/// [rows x 1] buffers), else the innermost.
static unsigned getVectorDim(ArrayRef<int64_t> ranges) {
  unsigned dim = ranges.size() - 1;
  while (dim > 0 && ranges[dim] == 1)
    --dim;
  return ranges[dim] == 1 ? ranges.size() - 1 : dim;
}

/// Returns the lanes of the vector tiles of `op`, or 0 if `op` is left to
/// the scalar loops: its shapes must be static, its maps projected
/// permutations, its vector dimension (getVectorDim) the innermost
/// unit-stride dimension of every buffer it indexes but for dimensions of
/// size 1, and upstream's vectorizer must accept its body.
static int64_t getVectorLanes(linalg::LinalgOp op, int64_t vectorBits) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      !op.hasOnlyProjectedPermutations())
    return 0;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return 0;
  unsigned innermost = getVectorDim(ranges);
  AffineExpr innermostDim = getAffineDimExpr(innermost, op.getContext());
  unsigned widest = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    unsigned bits = getElementBits(type.getElementType());
    if (bits == 0)
      return 0;
    widest = std::max(widest, bits);
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> position = map.getResultPosition(innermostDim);
    // A buffer the innermost dimension does not index is read as a
    // broadcast scalar or is a reduction's accumulator.
    if (!position)
      continue;
    for (AffineExpr later : map.getResults().drop_front(*position + 1))
      if (ranges[cast<AffineDimExpr>(later).getPosition()] != 1)
        return 0;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides[*position] != 1)
      return 0;
  }
  if (widest == 0)
    return 0;
  int64_t lanes = vectorBits / widest;
  if (lanes < 2 || ranges[innermost] < lanes)
    return 0;
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return 0;
  return lanes;
}

/// Builds the tile of `op` at the loop indices `outer` whose vector
/// dimension (getVectorDim) covers `size` elements from `offset`: a 1-D
/// linalg.generic on views of `op`'s buffers with their unit dimensions
/// dropped (a buffer the vector dimension does not index becomes a 0-D
/// view), so that it vectorizes into 1-D vectors; then vectorizes it.
static LogicalResult vectorizeTile(RewriterBase &rewriter, linalg::LinalgOp op,
                                   ArrayRef<OpFoldResult> outer,
                                   OpFoldResult offset, int64_t size) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  unsigned innermost = getVectorDim(op.getStaticLoopRanges());
  AffineExpr d0 = getAffineDimExpr(0, context);
  SmallVector<Value> inputs, outputs;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<MemRefType>(value.getType());
    bool indexed = false;
    if (type) {
      SmallVector<OpFoldResult> offsets, sizes,
          strides(type.getRank(), rewriter.getIndexAttr(1));
      for (AffineExpr result : map.getResults()) {
        unsigned dim = cast<AffineDimExpr>(result).getPosition();
        indexed |= dim == innermost;
        offsets.push_back(dim == innermost ? offset : outer[dim]);
        sizes.push_back(rewriter.getIndexAttr(dim == innermost ? size : 1));
      }
      SmallVector<int64_t> shape;
      if (indexed)
        shape.push_back(size);
      auto viewType = memref::SubViewOp::inferRankReducedResultType(
          shape, type, offsets, sizes, strides);
      value = memref::SubViewOp::create(rewriter, loc, viewType, value, offsets,
                                        sizes, strides);
    }
    maps.push_back(AffineMap::get(
        1, 0, indexed ? ArrayRef(d0) : ArrayRef<AffineExpr>(), context));
    (op.isDpsInit(&operand) ? outputs : inputs).push_back(value);
  }
  auto tile =
      linalg::GenericOp::create(rewriter, loc, TypeRange(), inputs, outputs,
                                maps, {op.getIteratorTypesArray()[innermost]});
  IRMapping mapping;
  rewriter.cloneRegionBefore(op->getRegion(0), tile.getRegion(),
                             tile.getRegion().begin(), mapping);
  // The body's loop indices: the outer ones are the tile's, the innermost
  // is the tile's own index plus its offset.
  for (auto index :
       llvm::make_early_inc_range(tile.getBody()->getOps<linalg::IndexOp>())) {
    rewriter.setInsertionPoint(index);
    Value replacement;
    if (index.getDim() == innermost) {
      Value local = linalg::IndexOp::create(rewriter, index.getLoc(), 0);
      replacement = arith::AddIOp::create(
          rewriter, index.getLoc(), local,
          getValueOrCreateConstantIndexOp(rewriter, index.getLoc(), offset));
    } else {
      replacement = getValueOrCreateConstantIndexOp(rewriter, index.getLoc(),
                                                    outer[index.getDim()]);
    }
    rewriter.replaceOp(index, replacement);
  }
  rewriter.setInsertionPoint(tile);
  if (failed(linalg::vectorize(rewriter, tile)))
    return failure();
  rewriter.eraseOp(tile);
  return success();
}

/// Replaces `op` by a loop nest that steps by 1 over every loop dimension
/// but the vector dimension (getVectorDim, the innermost unless later ones
/// run once), which it covers with vector tiles of `lanes` elements and
/// one narrower tile for the remainder, in the order of the scalar loops
/// along every reduction dimension.
///
/// The leading parallel dimensions are one scf.parallel (their tiles are
/// independent: -remat-outline-parallel-loops may run them on several
/// threads), the others scf.for loops in order. An op whose first loop is
/// a reduction (batch norm's per-channel sums of NCHW values) would have
/// no parallel loop outermost: its parallel dimensions but the innermost
/// move out of the reduction loops into the scf.parallel. Every output
/// element is still one iteration's, accumulated over the reduction
/// dimensions in their order: the results are bit-identical.
static LogicalResult tileAndVectorize(RewriterBase &rewriter,
                                      linalg::LinalgOp op, int64_t lanes) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned innermost = getVectorDim(ranges);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto isParallel = [&](unsigned dim) {
    return linalg::isParallelIterator(iterators[dim]);
  };
  unsigned leading = 0;
  while (leading < innermost && isParallel(leading))
    ++leading;
  bool hoist = llvm::all_of(llvm::seq(0u, leading),
                            [&](unsigned dim) { return ranges[dim] == 1; });
  // The later dimensions run once: their index stays 0.
  SmallVector<OpFoldResult> outer(ranges.size(), rewriter.getIndexAttr(0));
  SmallVector<unsigned> parallelDims;
  SmallVector<Value> lowers, uppers, steps;
  for (unsigned dim = 0; dim < innermost; ++dim) {
    if (ranges[dim] == 1 || !isParallel(dim) || (dim >= leading && !hoist))
      continue;
    parallelDims.push_back(dim);
    lowers.push_back(constant(0));
    uppers.push_back(constant(ranges[dim]));
    steps.push_back(constant(1));
  }
  if (!parallelDims.empty()) {
    auto loop = scf::ParallelOp::create(rewriter, loc, lowers, uppers, steps);
    rewriter.setInsertionPointToStart(loop.getBody());
    for (auto [dim, iv] :
         llvm::zip_equal(parallelDims, loop.getInductionVars()))
      outer[dim] = iv;
  }
  for (unsigned dim = 0; dim < innermost; ++dim) {
    if (ranges[dim] == 1 || llvm::is_contained(parallelDims, dim))
      continue;
    auto loop = scf::ForOp::create(rewriter, loc, constant(0),
                                   constant(ranges[dim]), constant(1));
    rewriter.setInsertionPointToStart(loop.getBody());
    outer[dim] = loop.getInductionVar();
  }

  int64_t full = ranges[innermost] / lanes * lanes;
  if (full == lanes) {
    if (failed(vectorizeTile(rewriter, op, outer, rewriter.getIndexAttr(0),
                             lanes)))
      return failure();
  } else {
    OpBuilder::InsertionGuard loopGuard(rewriter);
    Value tile;
    if (linalg::isParallelIterator(iterators[innermost])) {
      auto loop = scf::ParallelOp::create(rewriter, loc, constant(0),
                                          constant(full), constant(lanes));
      rewriter.setInsertionPointToStart(loop.getBody());
      tile = loop.getInductionVars().front();
    } else {
      auto loop = scf::ForOp::create(rewriter, loc, constant(0), constant(full),
                                     constant(lanes));
      rewriter.setInsertionPointToStart(loop.getBody());
      tile = loop.getInductionVar();
    }
    if (failed(vectorizeTile(rewriter, op, outer, tile, lanes)))
      return failure();
  }
  if (int64_t rest = ranges[innermost] - full)
    if (failed(vectorizeTile(rewriter, op, outer, rewriter.getIndexAttr(full),
                             rest)))
      return failure();
  rewriter.eraseOp(op);
  return success();
}

namespace {

struct RematVectorizePass
    : remat::impl::RematVectorizePassBase<RematVectorizePass> {
  using RematVectorizePassBase::RematVectorizePassBase;

  void runOnOperation() override {
    if (vectorBits < 16) {
      getOperation().emitError("-remat-vectorize: vector-bits must be at "
                               "least 16, got ")
          << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (int64_t lanes = getVectorLanes(op, vectorBits))
        candidates.emplace_back(op, lanes);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, lanes] : candidates) {
      // The precondition held on the whole op, so it holds on its tiles.
      if (failed(tileAndVectorize(rewriter, op, lanes))) {
        op.emitError("-remat-vectorize: cannot vectorize a tile of this op");
        return signalPassFailure();
      }
      ++numVectorized;
    }
    if (candidates.empty())
      return;

    // Transfers of the 1-D tiles to loads and stores (a 0-D view's read to
    // a scalar load and a broadcast), reductions to vector.reduction with
    // their accumulator.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    memref::populateFoldMemRefAliasOpPatterns(patterns);
    addCanonicalizations(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "vector cleanup did not converge\n");
  }

  /// The canonicalizations of the vector and memref ops the tiles create.
  void addCanonicalizations(RewritePatternSet &patterns) {
    MLIRContext *context = &getContext();
    for (StringRef name : {"vector", "memref", "arith", "affine"})
      if (Dialect *dialect = context->getLoadedDialect(name))
        dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      if (op.getDialectNamespace() == "vector" ||
          op.getDialectNamespace() == "memref")
        op.getCanonicalizationPatterns(patterns, context);
  }
};

struct RematWidenBoolVectorsPass
    : remat::impl::RematWidenBoolVectorsPassBase<RematWidenBoolVectorsPass> {
  using RematWidenBoolVectorsPassBase::RematWidenBoolVectorsPassBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](Operation *op) {
      if (auto load = dyn_cast<LLVM::LoadOp>(op)) {
        VectorType type = getBoolVectorType(load.getType());
        if (!type)
          return;
        // The load keeps its attributes (alignment, alias info) and reads
        // bytes.
        rewriter.setInsertionPointAfter(load);
        load.getResult().setType(toBytes(type));
        auto bits = LLVM::TruncOp::create(rewriter, load.getLoc(), type,
                                          load.getResult());
        rewriter.replaceAllUsesExcept(load.getResult(), bits, bits);
      } else if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
        VectorType type = getBoolVectorType(store.getValue().getType());
        if (!type)
          return;
        rewriter.setInsertionPoint(store);
        Value bytes = LLVM::ZExtOp::create(rewriter, store.getLoc(),
                                           toBytes(type), store.getValue());
        rewriter.modifyOpInPlace(
            store, [&] { store.getValueMutable().assign(bytes); });
      }
    });
  }

  static VectorType getBoolVectorType(Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector && vector.getElementType().isInteger(1) ? vector
                                                          : VectorType();
  }
  VectorType toBytes(VectorType type) {
    return type.clone(IntegerType::get(&getContext(), 8));
  }
};

} // namespace
