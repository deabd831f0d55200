//===- RematOps.td - remat dialect operations --------------*- tablegen -*-===//
//
// Operations of the remat dialect: the backward region, random number
// generation (stateful and counter-based), the scatter-add of rows (an
// embedding's backward) and the CSE barrier.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_IR_REMATOPS_TD
#define REMAT_DIALECT_REMAT_IR_REMATOPS_TD

include "remat/Dialect/Remat/IR/RematDialect.td"
include "remat/Dialect/Remat/IR/RematAttrs.td"
include "remat/Interfaces/CostOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// Resources and type constraints
//===----------------------------------------------------------------------===//

/// The state of the step's random number generator.
def Remat_RngStateResource : Resource<"::remat::RngStateResource">;

/// A private resource that only barriers touch: it keeps CSE, DCE and code
/// motion from merging, dropping or moving a barrier.
def Remat_BarrierResource : Resource<"::remat::BarrierResource">;

def Remat_RandomTensor : StaticShapeTensorOf<[AnyFloat]>;

/// The rows a scatter-add reads and writes: [rows, columns] of floats.
def Remat_RowsTensor : 2DTensorOf<[AnyFloat]>;

//===----------------------------------------------------------------------===//
// BackwardOp
//===----------------------------------------------------------------------===//

def Remat_BackwardOp : Remat_Op<"backward", [
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "The backward part of a training step";
  let description = [{
    Holds the backward ops of a training step in a single-block region. The
    region may use any value of the forward part (the ops before it in the
    same function): those uses are the saved activations. The op's results
    are the values that the region's `remat.yield` yields, typically the
    gradients. A function holds at most one `remat.backward`, and no forward
    op may use a value defined inside it.

    The op sits directly in the body of a `func.func` (the training step),
    and that body is a single block: control flow inside a step is
    structured (`scf.for`, `scf.if`), never branches between blocks. The
    region's block has no arguments.

    ```mlir
    %gw = remat.backward {
      %t = linalg.transpose ins(%x : tensor<8x16xf32>)
             outs(%e : tensor<16x8xf32>) permutation = [1, 0]
      %g = linalg.matmul ins(%t, %dy : tensor<16x8xf32>, tensor<8x32xf32>)
             outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
      remat.yield %g : tensor<16x32xf32>
    } : tensor<16x32xf32>
    ```
  }];

  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body (`:` type($results)^)?";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// The region's terminator.
    YieldOp getYield();
  }];
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def Remat_YieldOp : Remat_Op<"yield", [
    Pure, Terminator, ReturnLike, HasParent<"BackwardOp">]> {
  let summary = "Terminates a remat.backward region";
  let description = [{
    Yields the results of the enclosing `remat.backward`; the types must match
    the op's result types.

    ```mlir
    remat.yield %gw1, %gw2 : tensor<16x32xf32>, tensor<32x8xf32>
    ```
  }];

  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{
    build($_builder, $_state, ::mlir::ValueRange());
  }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

//===----------------------------------------------------------------------===//
// Random number generation
//===----------------------------------------------------------------------===//

def Remat_RngUniformOp : Remat_Op<"rng_uniform", [
    MemoryEffects<[MemRead<Remat_RngStateResource>,
                   MemWrite<Remat_RngStateResource>]>,
    DeclareOpInterfaceMethods<Remat_CostOpInterface>]> {
  let summary = "Uniform random values in [0, 1) from the step's generator";
  let description = [{
    Draws one value per element from the training step's random number
    generator and advances it. Being stateful, the op can neither be cloned
    nor merged as it stands; `-remat-thread-rng` turns it into a pure
    `remat.philox_uniform` with an explicit seed and offset.

    ```mlir
    %u = remat.rng_uniform : tensor<8x32xf32>
    ```
  }];

  let results = (outs Remat_RandomTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Remat_PhiloxUniformOp : Remat_Op<"philox_uniform", [Pure,
    DeclareOpInterfaceMethods<Remat_CostOpInterface>]> {
  let summary = "Counter-based uniform random values (Philox4x32-10)";
  let description = [{
    Element `j` of the result takes 32-bit word `(offset + j) mod 4` of
    Philox4x32-10 with key `(lo32(seed), hi32(seed))` and counter
    `(lo32(c), hi32(c), 0, 0)`, `c = (offset + j) div 4`. A word `x` becomes the
    f32 `(x >> 8) * 2^-24` in [0, 1); f16 and bf16 round that f32 to nearest
    even. The same seed and offset always give the same bits, on every target,
    which is what lets a recomputed dropout mask match the forward one.

    ```mlir
    %u = remat.philox_uniform %seed, %offset : tensor<8x32xf32>
    ```
  }];

  let arguments = (ins I64:$seed, I64:$offset);
  let results = (outs Remat_RandomTensor:$result);
  let assemblyFormat = "$seed `,` $offset attr-dict `:` type($result)";
}

def Remat_RngSeedOp : Remat_Op<"rng_seed", [
    MemoryEffects<[MemRead<Remat_RngStateResource>]>,
    DeclareOpInterfaceMethods<Remat_CostOpInterface>]> {
  let summary = "Reads the seed of the step's generator";
  let description = [{
    Returns the seed of the training step's random number generator, for
    `remat.philox_uniform` ops that have no seed argument to use.

    ```mlir
    %seed = remat.rng_seed
    ```
  }];

  let results = (outs I64:$seed);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// ScatterAddRowsOp
//===----------------------------------------------------------------------===//

def Remat_ScatterAddRowsOp : Remat_Op<"scatter_add_rows", [Pure,
    AllTypesMatch<["dest", "result"]>,
    DeclareOpInterfaceMethods<Remat_CostOpInterface>]> {
  let summary = "Adds rows of values into the rows of a tensor that indices name";
  let description = [{
    Returns `dest` (`R` rows of `C` columns) with row `p` of `values` (`P`
    rows of `C`) added to row `indices[p]`, for every position `p`: the
    dense backward of an embedding, and `index_put` or `index_add` of whole
    rows.

    ```
    result[r, c] = dest[r, c] + sum over p in 0, 1, ..., P - 1
                                with indices[p] == r and r != skip
                                of values[p, c]
    ```

    Each element adds its terms in position order, starting from `dest`, so
    the result's bits do not depend on how the lowering spreads the columns
    over threads (PyTorch's CPU kernels add in position order too). An index
    outside `[0, R)`, negative ones included, names no row: its row of
    `values` is added nowhere (PyTorch raises on it; a negative index is not
    counted from the end). With `skip`, positions whose index is `skip` (an
    embedding's `padding_idx`) add nothing either.

    `-convert-remat-to-linalg` lowers it to an `scf.forall` over the columns
    that walks the positions in order, in place in `dest`'s buffer: `P * C`
    additions, where a `linalg.generic` over `dest` that compares every
    position with every row takes `R * P * C` steps.

    ```mlir
    %g = remat.scatter_add_rows %grad into %zero[%tokens] skip 0
           : tensor<512x768xf32>, tensor<512xi64> into tensor<50257x768xf32>
    ```
  }];

  let arguments = (ins Remat_RowsTensor:$values,
                       1DTensorOf<[I64]>:$indices,
                       Remat_RowsTensor:$dest,
                       OptionalAttr<I64Attr>:$skip);
  let results = (outs Remat_RowsTensor:$result);
  let assemblyFormat = [{
    $values `into` $dest `[` $indices `]` (`skip` $skip^)? attr-dict `:`
    type($values) `,` type($indices) `into` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// BarrierOp
//===----------------------------------------------------------------------===//

def Remat_BarrierOp : Remat_Op<"barrier", [
    MemoryEffects<[MemWrite<Remat_BarrierResource>]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Remat_CostOpInterface>]> {
  let summary = "An identity that no folding, CSE or canonicalization sees through";
  let description = [{
    Returns its operands unchanged. Nothing folds it, CSE never merges two of
    them, and no pattern looks through it to merge, so ops computed from its
    results can never be merged with the same ops computed from its operands
    (`-remat-fold-transposes` only passes a transpose's input through it in
    place of the transpose, for matmuls that then read it transposed). Recomputed
    clones read their inputs through a barrier; the role of
    `jax.lax.optimization_barrier`. It is removed at the end of lowering.

    ```mlir
    %xb, %wb = remat.barrier %x, %w : tensor<8x16xf32>, tensor<16x32xf32>
    ```
  }];

  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

#endif // REMAT_DIALECT_REMAT_IR_REMATOPS_TD
