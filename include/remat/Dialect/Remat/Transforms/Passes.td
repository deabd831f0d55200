//===- Passes.td - remat step transformations --------------*- tablegen -*-===//
//
// The passes that take a training step in remat's IR contract and return
// one: thread random state, rematerialize checkpoint segments, check the
// result, outline segments.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_TRANSFORMS_PASSES_TD
#define REMAT_DIALECT_REMAT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RematThreadRngPass : Pass<"remat-thread-rng", "mlir::func::FuncOp"> {
  let summary = "Turn stateful random ops into counter-based Philox ops";
  let description = [{
    Replaces every `remat.rng_uniform` with `remat.philox_uniform %seed,
    %offset`, the offset an `arith.constant` placed just before it (in the
    random op's segment, so that recomputation clones it rather than saving
    it). Offsets are assigned in program order, forward then backward; each
    op reserves its element count rounded up to a multiple of 4, since
    Philox4x32-10 yields four 32-bit words per counter, so no two draws
    share random bits. A random op in an `scf.for` draws anew every
    iteration: the offset is the loop's first offset plus `(iv - lb) /
    step` times the words one iteration draws, computed at the start of the
    body (nested loops add up), and the loop reserves its trip count times
    that, so its bounds and step must be constants. The regions of
    `scf.if`, `scf.index_switch` and `scf.execute_region` get consecutive
    ranges, so two branches never share bits. A random op in any other
    region (`scf.while`, with no iteration index) or in a region of several
    blocks is an error, as is a step drawing more than 2^64 words. The
    offsets are plain `arith` ops in the loop body, so a recomputed loop
    draws the same numbers. The seed is the function argument marked
    `{remat.rng_seed}`, else the function's first `remat.rng_seed` op (moved
    to the entry of the function so that it dominates every use); a function
    with random ops and no seed is an error naming the first one. The
    discardable attributes of the random op carry over. Linear in the number
    of ops.

    Before:
    ```mlir
    func.func @f(%seed: i64 {remat.rng_seed}) -> (tensor<3xf32>, tensor<2xf32>) {
      %u = remat.rng_uniform : tensor<3xf32>
      %v = remat.rng_uniform : tensor<2xf32>
      ...
    ```
    After:
    ```mlir
      %c0 = arith.constant 0 : i64
      %u = remat.philox_uniform %seed, %c0 : tensor<3xf32>
      %c4 = arith.constant 4 : i64
      %v = remat.philox_uniform %seed, %c4 : tensor<2xf32>
    ```
    With `%v` drawn in a loop instead (from offset 4, 4 words an iteration):
    ```mlir
    scf.for %i = %c0 to %c8 step %c1 ... {
      %n = arith.index_castui %i : index to i64
      %c4w = arith.constant 4 : i64
      %w = arith.muli %n, %c4w : i64
      %c4 = arith.constant 4 : i64
      %o = arith.addi %w, %c4 : i64
      %v = remat.philox_uniform %seed, %o : tensor<2xf32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numThreaded", "threaded-ops", "Random ops made counter-based">
  ];
}

def RematCheckpointPass : Pass<"remat-checkpoint", "mlir::func::FuncOp"> {
  let summary = "Recompute checkpoint segments in the backward region";
  let description = [{
    For every value defined by an op of a checkpoint segment
    (`remat.segment`) and used by an op of `remat.backward`, that op uses a
    clone computed from the segment's inputs instead: the values the
    segment's ops use but that no recomputable op of the same segment
    defines (function arguments, unmarked ops, other segments, `save` and
    unclonable ops). The inputs stay saved; a segment's input is never
    recomputed by another segment, so chained segments give
    `checkpoint_sequential`.

    Placement: clones go immediately before the first backward op that needs
    them, in forward program order, and are reused by later backward ops (a
    segment is recomputed once). The clones placed before one backward op
    read their saved inputs through one `remat.barrier` placed before them,
    so CSE and canonicalization cannot merge them back into the forward ops.
    With `early-stop` (the default, like `use_reentrant=False`) only the
    backward slice of the needed values is cloned; `early-stop=false` clones
    the whole segment at its first use (the reentrant behaviour).

    Ops marked `remat.policy = "save"` stay saved and act as inputs. Ops that
    cannot be cloned (not free of memory effects, unregistered) stay saved
    too, and the pass emits a remark naming the op and the reason. A stateful
    `remat.rng_uniform` in a segment (without `save` policy) is an error: run
    `-remat-thread-rng` first; a `remat.philox_uniform` clone reads the same
    seed and offset.

    Nested segments (`remat.segment = [0, 1]`, outer to inner) are handled
    level by level. Level 0 is the transform above with the outermost
    segment as key. At level k + 1, a level-k clone C of an op nested at
    least k + 2 deep, placed before backward op P, keeps its uses by other
    clones and by P; each use by a later backward op Q gets instead a
    level-(k + 1) clone made before Q from the inner segment's inputs (the
    values C's clone chain read), again once, reused by later ops, and
    through its own barrier after the lower levels' clones at Q. So between
    P and Q only the inner segment's inputs stay live. Barriers and existing
    clones in the backward region are left alone, so the pass is idempotent.

    The backward region's own ops that compute what a forward op computes
    (AOTAutograd's decompositions recompute GELU's tanh, for one) read their
    forward operands through a barrier too when the backward does not read
    that forward op's results: otherwise a later `-cse` would merge them into
    the forward op and make its results saved activations, memory the plan
    (and `-remat-mark`'s prediction) did not count. Twins of saved values
    are left to CSE, which merges them at no memory cost.

    Recomputed ops carry `remat.id = N` (unique in the function) and their
    clones `remat.clone_of = N`, for `-remat-verify` and `-remat-report`;
    clones carry no `remat.segment`, `remat.policy` or `remat.name`. Constants
    of a segment are copied without either attribute: canonicalization
    merges and hoists constants freely, and equal constants are equivalent
    for `-remat-verify` anyway. The pass
    applies `remat::CheckpointPlan`, which predicts the result without
    changing the IR.

    Before (`%h` saved):
    ```mlir
    %h = math.tanh %x {remat.segment = 0 : i64} : tensor<8xf32>
    %g = remat.backward {
      %d = arith.mulf %h, %dy : tensor<8xf32>
      ...
    ```
    After (`%x` saved, `%h` recomputed):
    ```mlir
    %h = math.tanh %x {remat.id = 0 : i64, remat.segment = 0 : i64} : tensor<8xf32>
    %g = remat.backward {
      %xb = remat.barrier %x : tensor<8xf32>
      %hr = math.tanh %xb {remat.clone_of = 0 : i64} : tensor<8xf32>
      %d = arith.mulf %hr, %dy : tensor<8xf32>
      ...
    ```
    Runs in O(n log n + d * n) for n ops and operands and nesting depth d.
  }];
  let options = [
    Option<"earlyStop", "early-stop", "bool", /*default=*/"true",
           "Clone only the ops the backward needs (false: the whole segment "
           "at its first use, the reentrant behaviour)">
  ];
  let dependentDialects = ["::remat::RematDialect"];
  let statistics = [
    Statistic<"numCloned", "cloned-ops", "Forward ops cloned into the backward region">,
    Statistic<"numUnclonable", "unclonable-ops", "Segment ops kept saved because they cannot be cloned">
  ];
}

def RematVerifyPass : Pass<"remat-verify", "mlir::func::FuncOp"> {
  let summary = "Check that every recomputed op matches its original";
  let description = [{
    The determinism check. Every op carrying `remat.clone_of = N` must have
    the same op name, attributes (other than remat's bookkeeping:
    `remat.id`, `remat.clone_of`, `remat.rerun_of`, `remat.segment`,
    `remat.policy`, `remat.name`), result types, regions and equivalent operands as the
    forward op with `remat.id = N`. An operand is equivalent when it is the
    same value, a `remat.barrier` result whose input is equivalent, the
    same-numbered result of a clone whose original defines the original
    operand, or a constant equal to it (canonicalization hoists and merges
    constants). Random clones therefore use the same seed and offset as
    their originals. Otherwise the pass fails with an error on the clone and
    a note at the original; two ops with the same `remat.id` are errors too.

    Equal ops can still compute different values when they touch state, so
    a clone (with the ops in its regions) must not draw from the stateful
    generator (`remat.rng_uniform`: recomputed, it draws new numbers), write
    or free memory other than what it allocates itself, or hold an op of
    unknown effects (a call); and no op between its original and it (the
    whole top-level op, when either is in a loop) may write or free what it
    reads: memory of the same resource and, for buffers, the same
    allocation, through views and barriers (function arguments may alias).
    A clone whose original is gone (canonicalization erases a forward op
    that only the backward read once the clone replaced it there) gets a
    remark if it has no memory effects, since it computes the same wherever
    it runs, and an error if it reads memory. Each clone is checked locally
    (the clones it reads are checked in their own right), so the pass is
    linear in the number of ops and operands, plus the ops between a
    reading clone and its original.
  }];
}

def RematOutlinePass : Pass<"remat-outline", "mlir::ModuleOp"> {
  let summary = "Split a training step into forward and backward functions";
  let description = [{
    Splits each function `@f` holding a `remat.backward` into `@f_fwd`, which
    runs the forward ops and returns the forward values `@f` returns followed
    by the saved forward values (those the backward uses, in program order),
    and `@f_bwd`, which takes the saved arguments (by index), then the saved
    forward values, and runs the backward region, returning what it yields.
    `@f` is rewritten to call both and returns what it returned before: the
    forward/backward split a framework needs to run the two at different
    times. The seed argument keeps `{remat.rng_seed}` on both sides; the clone
    bookkeeping (`remat.id`, `remat.clone_of`) is dropped, since a clone
    outside a backward region is no clone. An existing `@f_fwd` or `@f_bwd`,
    or ops between the backward region and the return, are errors. Linear in
    the number of ops.

    Before:
    ```mlir
    func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %y = math.tanh %x : tensor<4xf32>
      %g = remat.backward {
        %d = arith.mulf %y, %y : tensor<4xf32>
        remat.yield %d : tensor<4xf32>
      } : tensor<4xf32>
      return %y, %g : tensor<4xf32>, tensor<4xf32>
    }
    ```
    After:
    ```mlir
    func.func @f_fwd(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %y = math.tanh %x : tensor<4xf32>
      return %y, %y : tensor<4xf32>, tensor<4xf32>
    }
    func.func @f_bwd(%y: tensor<4xf32>) -> tensor<4xf32> {
      %d = arith.mulf %y, %y : tensor<4xf32>
      return %d : tensor<4xf32>
    }
    func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %r:2 = call @f_fwd(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
      %g = call @f_bwd(%r#1) : (tensor<4xf32>) -> tensor<4xf32>
      return %r#0, %g : tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def RematRecomputeFromArgumentsPass
    : Pass<"remat-recompute-from-arguments", "mlir::func::FuncOp"> {
  let summary = "Recompute in the backward what in-place ops make from arguments";
  let description = [{
    A forward value that the backward region reads is a saved activation:
    its buffer lives from the forward op to the backward's last use. When
    the value is made from the step's arguments and constants alone by ops
    that write in place into one fresh buffer (a zero-padded input: an
    empty, a fill and an insert_slice; a broadcast or transposed parameter;
    an elementwise op on arguments), keeping it alive buys nothing: the
    backward can make it again from operands that live anyway. Exporters
    emit such values in the forward and the backward separately, and CSE
    merges the two into one saved value (a whole padded input kept across
    the step).

    This pass clones every such chain into the backward region, right
    before the first backward op that reads it (the op's ancestor in the
    region's block), and lets the backward read the clone; a forward chain
    left without users is erased. The clone's buffer lives only from there
    to the backward's last use, within the saved buffer's lifetime, and
    the chain adds no buffer: no point of the step holds more bytes than
    before. The ops cloned are `tensor.empty` with static sizes, and
    destination-style ops without reductions (`linalg` ops whose loops are
    all parallel, `tensor.insert_slice`) that are free of memory effects,
    read only arguments, constants and their one destination, itself such
    a chain (at most 16 ops long), or a float conversion (`arith.truncf`,
    `arith.extf`) of an argument, which also ends a chain: autocast's
    bfloat16 copy of a parameter, or its transpose, is converted again in
    the backward instead of kept across the step. Clones lose remat's
    per-op attributes and get `remat.clone_of` where the original had a
    `remat.id`. Runs first in
    `-remat-bufferize`, so every lowering and every static peak includes
    it; linear in the number of ops.

    Before (after CSE):
    ```mlir
    %p = tensor.insert_slice %x into %zeros[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
    %y = linalg.conv_2d_nchw_fchw ins(%p, %w : ...) outs(%init : ...)
    %g = remat.backward {
      %gw = linalg.generic ... ins(%dy, %p : ...)
      ...
    }
    ```
    After:
    ```mlir
    %p = tensor.insert_slice %x into %zeros[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
    %y = linalg.conv_2d_nchw_fchw ins(%p, %w : ...) outs(%init : ...)
    %g = remat.backward {
      %e = tensor.empty() : tensor<2x3x10x10xf32>
      %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x3x10x10xf32>) -> tensor<2x3x10x10xf32>
      %p2 = tensor.insert_slice %x into %z[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
      %gw = linalg.generic ... ins(%dy, %p2 : ...)
      ...
    }
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def RematChunkRowsPass : Pass<"remat-chunk-rows", "mlir::func::FuncOp"> {
  let summary = "Compute a row-independent region in chunks of rows, bit-identically";
  let description = [{
    A language model's head is the largest part of its step: the logits of
    a large vocabulary, their log-softmax and the loss's gradient are each
    [rows, vocabulary] (411 MB for GPT-2 small at 4 x 512 tokens in fp32),
    and the forward's log-softmax is saved for the backward. Every row of
    them depends on one row of the hidden state alone, so they can be
    computed a block of rows at a time, and only one block of each lives at
    once.

    The pass starts from each `linalg.matmul` whose result has at least
    `min-bytes` bytes (largest first) and grows the region of ops that are
    independent along the result's first dimension (its rows, N): elementwise
    ops, `tensor.empty`, splat constants, reshapes that keep the first
    dimension, linalg ops whose first loop is parallel and reads or writes
    every operand's first dimension or none of it (broadcasts, fills,
    reductions along other dimensions, generics, matmuls whose A and C are
    rows), a row block's transpose, and the matmul of that transpose with
    rows, which sums over the rows (a weight gradient: its C is carried
    from chunk to chunk). It takes users of the region's values, and
    producers all of whose users are in the region, in the forward and in
    the backward region alike. Reductions over the rows (the loss's sum over
    tokens) stay outside, on the whole vector of per-row values.

    The region becomes one `scf.for` over N / `chunk-rows` chunks, in the
    backward region (before its first op there) when the region reaches
    into it: the loop slices the region's other row inputs
    (`tensor.extract_slice`), writes the row values that ops outside read
    into whole tensors (`tensor.insert_slice`) and carries the sums over
    rows. Forward ops that read the loop's results move after it and are
    yielded by `remat.backward`. A remark names what was chunked.

    Every output stays bit-identical to the unchunked step on the CPU's
    native GEMM (runtime/Sgemm.cpp, AVX-512 hosts): a row's elements are the
    same operations on the same values; a product cut into blocks of rows
    gives each element what one call gives it; and a product summed over
    the rows gets each block of `getSgemmBlockDepth(k)` rows as one sum
    added to C in order, so chunks that are whole blocks give C the same
    additions. The pass checks the runtime's rules (runtime/GemmOrder.h)
    and skips a region, with a remark, where a chunk would change them: a
    chunk that is not a multiple of the block depth, a product the runtime
    cuts along k, a float sum along a row whose length is even (the CPU
    lowering may split such a sum into vector lanes when its output is
    small: the unchunked and the chunked output differ in size). With
    `REMAT_GEMM=blas` (OpenBLAS) or on CUDA (cuBLAS), whose blocking of k
    is their own, a weight gradient summed over chunks is within rounding
    of the unchunked one, not bit for bit. N must be a multiple of
    `chunk-rows`. Off unless named; run it after `-remat-checkpoint`, or
    before `-remat-mark` so that a budget measures the chunked step.

    Before (abridged):
    ```mlir
    %logits = linalg.matmul ins(%h, %wt : tensor<2048x768xf32>, tensor<768x50257xf32>) ...
    %lse = ... log-softmax of %logits, per row ...
    %nll = ... -%lse[row, label[row]] ...          // tensor<2048xf32>
    %loss = linalg.reduce ins(%nll) ... dimensions = [0]
    %g:2 = remat.backward {
      %dlogits = ... exp(%lse) * %s - %onehot ...  // tensor<2048x50257xf32>
      %dh = linalg.matmul ins(%dlogits, %w : ...)  // tensor<2048x768xf32>
      %dlt = linalg.transpose ins(%dlogits : ...) permutation = [1, 0]
      %dw = linalg.matmul ins(%dlt, %h : ...) outs(%zeros : tensor<50257x768xf32>)
      ...
    }
    ```
    After (`chunk-rows=256`):
    ```mlir
    %g:3 = remat.backward {
      %r:3 = scf.for %i = %c0 to %c2048 step %c256
          iter_args(%nll_all = %e0, %dh_all = %e1, %dw_acc = %zeros) -> (...) {
        %hi = tensor.extract_slice %h[%i, 0] [256, 768] [1, 1] : ...
        %logits = linalg.matmul ins(%hi, %wt : ...) -> tensor<256x50257xf32>
        ...
        %dw = linalg.matmul ins(%dlt, %hi : ...) outs(%dw_acc : tensor<50257x768xf32>)
        %nll_all2 = tensor.insert_slice %nll into %nll_all[%i] [256] [1] : ...
        %dh_all2 = tensor.insert_slice %dh into %dh_all[%i, 0] [256, 768] [1, 1] : ...
        scf.yield %nll_all2, %dh_all2, %dw : ...
      }
      %loss = linalg.reduce ins(%r#0) ... dimensions = [0]
      ...
    }
    ```
  }];
  let options = [
    Option<"chunkRows", "chunk-rows", "int64_t", /*default=*/"256",
           "Rows per chunk (a divisor of the region's rows)">,
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"67108864",
           "Chunk regions around matmul results of at least this many bytes">,
  ];
  let statistics = [
    Statistic<"numRegions", "chunked-regions", "Regions computed in chunks of rows">,
    Statistic<"numChunkedOps", "chunked-ops", "Ops moved into chunk loops">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect"
  ];
}

#endif // REMAT_DIALECT_REMAT_TRANSFORMS_PASSES_TD
