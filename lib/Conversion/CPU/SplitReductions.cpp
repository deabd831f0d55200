//===- SplitReductions.cpp - Lane partials of innermost reductions --------===//
//
// This file implements -remat-split-reductions: a reduction along its
// innermost loop dimension first sums into independent lane partials, then
// folds the partials into its output, so that its adds are not one chain.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"
#include "remat/Conversion/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace remat {
#define GEN_PASS_DEF_REMATSPLITREDUCTIONSPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// The most stack the partials of one op may take.
constexpr int64_t kMaxPartialBytes = int64_t(64) << 10;
/// The fewest terms per output, in multiples of the lanes, worth a split.
constexpr int64_t kMinChunksPerOutput = 4;

/// What a split needs to know of an op it applies to.
struct Split {
  Operation *combiner;
  TypedAttr neutral;
  int64_t lanes;
};

/// The split of `op`, if it has one (see the pass's description).
std::optional<Split> getSplit(linalg::LinalgOp op, int64_t partialBits) {
  Operation *combiner = remat::getReorderableCombiner(op);
  if (!combiner || !op.hasOnlyProjectedPermutations() ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned innermost = op.getNumLoops() - 1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto outputType =
      dyn_cast<MemRefType>(op.getDpsInitOperand(0)->get().getType());
  if (!linalg::isReductionIterator(iterators[innermost]) || !outputType ||
      !isa<FloatType>(outputType.getElementType()))
    return std::nullopt;
  TypedAttr neutral = *arith::getNeutralElement(combiner);
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
  return Split{combiner, neutral, lanes};
}

/// Rewrites `op` into its lane partials and their fold (see the pass's
/// description).
void splitReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                    const Split &split) {
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  unsigned loops = op.getNumLoops(), innermost = loops - 1;
  int64_t lanes = split.lanes;
  OpOperand *init = op.getDpsInitOperand(0);
  auto outputType = cast<MemRefType>(init->get().getType());

  // The partials, [output shape..., lanes], on the stack of the function.
  SmallVector<int64_t> partialShape(outputType.getShape());
  partialShape.push_back(lanes);
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

  // Stage 1: loops d0..d(n-2), then the chunk (reduction), then the lane
  // (parallel); an operand indexed by the innermost dimension is read
  // through a view that cuts that dimension into [chunks, lanes].
  AffineExpr chunk = getAffineDimExpr(innermost, context);
  AffineExpr lane = getAffineDimExpr(innermost + 1, context);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> results;
    std::optional<unsigned> position = std::nullopt;
    for (auto [i, result] : llvm::enumerate(map.getResults())) {
      if (cast<AffineDimExpr>(result).getPosition() == innermost) {
        position = i;
        results.append({chunk, lane});
      } else {
        results.push_back(result);
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
          shape.append({type.getDimSize(dim) / lanes, lanes});
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
  SmallVector<AffineExpr> partialResults(
      op.getMatchingIndexingMap(init).getResults());
  partialResults.push_back(lane);
  maps.push_back(AffineMap::get(loops + 1, 0, partialResults, context));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);
  auto partialOp =
      linalg::GenericOp::create(rewriter, loc, TypeRange(), inputs,
                                ValueRange{partials}, maps, iterators);
  IRMapping mapping;
  rewriter.cloneRegionBefore(op->getRegion(0), partialOp.getRegion(),
                             partialOp.getRegion().begin(), mapping);

  // Stage 2: output = combine(output, partial) over the lanes in order.
  unsigned rank = outputType.getRank();
  SmallVector<AffineExpr> outputDims, partialDims;
  for (unsigned dim = 0; dim < rank; ++dim)
    outputDims.push_back(getAffineDimExpr(dim, context));
  partialDims = outputDims;
  partialDims.push_back(getAffineDimExpr(rank, context));
  SmallVector<utils::IteratorType> foldIterators(rank,
                                                 utils::IteratorType::parallel);
  foldIterators.push_back(utils::IteratorType::reduction);
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
    SmallVector<std::pair<linalg::LinalgOp, Split>> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<Split> split = getSplit(op, partialBits))
        candidates.emplace_back(op, *split);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, split] : candidates) {
      splitReduction(rewriter, op, split);
      ++numSplit;
    }
  }
};

} // namespace
