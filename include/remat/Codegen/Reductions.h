//===- Reductions.h - What reordering a reduction's terms needs -*- C++ -*-===//
//
// The CPU's lane partials (-remat-split-reductions) and the GPU's block
// reductions (-remat-map-to-gpu) both add a reduction's terms in another
// order than its loops; this is the one rule for when they may.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CONVERSION_REDUCTIONS_H
#define REMAT_CONVERSION_REDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace remat {

/// The single combiner of `op`'s reduction if its terms may be added in
/// any fixed order (partials, then the partials combined): `op` on static
/// buffers with one output, every parallel loop an index of that output,
/// and one combiner (found with matchReduction) that is associative and
/// commutative with a neutral element. Null otherwise.
mlir::Operation *getReorderableCombiner(mlir::linalg::LinalgOp op);

} // namespace remat

#endif // REMAT_CONVERSION_REDUCTIONS_H
