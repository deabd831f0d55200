//===- Passes.td - remat transformation passes -------------*- tablegen -*-===//
//
// The passes that thread random state, rematerialize checkpoint segments,
// check the result and report its memory and compute cost.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_PASSES_TD
#define REMAT_TRANSFORMS_PASSES_TD

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

def RematCheckpointLoopsPass
    : Pass<"remat-checkpoint-loops", "mlir::ModuleOp"> {
  let summary = "Save every k-th carry of a scan and recompute the rest";
  let description = [{
    Rewrites a forward scan and the backward loop that walks it in reverse
    (docs/Loops.md) so that the forward saves its carries every k
    iterations instead of stacking every iteration's activations, and the
    backward recomputes each block of k iterations from its checkpoint
    before it runs that block's backward iterations: saved bytes
    proportional to n / k carries plus k slots of the stacks, one extra run
    of the loop body per iteration (k = sqrt(n): O(sqrt(n)) memory).

    The forward loop is an `scf.for` directly in the function body, before
    `remat.backward`, not in a checkpoint segment, from 0 to a constant n
    step 1, whose body is free of memory effects (run `-remat-thread-rng`
    first). Its iter_args are carries (statically shaped tensors) and stacks:
    an iter_arg whose only use is a `tensor.insert_slice` writing one whole
    slot `[iv, 0, ...]` of it, yielded. Every use of a stacked result is a
    `tensor.extract_slice` of one whole slot `[n - 1 - j, 0, ...]`
    (`arith.subi` of the constant n - 1 and j) in the body of one `scf.for`
    over j from 0 to n step 1 directly in the backward region. A loop that
    does not match is left alone with a remark saying why; a rewritten one
    gets a remark with its saved bytes before and after.

    The forward becomes a loop over n / k blocks that writes its carries to
    slot b of a checkpoint stack (one per carry) and runs k iterations; the
    stack writes are dropped. The backward becomes a loop over the blocks,
    last first: it reads the block's checkpoint, reruns the block's k
    iterations writing their slots t into local stacks of k slots, then runs
    the k backward iterations reading slot k - 1 - t. The recomputed
    iterations are the forward's ops on the same values, so the results are
    bit-identical. The loop over blocks gets a new `remat.id = N` and the
    backward's rerun loop and the ops of its body `remat.rerun_of = N`,
    which -remat-report counts as recompute FLOPs of that scan.

    k comes from `policy`:

    * `sqrt` (the default): the largest divisor of n not above sqrt(n).
    * `every`: `every=K` (K >= 1; `every=K` alone selects this policy, and
      `every=1` saves every iteration's carry); a K that does not divide n
      leaves the loop alone.
    * `budget`: the choice of least recompute FLOPs whose predicted peak is
      at most `budget-bytes=B`, ties broken by the lower peak. Each scan is
      left alone or checkpointed at a divisor k of n; with one level of
      checkpoints every k reruns each iteration once, so the recompute FLOPs
      depend only on which scans are checkpointed, and k only moves the
      peak. Each choice is measured as -remat-mark's budget policy measures a
      marking: this pass's own rewrite applied to a copy of the module, the
      memory plan of `plan-pipeline` (the static peak -remat-report states),
      the recompute FLOPs -remat-report counts. The untouched step first (if
      it fits, nothing is rewritten); else each scan's k is the divisor of
      least peak with the other scans at their sqrt k (ties to the divisor
      nearest that k), and every subset of the scans (at most 8) is measured
      with those k. A remark states the choice, its predicted peak and FLOPs;
      no choice within the budget is an error naming the least peak reached.
      A module pass, as -remat-mark is: each step is planned in turn on
      copies of itself and its callees, the choices measured together on
      the context's thread pool, with the same result as on one thread.

    Segments inside a scan's body come first. The marked ops (`remat.segment`
    without `remat.policy = "save"`) directly in the body of a forward scan
    of the form above are recomputed per iteration, as `jax.checkpoint` on a
    scan's body does: a stack whose slot value a marked op computes is
    dropped, and the backward loop recomputes that value at iteration
    n - 1 - j by cloning its slice of the body, back to the values it reads
    that depend on the carries through unmarked ops (or are carries). Those
    come from slot n - 1 - j of the stack that already holds them, or of a
    new stack the forward now writes; what depends on no carry (the
    iteration index, slices of loop-invariant tensors, constants, the
    Philox offsets) is recomputed too, so dropout masks are the forward's.
    The loop gets `remat.id = N` and the clones `remat.rerun_of = N`; the
    marks are dropped, and the loop's carries are not checkpointed every k
    on top of that. A remark states the stacked bytes before and after.
    Marks in the body of a loop that does not have this form, or that
    compute nothing the scan stacks, are an error: never ignored.
  }];
  let options = [
    Option<"policy", "policy", "remat::LoopPolicy",
           /*default=*/"remat::LoopPolicy::Sqrt", "How k is chosen",
           [{::llvm::cl::values(
             clEnumValN(remat::LoopPolicy::Sqrt, "sqrt",
                        "the largest divisor of n not above sqrt(n)"),
             clEnumValN(remat::LoopPolicy::Every, "every", "every=K"),
             clEnumValN(remat::LoopPolicy::Budget, "budget",
                        "least recompute within budget-bytes"))}]>,
    Option<"every", "every", "unsigned", /*default=*/"0",
           "policy=every: save the carries every K iterations (0: policy=sqrt)">,
    Option<"budgetBytes", "budget-bytes", "int64_t", /*default=*/"0",
           "policy=budget: the most bytes the predicted peak may take">,
    Option<"planPipeline", "plan-pipeline", "std::string",
           /*default=*/"\"\"",
           "policy=budget: module pass pipeline that bufferizes a copy of the "
           "step for its memory plan (default: remat::kBufferizePipeline)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numLoops", "checkpointed-loops", "Scans that save every k-th carry">,
    Statistic<"numEvaluated", "evaluated-choices",
              "Choices of policy=budget measured on their memory plans">
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

def RematReportPass : Pass<"remat-report", "mlir::ModuleOp"> {
  let summary = "Report saved activations, peak memory and recompute FLOPs";
  let description = [{
    For every function holding a `remat.backward`, reports per segment the
    ops, the recomputed ops (clones whose original is in the segment) and the
    saved values defined by the segment (location and bytes), and in total:
    saved-activation bytes, saved-argument bytes, the static peak, forward
    FLOPs and recompute FLOPs (the FLOPs of the ops carrying
    `remat.clone_of` or `remat.rerun_of`, times the iterations of the
    backward loops around them), through the cost model
    (remat::CostOpInterface: an `scf.for` with constant bounds costs its
    trip count times its body, an `scf.if` its costlier branch). Per
    `scf.for` of the forward, it also reports the loop's trip count, FLOPs,
    saved bytes (its results the backward reads: the stacks, or the
    checkpoints after -remat-checkpoint-loops) and recompute FLOPs (its
    clones' and its rerun loops'), and their sums. The static peak is the step's memory plan
    (remat::computeStepMemoryPlan): a copy of the module is bufferized the
    way both lowerings do and its buffers placed in one arena by the code of
    -remat-plan-arena, so it is the allocator's peak of the generated code,
    to the byte when every buffer is planned. The model peak is that of the
    liveness model -remat-mark searches with (remat::MemoryProfile), with
    where it is reached. It works before and after -remat-checkpoint, so
    the two can be compared, and leaves the IR unchanged. Before
    -remat-checkpoint, on a marked step, it also plans copies checkpointed
    by that pass's own rewrite, with every segment and with each top-level
    segment alone, and a remark names each segment whose recomputation
    raises the static peak (docs/Report.md). `format=json`
    prints the stable schema of docs/Report.md. O(n log n) for the model;
    the plan costs one bufferization of the module.
  }];
  let options = [
    Option<"format", "format", "remat::ReportFormat",
           /*default=*/"remat::ReportFormat::Text", "Output format",
           [{::llvm::cl::values(
             clEnumValN(remat::ReportFormat::Text, "text", "for people"),
             clEnumValN(remat::ReportFormat::Json, "json",
                        "for scripts (docs/Report.md)"))}]>,
    Option<"outputFile", "output-file", "std::string", /*default=*/"\"-\"",
           "Where to write the report ('-' for stdout)">,
    Option<"planPipeline", "plan-pipeline", "std::string",
           /*default=*/"\"\"",
           "Module pass pipeline that bufferizes a copy of the step for its "
           "memory plan (default: remat::kBufferizePipeline; 'none': no plan)">
  ];
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

def RematFoldTransposesPass
    : Pass<"remat-fold-transposes", "mlir::func::FuncOp"> {
  let summary = "Let matmuls read transposed operands through their maps";
  let description = [{
    Exporters materialize `linalg.transpose` copies of weights (for forward
    matmuls) and of activations (for weight gradients); each is a buffer
    that costs memory and time while it lives, where PyTorch's transposes
    are views. This pass rewrites a `linalg.matmul` or `linalg.batch_matmul`
    on tensors whose input is a `linalg.transpose` to read the transpose's
    input with the permuted indexing map (a chain of transposes folds one
    by one; two that cancel give the default map back). A transpose left
    without users goes with canonicalization or dead-code elimination, and
    `-remat-matmul-to-blas` passes a transposed operand to sgemm as such.
    A recomputed matmul reads its inputs through a `remat.barrier`: a
    barrier operand that is a transpose read only by contractions becomes
    the transpose's input, and they read it with the permuted map, so the
    clone makes the same sgemm call as the forward matmul it recomputes
    (sgemm rounds a transposed operand differently from a row-major copy;
    BERT's step under a sequential policy was not bit-identical) and the
    transposed copy is not kept for the backward. The barrier stays.
    Runs at the start of `-remat-bufferize`; linear in the number of ops.

    Before:
    ```mlir
    %t = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
    After:
    ```mlir
    %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<4x8xf32>, tensor<16x8xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RematFoldBroadcastsPass
    : Pass<"remat-fold-broadcasts", "mlir::func::FuncOp"> {
  let summary = "Let generic ops read broadcast operands through their maps";
  let description = [{
    Exporters materialize `linalg.broadcast` copies of biases, batch-norm
    scales and scalars so that elementwise ops see operands of one shape;
    each is a buffer the size of an activation that costs memory and time
    while it lives, where PyTorch broadcasts by stride. This pass rewrites
    a `linalg.generic` on tensors whose input is a `linalg.broadcast` to read
    the broadcast's input with the indexing map that drops the broadcast
    dimensions (a chain of broadcasts folds one by one). A broadcast left
    without users goes with canonicalization or dead-code elimination. Runs
    in `-remat-bufferize` once elementwise ops are `linalg.generic`, before
    their fusion; linear in the number of ops.

    Before:
    ```mlir
    %b = linalg.broadcast ins(%bias : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
    %y = linalg.generic {indexing_maps = [#id, #id, #id], ...} ins(%x, %b : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {...}
    ```
    After:
    ```mlir
    %y = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], ...} ins(%x, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {...}
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RematReuseBuffersPass
    : Pass<"remat-reuse-buffers", "mlir::func::FuncOp"> {
  let summary = "Let elementwise ops write into the buffer of a dying operand";
  let description = [{
    Runs on a bufferized step (part of `-remat-bufferize`). One-shot
    bufferization gives every elementwise `linalg.generic` a buffer of its
    own for its result, even when an operand of the same type dies at the
    op. This pass lets the op write into that operand's buffer instead, as
    PyTorch's in-place kernels and the liveness model do: when every loop is
    parallel, the result's map and every map that reads the operand are the
    identity (element i is read before it is written, by the same
    iteration), the payload does not read the result's buffer, the result
    buffer is a fresh allocation first used by the op, and the operand is an
    allocation of as many bytes and the same element type last used there.
    Either may be read or written through reshape views (`memref.reshape`,
    `collapse_shape`, `expand_shape` of static identity layouts: element i
    of the view is element i of the buffer) as long as the operand's view
    has the result's type; no other view. The result's allocation goes (a
    collapse and an expansion of the operand's buffer stand for it when the
    types differ) and the operand's deallocation moves to the result's.
    Linear in the number of uses.
  }];
  let statistics = [
    Statistic<"numReused", "reused-buffers",
              "Results written into a dying operand's buffer">
  ];
}

def RematSchedulePass : Pass<"remat-schedule", "mlir::func::FuncOp"> {
  let summary = "Reorder a bufferized step's ops for a lower peak";
  let description = [{
    Runs on a bufferized step (part of `-remat-bufferize`, before
    `-remat-reuse-buffers` and `-remat-plan-arena`). The ops of the entry
    block of a single-block function are reordered within their
    dependences (SSA uses, and the reads and writes their memory effects
    declare on each buffer and its views; an op whose effects are unknown
    keeps its place among all memory accesses) so that fewer bytes of the
    buffers the arena plan places (`remat::collectStepBuffers`) are live
    at once: the forward and the backward alike, recomputations included.
    The live bytes it weighs are those after the in-place reuse that
    follows (`-remat-reuse-buffers`, the same rule,
    `remat::getReusableOperands`): in an order where an elementwise op is
    the last reader of an operand's buffer, its result costs no new bytes.

    The order is the best of the given one, an exact dynamic program over
    the sets of ops run first (up to `max-exact-items` ops), and two greedy
    list schedules (fewest new bytes first; most bytes freed first), each
    then improved by moving an op that opens or closes a buffer live at
    the peak, alone or with up to three neighbours (`search-rounds`
    rounds, `search-trials` orders weighed at most). Allocations and ops without memory
    effects or regions (constants, views) go right before their first user,
    deallocations right after the last op they depend on. The new order is
    kept only if the arena it gives after in-place reuse
    (`-remat-reuse-buffers`, which follows in `-remat-bufferize`) is
    smaller than the given order's.
    O((n + e) log n) for the greedy schedules, O(rounds n (n + e)) for the
    search, for n ops and e dependences.

    Before (both buffers live at once):
    ```mlir
    %a = memref.alloc() : memref<1024xf32>
    %b = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%c0 : f32) outs(%a : memref<1024xf32>)
    linalg.fill ins(%c1 : f32) outs(%b : memref<1024xf32>)
    linalg.reduce ins(%a : memref<1024xf32>) outs(%s : memref<f32>) ...
    memref.dealloc %a : memref<1024xf32>
    linalg.reduce ins(%b : memref<1024xf32>) outs(%t : memref<f32>) ...
    memref.dealloc %b : memref<1024xf32>
    ```
    After (one at a time):
    ```mlir
    %a = memref.alloc() : memref<1024xf32>
    linalg.fill ins(%c0 : f32) outs(%a : memref<1024xf32>)
    linalg.reduce ins(%a : memref<1024xf32>) outs(%s : memref<f32>) ...
    memref.dealloc %a : memref<1024xf32>
    %b = memref.alloc() : memref<1024xf32>
    ...
    ```
  }];
  let options = [
    Option<"maxExactItems", "max-exact-items", "unsigned", /*default=*/"24",
           "Schedule steps of up to this many ops exactly">,
    Option<"searchRounds", "search-rounds", "unsigned", /*default=*/"1024",
           "Rounds of the local search on each candidate order">,
    Option<"searchTrials", "search-trials", "unsigned", /*default=*/"65536",
           "Orders the local search weighs at most on each candidate order "
           "(O(n + e) each)">
  ];
  let statistics = [
    Statistic<"peakBefore", "arena-before",
              "Arena bytes of the given order (after in-place reuse)">,
    Statistic<"peakAfter", "arena-after",
              "Arena bytes of the order kept (after in-place reuse)">
  ];
}

def RematPlanArenaPass : Pass<"remat-plan-arena", "mlir::func::FuncOp"> {
  let summary = "Place a bufferized step's heap buffers in one static arena";
  let description = [{
    Runs on a bufferized step whose deallocations sit at each buffer's last
    use (the end of `-remat-bufferize`). Every planned buffer (see
    `remat::collectStepBuffers`: a static, identity-layout `memref.alloc` of
    the entry block of a single-block function whose deallocations free it
    there) gets an offset in one arena by `remat::planArena`; the arena is
    allocated once at the function's entry, each allocation becomes a
    `memref.view` at its offset and its deallocation goes. Offsets and the
    arena's size are multiples of 64 bytes. When the function returns a
    planned buffer, the returned views share the arena's allocation and the
    caller frees it once; otherwise the arena is freed before the return.
    Other allocations are left to the allocator. The static peak of the step
    is then the arena's size plus those allocations, as -remat-report
    predicts. O(n^2 log n) in the number of buffers up to 8192 buffers,
    O(n k) beyond, for k buffers live at once.

    Before:
    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    ...
    memref.dealloc %a : memref<16xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
    ```
    After:
    ```mlir
    %arena = memref.alloc() {alignment = 64 : i64} : memref<64xi8>
    %c0 = arith.constant 0 : index
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
    ...
    %b = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numPlanned", "planned-buffers", "Buffers placed in the arena">,
    Statistic<"numUnplanned", "unplanned-buffers",
              "Allocations left to the allocator">,
    Statistic<"arenaBytes", "arena-bytes", "Bytes of the arenas">
  ];
}

def RematMarkPass : Pass<"remat-mark", "mlir::ModuleOp"> {
  let summary = "Choose checkpoint segments by a policy";
  let description = [{
    Writes `remat.segment` (and, for `selective`, `remat.policy = "save"`)
    on the forward ops of every function holding a `remat.backward`,
    replacing the marks it had, except with `policy=annotations` (the
    default), which keeps the marks as written. Only ops -remat-checkpoint
    can recompute are decisions (see remat::MarkingProblem); constants and
    `tensor.empty` follow the first segment that uses them.

    - `policy=sequential segments=N`: `checkpoint_sequential`, the decision
      ops split in program order into N runs of about equal FLOPs; the last
      run stays unmarked, as torch leaves it.
    - `policy=sqrt`: sequential with N = ceil(sqrt(L)) over the L layers of
      the forward (Chen et al. 2016); a layer boundary is an op whose result
      bytes are at most half of both its neighbours', and without two such
      boundaries L is the number of heavy ops (at least a tenth of the
      FLOPs of the costliest).
    - `policy=selective save-ops=OPS save-names=NAMES`: every recomputable op
      in segment 0 except ops named in OPS (`linalg.matmul`: JAX's
      dots_saveable) and ops whose `remat.name` is in NAMES, which get
      `remat.policy = "save"`.
    - `policy=budget budget-bytes=B`, `budget-fraction=F` or
      `budget-between=T`: the marking with the fewest recompute FLOPs whose
      static peak (the one -remat-report prints: the memory plan of a copy
      with -remat-checkpoint applied, remat::MarkingProblem::evaluatePlanned)
      is at most B bytes, F times the unmarked peak, or T of the way from the
      smallest peak the planner reaches (T = 0) to the lower of the unmarked
      peak and the peak with only the cheap ops recomputed (all but the
      heavy ops, as dots_saveable) (T = 1), the scale of PyTorch's
      `activation_memory_budget`, whose 1 is its default partition, which
      recomputes pointwise ops where that saves memory; never infeasible. The search runs on the liveness model (remat::MemoryProfile,
      O(n log n) a marking); the decision on the memory plan: at most
      min(`plan-candidates`, `plan-work` / ops) markings are measured on
      their plans, each a bufferization of the whole step (the unmarked
      step, the model's Pareto front evenly spread, the plans of the
      policies everything, everything but the heavy ops (dots_saveable) and
      sqrt, then, up to that limit, the markings of lowest model peak) and
      the cheapest that fits is chosen; then, within the plan-work left, the
      sequential markings of 2 to 64 segments that recompute fewer FLOPs on
      the model than that choice (all of them when nothing fits) are
      measured too and chosen if they fit more cheaply, so the answer is
      never above another policy's sequential marking (bench/pareto); a
      step too large for two plans is decided on the model's peaks. On the model, the search is exact (every subset of decision
      ops as one segment) up to 14 decision ops; beyond, the cheapest of at
      most max(8, 1.5e6 / ops) and never more than 1500 evaluated markings
      (remat::BudgetOptions::getPoolLimit): the chain program's plans, the
      other policies' plans and the step's own marks (the model's
      checkpoints, as exported), prefixes by bytes per FLOP and greedy
      refinements, so never above sqrt, everything recomputed or the
      model's own checkpoints.
      Up to 64 decision ops, when remat is built with GLPK, an ILP over a
      relaxation of the peak, each solution measured, then closes the gap
      (exact) or stops at its limits (400 markings, 2 s); its bound, or a
      fractional knapsack bound without GLPK, is the proven lower bound. A
      budget below the smallest peak reached is an error naming that peak.

    A module pass: it plans each training step in turn on copies of the
    step and its callees only (remat::copyForPlanning), never reading a
    sibling that a function pass could be rewriting on another thread; the
    markings it measures are measured together on the context's thread
    pool, each on its own copy with its own pass manager (cloned from the
    plan pipeline parsed once, in initialize()). The results are those of
    one thread: `--mlir-disable-threading` writes the same plan.

    The pass emits a remark on each function with the chosen plan: segments,
    predicted peak (the memory plan's) and recompute FLOPs, and for budget
    how many markings were measured on their plans and the model's lower bound on the
    FLOPs and how it was found; it writes the same plan as the
    function attribute `remat.plan`, which -remat-report prints. Bad options (unknown policy, `segments=0`, not exactly
    one budget option, a fraction outside (0, 1], a position outside [0, 1],
    an option of another policy) are errors.

    The plan goes on the function as `remat.plan`, with the static peak and
    recompute FLOPs it predicts, measured by applying it to a copy of the
    function (one evaluation). `predict=false` skips that measurement for
    sequential, sqrt and selective, for pipelines that run
    -remat-checkpoint and -remat-report right after; budget always measures.

    Complexity: one evaluation is O(n log n) for n ops; sequential, sqrt and
    selective need one (none with predict=false), budget 2^d for d <= 14
    decision ops and beyond at most min(1500, max(8, 1.5e6 / n)), so its
    search is O(max(1.5e6, 8 n) log n), then one bufferization per marking
    of the front (at most `plan-work` / n of them: about one bufferization
    of `plan-work` ops in all). A step of more than `plan-work` / 2 ops is
    decided on the model alone (100k ops: under 10 s), and the remark says
    so.

    Before (`-remat-mark="policy=sequential segments=2"`):
    ```mlir
    %a = math.tanh %x : tensor<8xf32>
    %b = math.exp %a : tensor<8xf32>
    ```
    After:
    ```mlir
    %a = math.tanh %x {remat.segment = 0 : i64} : tensor<8xf32>
    %b = math.exp %a : tensor<8xf32>
    ```
  }];
  let options = [
    Option<"policy", "policy", "remat::MarkPolicy",
           /*default=*/"remat::MarkPolicy::Annotations",
           "How segments are chosen",
           [{::llvm::cl::values(
             clEnumValN(remat::MarkPolicy::Annotations, "annotations",
                        "keep the marks the step has"),
             clEnumValN(remat::MarkPolicy::Sequential, "sequential",
                        "checkpoint_sequential with segments=N"),
             clEnumValN(remat::MarkPolicy::Sqrt, "sqrt",
                        "sequential with ceil(sqrt(layers)) segments"),
             clEnumValN(remat::MarkPolicy::Selective, "selective",
                        "recompute all but save-ops / save-names"),
             clEnumValN(remat::MarkPolicy::Budget, "budget",
                        "fewest recompute FLOPs within a peak budget"))}]>,
    Option<"segments", "segments", "unsigned", /*default=*/"0",
           "Number of segments of policy=sequential">,
    ListOption<"saveOps", "save-ops", "std::string",
               "Op names policy=selective saves">,
    ListOption<"saveNames", "save-names", "std::string",
               "remat.name values policy=selective saves">,
    Option<"budgetBytes", "budget-bytes", "int64_t", /*default=*/"0",
           "Peak budget of policy=budget, in bytes">,
    Option<"budgetFraction", "budget-fraction", "double", /*default=*/"0",
           "Peak budget of policy=budget, as a fraction of the unmarked peak">,
    Option<"budgetBetween", "budget-between", "double", /*default=*/"0",
           "Peak budget of policy=budget, this far from the smallest peak "
           "reached (0) to the lower of the unmarked peak and the peak with "
           "all but the heavy ops recomputed (1)">,
    Option<"predict", "predict", "bool", /*default=*/"true",
           "Measure the plan's static peak and recompute FLOPs (always done "
           "for policy=budget)">,
    Option<"planPipeline", "plan-pipeline", "std::string",
           /*default=*/"\"\"",
           "Module pass pipeline that bufferizes a copy of the step for its "
           "memory plan (default: remat::kBufferizePipeline)">,
    Option<"planCandidates", "plan-candidates", "unsigned",
           /*default=*/"48",
           "Markings of the model's Pareto front policy=budget measures on "
           "their memory plans">,
    Option<"planWork", "plan-work", "uint64_t", /*default=*/"100000",
           "Ops of bufferization policy=budget's plans may cost in all: at "
           "most plan-work / ops plans, none when that is under two (the "
           "decision is then the liveness model's)">
  ];
  let dependentDialects = ["::remat::RematDialect"];
  let statistics = [
    Statistic<"numMarked", "marked-ops", "Forward ops put into a segment">,
    Statistic<"numEvaluated", "evaluated-markings", "Markings the budget planner measured">
  ];
}

#endif // REMAT_TRANSFORMS_PASSES_TD
