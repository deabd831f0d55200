//===- Passes.td - remat conversion passes -----------------*- tablegen -*-===//
//
// The conversion of remat's ops to upstream MLIR's.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CONVERSION_PASSES_TD
#define REMAT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRematToLinalgPass
    : Pass<"convert-remat-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower remat ops to linalg, arith and func";
  let description = [{
    Lowers what remains of the remat dialect before bufferization, by a
    partial dialect conversion with the patterns and legality of
    `include/remat/Conversion/RematToLinalg/RematToLinalg.h`
    (`populateRematToLinalgConversionPatterns`,
    `configureRematToLinalgConversionLegality`), which another compiler can
    use inside its own conversion:

    * `remat.philox_uniform` becomes a `linalg.generic` that computes
      Philox4x32-10 with `arith` ops, bit-exactly as the runtime's reference
      header `runtime/Philox.h` pins it, with its constants;
    * `remat.rng_seed` becomes a call of the runtime's
      `@remat_rng_seed() -> i64` (declared in the module), which returns the
      seed the host gave the step's generator (`remat-run --rng-seed`);
    * `remat.scatter_add_rows` becomes an `scf.forall` over the columns
      whose body walks the positions in order (`scf.for`), reading and
      writing its column of the destination in place: after bufferization
      (and `-scf-forall-to-parallel`) an `scf.parallel` that the CPU
      outlines onto its threads and the CUDA lowering maps to GPU threads,
      each element adding its terms in position order;
    * `remat.backward` is inlined into the function: its ops run after the
      forward ops and its yielded values replace its results;
    * the contract's `remat.*` attributes are dropped (by the pass, after
      the conversion);
    * `remat.barrier` is kept: it must outlive bufferization so that nothing
      merges recomputed ops with their originals; `-remat-strip-barriers`
      removes it afterwards.

    A stateful `remat.rng_uniform` left in a function is an error:
    `-remat-thread-rng` turns it into a `remat.philox_uniform` first.

    Before:
    ```mlir
    %u = remat.philox_uniform %seed, %off : tensor<4xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
    ^bb0(%out: f32):
      // linear index + offset, 10 Philox rounds, word select, to float
      ...
    } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
}

#endif // REMAT_CONVERSION_PASSES_TD
