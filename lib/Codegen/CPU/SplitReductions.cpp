//===- SplitReductions.cpp - Partials of reductions -----------------------===//
//
// This file implements -remat-split-reductions: a reduction along its
// innermost loop dimension first sums into independent lane partials, so
// that its adds are not one chain; a reduction along its outermost one
// first sums into parts, so that threads can share it; then the partials
// fold into the output in order.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"
#include "remat/Codegen/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace remat {
#define GEN_PASS_DEF_REMATSPLITREDUCTIONSPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// The most stack the partials of one op may take.
constexpr int64_t kMaxPartialBytes = int64_t(64) << 10;
/// The fewest terms per output, in multiples of the lanes, worth a split.
constexpr int64_t kMinChunksPerOutput = 4;
/// A reduction along its outermost loop dimension is cut into at most this
/// many parts...
constexpr int64_t kMaxParts = 16;
/// ... of at least this many terms per output each...
constexpr int64_t kMinTermsPerPart = 32;
/// ... when its loops run at least this many iterations in all, and its
/// parallel dimensions other than the innermost (which vector code takes)
/// fewer than this many: threads then have nothing else to share.
constexpr int64_t kMinPartsWork = int64_t(1) << 15;
constexpr int64_t kMinParallelOutside = 16;

/// How a reduction is split: loop dimension `dim` (a reduction, `outer` *
/// `inner` iterations) becomes two, `outer` iterations of `inner`, and the
/// outer one (parts, leading the partials' shape) or the inner one (lanes,
/// ending it) becomes a parallel dimension that indexes the partials.
struct Split {
  Operation *combiner;
  TypedAttr neutral;
  unsigned dim;
  int64_t outer, inner;
  bool partsOuter;
};

/// The combiner and neutral element of `op` if its reduction may be split
/// at all, with the float buffer it accumulates into.
std::optional<Split> getSplittable(linalg::LinalgOp op,
                                   MemRefType &outputType) {
  Operation *combiner = remat::getReorderableCombiner(op);
  if (!combiner || !op.hasOnlyProjectedPermutations() ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  outputType = dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!outputType || !isa<FloatType>(outputType.getElementType()))
    return std::nullopt;
  return Split{combiner, *arith::getNeutralElement(combiner), 0, 0, 0, false};
}

/// The lane split of `op`, if it has one (see the pass's description).
std::optional<Split> getLaneSplit(linalg::LinalgOp op, int64_t partialBits) {
  MemRefType outputType;
  std::optional<Split> split = getSplittable(op, outputType);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned innermost = op.getNumLoops() - 1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!split || !linalg::isReductionIterator(iterators[innermost]))
    return std::nullopt;
  unsigned bits = outputType.getElementTypeBitWidth();
  int64_t lanes = partialBits / bits;
  if (lanes < 2 || ranges[innermost] % lanes != 0)
    return std::nullopt;
  int64_t outputs = outputType.getNumElements();
  int64_t terms = 1;
  for (auto [range, iterator] : llvm::zip_equal(ranges, iterators))
    if (linalg::isReductionIterator(iterator))
      terms *= range;
  if (terms < kMinChunksPerOutput * lanes ||
      outputs * lanes * (bits / 8) > kMaxPartialBytes)
    return std::nullopt;
  split->dim = innermost;
  split->outer = ranges[innermost] / lanes;
  split->inner = lanes;
  return split;
}

/// The parts split of `op`, if it has one (see the pass's description).
std::optional<Split> getPartsSplit(linalg::LinalgOp op) {
  // getSplittable's ops have static shapes.
  MemRefType outputType;
  std::optional<Split> split = getSplittable(op, outputType);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!split || !linalg::isReductionIterator(iterators[0]))
    return std::nullopt;
  int64_t work = 1, parallelOutside = 1;
  for (auto [dim, range] : llvm::enumerate(ranges)) {
    work *= range;
    if (dim + 1 < ranges.size() && linalg::isParallelIterator(iterators[dim]))
      parallelOutside *= range;
  }
  if (work < kMinPartsWork || parallelOutside >= kMinParallelOutside)
    return std::nullopt;
  int64_t outputs = outputType.getNumElements();
  int64_t terms = work / outputs;
  int64_t partBytes = outputs * (outputType.getElementTypeBitWidth() / 8);
  int64_t parts = kMaxParts;
  while (parts >= 2 &&
         (ranges[0] % parts != 0 || terms / parts < kMinTermsPerPart ||
          parts * partBytes > kMaxPartialBytes))
    parts /= 2;
  if (parts < 2)
    return std::nullopt;
  split->outer = parts;
  split->inner = ranges[0] / parts;
  split->partsOuter = true;
  return split;
}

/// Rewrites `op` into its partials and their fold (see the pass's
/// description); returns the op that computes the partials.
linalg::GenericOp splitReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const Split &split) {
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  unsigned loops = op.getNumLoops();
  int64_t parts = split.partsOuter ? split.outer : split.inner;
  OpOperand *init = op.getDpsInitOperand(0);
  auto outputType = cast<MemRefType>(init->get().getType());

  // The partials, on the stack of the function: [parts, output shape...]
  // or [output shape..., lanes].
  SmallVector<int64_t> partialShape(outputType.getShape());
  partialShape.insert(
      split.partsOuter ? partialShape.begin() : partialShape.end(), parts);
  auto partialType = MemRefType::get(partialShape, outputType.getElementType());
  Value partials;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    auto function = op->getParentOfType<FunctionOpInterface>();
    rewriter.setInsertionPointToStart(&function.getFunctionBody().front());
    partials = memref::AllocaOp::create(rewriter, loc, partialType);
  }
  rewriter.setInsertionPoint(op);
  Value neutral = arith::ConstantOp::create(rewriter, loc, split.neutral);
  linalg::FillOp::create(rewriter, loc, neutral, partials);

  // Stage 1: dimension `dim` becomes `outer` then `inner`, the later
  // dimensions move one down; an operand indexed by `dim` is read through a
  // view that cuts that dimension into [outer, inner].
  auto getDim = [&](AffineExpr expr) {
    unsigned position = cast<AffineDimExpr>(expr).getPosition();
    return getAffineDimExpr(position > split.dim ? position + 1 : position,
                            context);
  };
  AffineExpr outer = getAffineDimExpr(split.dim, context);
  AffineExpr inner = getAffineDimExpr(split.dim + 1, context);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> results;
    std::optional<unsigned> position = std::nullopt;
    for (auto [i, result] : llvm::enumerate(map.getResults())) {
      if (cast<AffineDimExpr>(result).getPosition() == split.dim) {
        position = i;
        results.append({outer, inner});
      } else {
        results.push_back(getDim(result));
      }
    }
    if (position) {
      auto type = cast<MemRefType>(value.getType());
      SmallVector<int64_t> shape;
      SmallVector<ReassociationIndices> reassociation;
      for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim) {
        if (dim == static_cast<int64_t>(*position)) {
          reassociation.push_back({static_cast<int64_t>(shape.size()),
                                   static_cast<int64_t>(shape.size()) + 1});
          shape.append({split.outer, split.inner});
          continue;
        }
        reassociation.push_back({static_cast<int64_t>(shape.size())});
        shape.push_back(type.getDimSize(dim));
      }
      value = memref::ExpandShapeOp::create(rewriter, loc, shape, value,
                                            reassociation);
    }
    inputs.push_back(value);
    maps.push_back(AffineMap::get(loops + 1, 0, results, context));
  }
  SmallVector<AffineExpr> partialResults =
      llvm::map_to_vector(op.getMatchingIndexingMap(init).getResults(), getDim);
  if (split.partsOuter)
    partialResults.insert(partialResults.begin(), outer);
  else
    partialResults.push_back(inner);
  maps.push_back(AffineMap::get(loops + 1, 0, partialResults, context));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.insert(iterators.begin() + split.dim, iterators[split.dim]);
  iterators[split.partsOuter ? split.dim : split.dim + 1] =
      utils::IteratorType::parallel;
  auto partialOp =
      linalg::GenericOp::create(rewriter, loc, TypeRange(), inputs,
                                ValueRange{partials}, maps, iterators);
  IRMapping mapping;
  rewriter.cloneRegionBefore(op->getRegion(0), partialOp.getRegion(),
                             partialOp.getRegion().begin(), mapping);

  // Stage 2: output = combine(output, partial) over the partials in order,
  // the loop over the partials where their dimension is (parts first: the
  // outputs, contiguous in each part, are the innermost loop).
  unsigned rank = outputType.getRank();
  unsigned partDim = split.partsOuter ? 0 : rank;
  SmallVector<AffineExpr> outputDims, partialDims;
  for (unsigned dim = 0; dim <= rank; ++dim) {
    partialDims.push_back(getAffineDimExpr(dim, context));
    if (dim != partDim)
      outputDims.push_back(getAffineDimExpr(dim, context));
  }
  SmallVector<utils::IteratorType> foldIterators(rank + 1,
                                                 utils::IteratorType::parallel);
  foldIterators[partDim] = utils::IteratorType::reduction;
  Operation *combiner = split.combiner;
  linalg::GenericOp::create(
      rewriter, loc, TypeRange(), ValueRange{partials}, ValueRange{init->get()},
      {AffineMap::get(rank + 1, 0, partialDims, context),
       AffineMap::get(rank + 1, 0, outputDims, context)},
      foldIterators, [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        OperationState state(bodyLoc, combiner->getName());
        state.addOperands({args[0], args[1]});
        state.addTypes(args[1].getType());
        state.addAttributes(combiner->getAttrs());
        Operation *folded = b.create(state);
        linalg::YieldOp::create(b, bodyLoc, folded->getResult(0));
      });
  rewriter.eraseOp(op);
  return partialOp;
}

struct RematSplitReductionsPass
    : remat::impl::RematSplitReductionsPassBase<RematSplitReductionsPass> {
  using RematSplitReductionsPassBase::RematSplitReductionsPassBase;

  void runOnOperation() override {
    if (partialBits < 16) {
      getOperation().emitError("-remat-split-reductions: partial-bits must be "
                               "at least 16, got ")
          << static_cast<int64_t>(partialBits);
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      // Lanes first; then the op that sums into them, or the op itself,
      // may be cut into parts along its outermost dimension.
      if (std::optional<Split> split = getLaneSplit(op, partialBits)) {
        op = splitReduction(rewriter, op, *split);
        ++numSplit;
      }
      if (std::optional<Split> split = getPartsSplit(op)) {
        splitReduction(rewriter, op, *split);
        ++numPartsSplit;
      }
    }
  }
};

} // namespace
