//===- Passes.td - remat buffer and memory passes ----------*- tablegen -*-===//
//
// The passes of -remat-bufferize other than the conversion: tensor-level
// folds and fusion before bufferization, then on buffers the deallocations,
// the schedule of least peak, buffer reuse and the static arena.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_MEMORY_PASSES_TD
#define REMAT_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    has the result's type; no other view, except inside an op (a loop) that
    comes before or after and returns no memref, where a view ends with it
    (an embedding gradient's scatter writes its columns through subviews).
    The result's allocation goes (a
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

def RematSplitSharedInitsPass
    : InterfacePass<"remat-split-shared-inits", "mlir::FunctionOpInterface"> {
  let summary = "Give each destination-style op its own empty or filled init";
  let description = [{
    CSE merges identical `tensor.empty` and `linalg.fill` ops, including a
    recomputed clone's init with the forward op's. Two destination-style ops
    then share one init tensor, and bufferization keeps its buffer (written
    in place by the first) alive until the second, often a whole forward
    pass later, to copy it. This pass re-creates the init chain
    (`tensor.empty`, optionally filled with a scalar) right before every
    destination-style op that writes into one, so each op writes into a
    buffer of its own, allocated where it is first written (a `tensor.empty`
    becomes an allocation where it is defined, which CSE may have hoisted
    far up), and nothing is kept alive for it. An init that is a splat
    constant becomes a fill of its scalar the same way: bufferized, the
    constant would be a global in the step's object (an embedding
    gradient's zeros: 154 MB for GPT-2's vocabulary) that each writer
    copies into its buffer. Linear in the number of ops.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RematWidenSumsPass
    : InterfacePass<"remat-widen-sums", "mlir::FunctionOpInterface"> {
  let summary = "Accumulate float32 sums in float64";
  let description = [{
    A float32 sum on buffers (`linalg.reduce` or `linalg.generic` whose body
    adds into its init with `arith.addf`, projected-permutation maps, static
    shapes) over more than `min-elements` elements accumulates in a float64
    buffer of the result's shape instead (allocated right before, filled
    with -0.0, the exact identity of `addf`, and freed right after): the
    same loops and body, each term extended to float64 before it is added.
    An elementwise `linalg.generic` then adds the float64 sums to the
    original init and rounds once.

    A sequential float32 sum of n terms carries rounding error that grows
    with n; in float64 it stays far below one float32 rounding for any n a
    step has. PyTorch's CPU batch norm accumulates its statistics and its
    gradient sums in float64 too. remat's float32 batch-norm statistics over
    2 x 32 x 32 values were 5 to 15 times farther from float64 than
    PyTorch's, enough to flip a ReLU's mask where a value sat within 3e-5 of
    zero.

    In `-remat-bufferize` it runs after `-remat-schedule` and
    `-remat-reuse-buffers` and before `-remat-plan-arena`: the order is
    chosen on the float32 sums, and the arena places the float64 ones.

    Before:
    ```mlir
    linalg.reduce ins(%x : memref<2x8x32x32xf32>)
        outs(%s : memref<8xf32>) dimensions = [0, 2, 3] (addf)
    ```
    After:
    ```mlir
    %w = memref.alloc() : memref<8xf64>
    linalg.fill ins(%minus_zero : f64) outs(%w : memref<8xf64>)
    linalg.generic {iterator_types = ["reduction", "parallel", "reduction",
                                      "reduction"]}
        ins(%x) outs(%w)  // addf(extf(x), acc) in f64
    linalg.generic {iterator_types = ["parallel"]}
        ins(%w) outs(%s)  // truncf(w + extf(s))
    memref.dealloc %w : memref<8xf64>
    ```
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"64",
           "Widen sums over more elements than this">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def RematStripBarriersPass
    : InterfacePass<"remat-strip-barriers", "mlir::FunctionOpInterface"> {
  let summary = "Remove remat.barrier ops once nothing can merge clones";
  let description = [{
    Replaces every `remat.barrier` by its operands. Run it after
    bufferization: on buffers, recomputed ops are distinct writes into
    distinct allocations and no pass merges them with their originals.
  }];
}

def RematHoistDeallocsPass
    : InterfacePass<"remat-hoist-deallocs", "mlir::FunctionOpInterface"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Ownership-based buffer deallocation frees buffers at the end of their
    block, so in a straight-line training step every buffer would live to
    the end of the step and no rematerialization could lower the peak. This
    pass moves each `memref.dealloc` up to just after the last operation of
    its block that uses the buffer or any view of it (per
    BufferViewFlowAnalysis). A buffer used outside the dealloc's block, or
    whose dealloc is conditional, is left alone. Target-independent; linear
    in the number of uses of the freed buffers.
  }];
}

def RematSplitDeallocsPass
    : InterfacePass<"remat-split-deallocs", "mlir::FunctionOpInterface"> {
  let summary = "Turn known-distinct bufferization.dealloc operands into plain frees";
  let description = [{
    Ownership-based buffer deallocation frees the buffers of a straight-line
    step with one `bufferization.dealloc` at the end of the block, listing
    every allocation and retaining the returned buffers. Upstream's
    `-buffer-deallocation-simplification` splits it by comparing every
    memref with every other and copying the retained list into each split:
    quadratic in the buffers of the step (minutes at 100k ops). When every
    memref of a `bufferization.dealloc` is a distinct `memref.alloc` result
    with a constant true condition, and every retained value is a view of
    one of them, of another allocation or of a function argument, this pass
    decides each memref in one lookup: a memref some retained value is a
    view of stays alive (its retained result becomes `true`), every other
    one becomes a `memref.dealloc`, and the retained values that view none
    of the memrefs get `false`. Other deallocs are left to the upstream
    pass. Linear in the operands of the deallocs.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def RematFuseElementwisePass
    : InterfacePass<"remat-fuse-elementwise", "mlir::FunctionOpInterface"> {
  let summary = "Fuse elementwise linalg ops on tensors, except into windows "
                "and where fusing keeps a larger operand alive";
  let description = [{
    Upstream's `-linalg-fuse-elementwise-ops` (the same patterns: a
    producer fused into its only user, reshapes folded by expansion, the
    canonicalizations), with one more rule: nothing is fused into an op
    that reads an operand through a window, an indexing map result such as
    `d5 + d2` (a convolution, its filter gradient, pooling). Such an op reads
    each element of its operands many times, so a fused producer would be
    recomputed as many times (72 times for a 3x3 filter gradient over 8
    channels), and `-remat-conv-to-blas` hands operands, not fused bodies,
    to the runtime's kernels.

    A second rule: a producer is not fused when one of its operands is
    larger than its result and no op reads that operand at or after the
    user. Fused, the user would keep the operand alive until it runs; apart,
    `-remat-schedule` can run the producer right after the operand is made
    and free the operand there. A ReLU's backward reads the forward's output
    only through `arith.cmpf ole, %out, 0`: apart, the comparison runs in
    the forward and the step keeps one byte an element of it until the
    backward, not the four of `%out`.

    And one more kind of user: a `linalg.reduce` one of whose inputs such a
    producer makes becomes a `linalg.generic` first (upstream's patterns
    fuse into generics only), so a sum of squares (a batch norm's variance,
    a squared-error loss) computes its terms inside the sum instead of in a
    buffer of their own. The terms are the same float32 values, and
    `-remat-widen-sums` still sums them in float64.

    On the zoo's blocks without recomputation (static peak = measured): the
    ResNet block 3.26 -> 2.88 MiB by the second rule, 2.38 MiB with the
    sums; the DenseNet block 9.47 -> 8.93 MiB; the GPT block and the mlp
    unchanged.

    Before:
    ```mlir
    %g = linalg.generic {...["parallel", ...]} ins(%a, %b) ... { mulf }
    %dw = linalg.generic {indexing_maps = [(d4, d0, d5, d6),
                                           (d4, d1, d5 + d2, d6 + d3), ...]}
        ins(%g, %x) outs(%init) { mulf, addf }
    ```
    After: unchanged; upstream's pass would compute `%g` inside `%dw`.
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::tensor::TensorDialect"
  ];
}

#endif // REMAT_MEMORY_PASSES_TD
