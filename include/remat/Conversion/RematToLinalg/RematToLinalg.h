//===- RematToLinalg.h - remat ops to upstream ops --------------*- C++ -*-===//
//
// Declares the patterns and the legality of the lowering of remat's ops to
// linalg, arith and func, for -convert-remat-to-linalg and for any compiler
// that lowers remat's ops inside its own dialect conversion.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CONVERSION_REMATTOLINALG_REMATTOLINALG_H
#define REMAT_CONVERSION_REMATTOLINALG_REMATTOLINALG_H

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
} // namespace mlir

namespace remat {

/// Adds the patterns that lower `remat.philox_uniform` to a `linalg.generic`
/// computing Philox4x32-10 in `arith` (bit-exactly runtime/Philox.h),
/// `remat.rng_seed` to a call of the runtime's `@remat_rng_seed() -> i64`
/// (declared in the nearest symbol table when missing) and `remat.backward`
/// to its ops inlined in front of it. None changes a type, so they need no
/// type converter. `remat.rng_uniform` has no pattern: its bits would differ
/// on every run (-remat-thread-rng makes it a `remat.philox_uniform`).
void populateRematToLinalgConversionPatterns(mlir::RewritePatternSet &patterns);

/// Marks the ops of the dialects the patterns create legal and every remat
/// op illegal except `remat.barrier`, which must outlive bufferization so
/// that nothing merges recomputed ops with their originals
/// (-remat-strip-barriers removes it afterwards).
void configureRematToLinalgConversionLegality(mlir::ConversionTarget &target);

} // namespace remat

#endif // REMAT_CONVERSION_REMATTOLINALG_REMATTOLINALG_H
