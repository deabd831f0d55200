//===- Reductions.cpp - What reordering a reduction's terms needs ---------===//

#include "remat/Codegen/Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

using namespace mlir;

Operation *remat::getReorderableCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op->getNumRegions() != 1 || !op.hasPureBufferSemantics() ||
      ShapedType::isDynamicShape(op.getStaticLoopRanges()))
    return nullptr;
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outputMap.getNumResults() != op.getNumParallelLoops() ||
      !outputMap.isProjectedPermutation())
    return nullptr;
  for (AffineExpr result : outputMap.getResults())
    if (!linalg::isParallelIterator(
            op.getIteratorTypesArray()[cast<AffineDimExpr>(result)
                                           .getPosition()]))
      return nullptr;
  SmallVector<Operation *, 1> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), /*redPos=*/0, combiners) ||
      combiners.size() != 1)
    return nullptr;
  Operation *combiner = combiners.front();
  if (!isa<arith::AddFOp, arith::MulFOp, arith::MaxNumFOp, arith::MinNumFOp,
           arith::MaximumFOp, arith::MinimumFOp, arith::AddIOp, arith::MulIOp,
           arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combiner) ||
      !arith::getNeutralElement(combiner))
    return nullptr;
  return combiner;
}
