//===- Passes.td - remat code generation -------------------*- tablegen -*-===//
//
// The passes of the CPU and CUDA code generation, from a bufferized step
// to the LLVM and NVVM dialects.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_CODEGEN_PASSES_TD
#define REMAT_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def RematMatmulToBlasPass : Pass<"remat-matmul-to-blas", "mlir::ModuleOp"> {
  let summary = "Call the BLAS for f32 matrix multiplications on buffers";
  let description = [{
    Rewrites `linalg.matmul` and `linalg.batch_matmul` on f32 memrefs into
    calls to the runtime's `remat_matmul_f32` / `remat_batch_matmul_f32` (C
    interface), which call `cblas_sgemm` with beta = 1 (linalg's
    C += A * B). A matmul of bf16 or f16 inputs (both of one type) into an
    f32 result, autocast's, calls `remat_matmul_bf16` / `_f16` (and the
    batch forms), which multiply the inputs' exact f32 values as the f32
    entry does, with its bits: the runtime's own GEMM widens them block by
    block as it packs its panels (elsewhere they are converted into f32
    copies first). A transposed input is passed as a transposed view. Other
    element types and maps stay as they are and are lowered to loops. The
    patterns are `populateMatmulToBlasPatterns`; the CUDA target's are
    -remat-matmul-to-cublas.
  }];
  let statistics = [
    Statistic<"numMatmuls", "matmuls", "Matmuls that call the BLAS">
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

def RematConvToBlasPass : Pass<"remat-conv-to-blas", "mlir::ModuleOp"> {
  let summary = "Call the runtime's convolution kernels for f32 convolutions on buffers";
  let description = [{
    Rewrites every linalg op on static f32 memrefs that computes a 2-D (or
    1-D) convolution, `out += a * b` summed over a window, into a call to
    the runtime: the forward form (`linalg.conv_2d_nchw_fchw`,
    `conv_2d_ngchw_gfchw`, the depthwise ones, or a generic with the same
    maps) to `remat_conv2d_f32`, the filter-gradient form
    (`dW[f, c, kh, kw] += dY[n, f, oh, ow] * X[n, c, oh * s + kh * d, ...]`)
    to `remat_conv2d_filter_grad_f32`. Ops are recognised by their indexing
    maps, iterator types and body, not by their names: the image is the
    input read through compound results `oh * s + kh * d`, and each other
    loop dimension is a batch, group, output or input channel by the
    operands it indexes. Each operand is passed as a rank-5 strided view in
    the runtime's order (image [N, G, C, H, W], filter [G, F, C, KH, KW],
    response [N, G, F, OH, OW]; a role the op lacks has size 1) with the
    strides and dilations as i64 arguments. A convolution of bf16 or f16
    inputs (both of one type, widened by `arith.extf` in its body) into an
    f32 output, autocast's, calls `remat_conv2d_bf16` / `_f16` (or the
    filter-gradient forms), which compute the f32 kernel's sums on the
    operands' exact f32 values, with its bits: dense operands are widened
    as the kernel packs them into im2col tiles and GEMM panels (others are
    converted into f32 copies first).

    The kernels allocate nothing: they pack im2col tiles of the image into
    a bounded stack buffer and call `cblas_sgemm` per tile (sums in a fixed
    order, whatever the thread count), or run a direct loop nest where a
    GEMM would be degenerate (depthwise filters) or a layout does not
    collapse into matrices, so the memory plan and the measured peak are
    those of the loops they replace. Other element types, dynamic shapes
    and other bodies (pooling, say) stay linalg ops and become loops.

    Before:
    ```mlir
    linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x6x6xf32>, memref<4x3x3x3xf32>)
                             outs(%y : memref<2x4x4x4xf32>)
    ```
    After:
    ```mlir
    %base, %offset, %sizes:4, %strides:4 = memref.extract_strided_metadata %x ...
    %vx = memref.reinterpret_cast %base to offset: [%offset],
        sizes: [%sizes#0, %c1, %sizes#1, %sizes#2, %sizes#3], strides: [...]
    ...
    call @remat_conv2d_f32(%vx, %vw, %vy, %c1_i64, %c1_i64, %c1_i64, %c1_i64)
    ```

    The patterns are `populateConvToBlasPatterns`; the CUDA target's are
    -remat-conv-to-cublas.
  }];
  let statistics = [
    Statistic<"numConvolutions", "convolutions", "Convolutions that call the runtime">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def RematStridedCopiesToLinalgPass
    : InterfacePass<"remat-strided-copies-to-linalg", "mlir::FunctionOpInterface"> {
  let summary = "Copy strided buffers with generated loops, not the C runner's memrefCopy";
  let description = [{
    memref-to-llvm lowers a `memref.copy` between contiguous buffers to one
    memcpy, and any other (a padded convolution input's interior, say) to a
    call of the C runner utils' `memrefCopy`, which copies one element at a
    time through a rank-generic index loop and a memcpy call per element.
    This pass rewrites each such copy on ranked memrefs into a `linalg.copy`,
    which `-convert-linalg-to-loops` turns into a loop nest that LLVM
    compiles (and vectorizes) for the static shapes. Contiguous copies stay
    memcpy. No buffer is added or removed.

    Before:
    ```mlir
    memref.copy %x, %sub : memref<16x32x16x16xf32>
        to memref<16x32x16x16xf32, strided<[10368, 324, 18, 1], offset: 19>>
    ```
    After:
    ```mlir
    linalg.copy ins(%x : memref<16x32x16x16xf32>)
        outs(%sub : memref<16x32x16x16xf32, strided<[10368, 324, 18, 1], offset: 19>>)
    ```
  }];
  let statistics = [
    Statistic<"numCopies", "copies", "Strided copies that became linalg.copy">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RematSplitReductionsPass
    : InterfacePass<"remat-split-reductions", "mlir::FunctionOpInterface"> {
  let summary = "Sum a reduction into lane partials (innermost dimension) or parts (outermost) first";
  let description = [{
    A reduction whose innermost loop dimension is a reduction adds its terms
    one after the other into one accumulator: a chain of dependent adds
    (batch norm's per-channel sums of NCHW values, a loss, a layer norm's
    row sums) that runs at one add per add's latency however wide the
    vectors are. This pass cuts the innermost dimension (N terms) into N/L
    chunks of L lanes, L = `partial-bits` / the accumulator's bits (16 f32,
    8 f64), and rewrites the op into two:

    1. the op with the lanes as an innermost parallel dimension, accumulating
       into a stack buffer of L partials per output, filled first with the
       combiner's neutral element: each partial a chain over the other
       reduction dimensions and the chunks, the L chains independent;
    2. a reduction of each output's partials into the output, lane 0 first.

    The order of the terms depends on the shapes alone, and the pass runs
    before `-remat-vectorize` and without it alike: vector code, scalar
    loops, recomputed ops and their originals compute the same bits. L does
    not depend on the host (a 256-bit host splits as a 512-bit one does).

    Only ops on static buffers with one output, projected-permutation maps,
    no `linalg.index`, a combiner `matchReduction` finds that is
    associative and commutative (add, mul, max, min on floats) with a
    neutral element, N a multiple of L and at least 4L terms per output
    are split, and only while the partials take at most 64 KiB of stack;
    the buffer is a `memref.alloca` in the function's entry block, outside
    the step's heap plan.

    A reduction along its outermost loop dimension (a column sum over a
    batch's rows: a bias's or a norm's gradient, a loss) runs as one loop
    that no thread can share, since every iteration adds into every output.
    Such a dimension (R terms) is cut the same way into P parts of R/P
    terms, the parts a parallel dimension that leads the partials' shape
    ([P, output shape...]); the partials then fold into the output, part 0
    first. P is the largest of 16, 8, 4 and 2 that divides R and leaves at
    least 32 terms per output in each part and at most 64 KiB of partials,
    for an op of at least 2^15 iterations whose parallel dimensions other
    than the innermost (which vector code takes) run fewer than 16: an op
    with more (batch norm's per-channel sums) already runs its outputs on
    the threads. A lane split's first op, whose outermost dimension is still
    the original one, is cut into parts after the lanes.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
  let options = [
    Option<"partialBits", "partial-bits", "int64_t", /*default=*/"512",
           "Bits of one output's partials (16 f32 lanes at 512)">
  ];
  let statistics = [
    Statistic<"numSplit", "split", "Reductions split into lane partials">,
    Statistic<"numPartsSplit", "parts-split",
              "Reductions cut into parts along their outermost dimension">
  ];
}

def RematVectorizePass
    : InterfacePass<"remat-vectorize", "mlir::FunctionOpInterface"> {
  let summary = "Tile elementwise and reduction linalg ops on buffers and vectorize the tiles";
  let description = [{
    Rewrites each linalg op on static buffers that reads and writes its
    operands without windows (elementwise ops, fills, copies, broadcasts and
    reductions: every indexing map a projected permutation) and whose
    innermost loop dimension is the innermost, unit-stride dimension of every
    operand that it indexes into a loop nest whose body is vector code (the
    innermost dimension that runs more than once, when those after it run
    once: a mean's [rows x 1] buffers take their tiles along the rows):
    every outer loop dimension steps by 1, the innermost by `vector-bits`
    divided by the widest element type's bits (8 f32 lanes for 256 bits),
    each full tile, a 1-D linalg.generic on views of the buffers without
    their unit dimensions, becomes 1-D vector loads, arithmetic and stores
    (upstream's `linalg::vectorize`, then its transfer and reduction
    lowerings), and the remainder of the innermost dimension one narrower
    vector tile.

    The tiles run in the order of the scalar loop nest, and a reduction
    along the innermost dimension stays an ordered `vector.reduction` with
    the accumulator (`llvm.vector.reduce.fadd` without reassociation), so
    every sum adds the same numbers in the same order as
    `-convert-linalg-to-loops`' loops: outputs are bit-identical with and
    without this pass, and a recomputed op and its original run the same
    code. No buffer is added: tiles are views, vectors are registers.

    An `i1` element counts as a byte (`-remat-widen-bool-vectors` moves
    vectors of i1 as bytes). Ops with dynamic shapes, windows (convolutions,
    pooling), other element types, bodies upstream's vectorizer refuses, or
    an innermost dimension narrower than a vector are left to
    `-convert-linalg-to-loops`.

    Before:
    ```mlir
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<4x20xf32>) outs(%sum : memref<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
    ```
    After (8 lanes):
    ```mlir
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c16 step %c8 {
        %v = vector.load %x[%i, %j] : memref<4x20xf32>, vector<8xf32>
        %acc = memref.load %sum[%i] : memref<4xf32>
        %r = vector.reduction <add>, %v, %acc : vector<8xf32> into f32
        memref.store %r, %sum[%i] : memref<4xf32>
      }
      // the remaining 4 columns as a vector<4xf32>
    }
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Bits of the host's vector registers (128 for SSE, 256 for AVX, "
           "512 for AVX-512)">
  ];
  let statistics = [
    Statistic<"numVectorized", "vectorized", "Linalg ops tiled and vectorized">
  ];
  let dependentDialects = [
    "mlir::affine::AffineDialect",
    "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect"
  ];
}

def RematApproximateMathPass : Pass<"remat-approximate-math"> {
  let summary = "Evaluate tanh, erf and exp as polynomials, in vector lanes";
  let description = [{
    Rewrites `math.tanh`, `math.erf`, `math.erfc` and `math.exp` on f32
    scalars and vectors into upstream MLIR's polynomial and rational
    approximations (`populateMathPolynomialApproximationPatterns`):
    arithmetic, `math.fma` and comparisons that LLVM keeps in vector
    registers. Without this pass tanh becomes `llvm.intr.tanh`, which LLVM's
    code generator expands into one libm `tanhf` call per lane (erf:
    `-convert-math-to-libm`, the same; exp: `expf`): on the GPT block,
    `tanhf` (which calls `expm1f`) took more of a step's time than all its
    matmuls, and on GPT-2 small at batch 4 x 512 the softmaxes' `expf`
    calls took half of the step's elementwise time.

    A scalar and a vector lane evaluate the same operations in the same
    order (`math.fma` is a fused multiply-add on both), so the vector tiles
    and the scalar remainder loops, a recomputed op and its original, give
    the same bits. The result differs from libm's by a few ulp (upstream
    states its error bounds; exp is within 1 ulp on [-12, 12], 5 just below
    its overflow, and flushes results below the smallest normal float,
    exp(x) for x under -87.3, to 0); `-remat-lower-cpu` runs this pass unless its
    `approximate-math` option is false (remat-run `--libm-math`).

    Before:
    ```mlir
    %t = math.tanh %x : vector<8xf32>
    ```
    After: clamps, a rational polynomial in `%x * %x`, and a select for
    tiny inputs, all on `vector<8xf32>`.
  }];
  let statistics = [
    Statistic<"numApproximated", "approximated",
              "Math ops rewritten into polynomials">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::math::MathDialect",
    "mlir::vector::VectorDialect"
  ];
}

def RematFuseParallelLoopsPass
    : InterfacePass<"remat-fuse-parallel-loops", "mlir::FunctionOpInterface"> {
  let summary = "Fuse consecutive parallel loops over the same rows";
  let description = [{
    Fuses each `scf.parallel` at the top of a function's blocks into the next
    one when only ops without memory effects or regions (views, constants)
    stand between them, both have the same static iteration space and no
    reductions, their bodies touch memory only by memref and vector loads
    and stores (and stack buffers of their own), and every buffer one of
    them writes and the other touches is one value that both index with
    each induction variable in the same fixed dimension (a vector access
    moving along another). Then each element of such a buffer is touched by
    one iteration in both loops, and running the first body then the
    second for each iteration computes what the two loops computed, to the
    bit. Other buffers must not overlap: distinct allocations, or views of
    one allocation (`memref.view` at a constant shift, and reshapes and
    subviews of it) at disjoint bytes; two arguments may overlap.

    The lowering's small loops over a batch's rows come in such runs: the
    fill of a split reduction's lane partials, the partials' sums and their
    fold into the output (-remat-split-reductions), each a loop over the
    rows. Fused, they are one loop that `-remat-outline-parallel-loops` runs
    on the pool, where the fill and the fold ran on one thread between two
    dispatches.

    Before:

    ```mlir
    scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
      scf.parallel (%j) = (%c0) to (%c16) step (%c8) {
        vector.store %zero, %lanes[%i, %j] : memref<1024x16xf32>, vector<8xf32>
      }
    }
    scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
      ... vector.load %lanes[%i, %j] ... vector.store ..., %lanes[%i, %j] ...
    }
    ```

    After: one `scf.parallel (%i)` whose body stores the zeros, then sums.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numFused", "fused", "Loops fused into the loop after them">
  ];
}

def RematOutlineParallelLoopsPass
    : Pass<"remat-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Run large parallel loops on the runtime's thread pool";
  let description = [{
    Splits each outermost `scf.parallel` of a function whose bounds are
    static and whose work (elements computed: each op counts its widest
    vector's lanes, or one, times the static trip counts of the loops around
    it in the body) is at least twice `min-unit-work` into units, outlines the
    body of a unit into a function `(!llvm.ptr, i64) -> ()` and replaces the
    loop by a call of the runtime's
    `remat_parallel_for(units, function, context)`, which runs the units on
    the pool that `remat-run --threads` sizes and returns when all have
    returned.

    A unit is a range of consecutive iterations of the loop's first
    dimensions (linearized), each running the remaining dimensions whole:
    the fewest first dimensions that give 16 units of `min-unit-work` each
    (all of them if none do), at most 256 units. The units depend on the
    trip counts and the body alone, never on the thread count, and only
    parallel dimensions are split (reductions are `scf.for` loops inside the
    body, run whole by one unit), so every unit computes what the loop
    computed, in the same order within each output element: outputs are
    bit-identical for any number of threads. Smaller loops stay as they are
    (no dispatch cost).

    The values the body uses from above are stored in a stack struct (the
    context, allocated at the function's entry): indices as `i64`, memrefs
    as their LLVM descriptors (`builtin.unrealized_conversion_cast`, which
    the memref lowering resolves), scalars and vectors as they are;
    constants are cloned into the outlined function. A stack buffer (an
    alloca) is captured only when the iterations cut it among themselves:
    every access in the body is a load or store that indexes one fixed
    dimension with each induction variable (of a dimension that runs more
    than once), and a vector access moves along another dimension; the
    lane partials of `-remat-split-reductions` are such buffers. A loop
    whose body allocates or frees memory or calls a function, or captures a
    value of another type or any other stack buffer (scratch that units on
    different threads would share), or has reductions, stays on one
    thread.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c512) step (%c1, %c1) {
      %v = memref.load %x[%i, %j] : memref<256x512xf32>
      %e = math.exp %v : f32
      memref.store %e, %y[%i, %j] : memref<256x512xf32>
      scf.reduce
    }
    ```
    After (16 units of 16 rows: 4 elements an iteration, 524288 in all):
    ```mlir
    func.func private @step_parallel(%ctx: !llvm.ptr, %unit: i64) {
      // %x and %y loaded from the context; rows [%unit * 16, + 16)
      scf.for %l = %begin to %end step %c1 {
        scf.parallel (%j) = (%c0) to (%c512) step (%c1) { ... }
      }
      return
    }
    func.func @step(...) {
      %ctx = llvm.alloca %c1 x !llvm.struct<(struct<(ptr, ptr, i64, ...)>, ...)>
      // %x and %y stored into it
      %fn = func.constant @step_parallel : (!llvm.ptr, i64) -> ()
      call @remat_parallel_for(%c16_i64, %fn, %ctx)
          : (i64, (!llvm.ptr, i64) -> (), !llvm.ptr) -> ()
    }
    ```
  }];
  let options = [
    Option<"minUnitWork", "min-unit-work", "int64_t", /*default=*/"32768",
           "Elements a unit computes at least (a loop with less than twice "
           "this stays on one thread)">
  ];
  let statistics = [
    Statistic<"numOutlined", "outlined", "Parallel loops split into units">,
    Statistic<"numSmall", "small", "Parallel loops left whole: too little work">,
    Statistic<"numUnsupported", "unsupported",
              "Parallel loops left whole: dynamic bounds, reductions, calls, "
              "allocations or captured values of other types">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::func::FuncDialect",
    "mlir::LLVM::LLVMDialect",
    "mlir::scf::SCFDialect"
  ];
}

def RematProfileCallsPass : Pass<"remat-profile-calls", "mlir::ModuleOp"> {
  let summary = "Time each call a step makes, for a per-kernel profile";
  let description = [{
    After the outlining passes, brackets every `func.call` and `memref.copy`
    in the module's public functions (the steps) with calls of the runtime's
    `remat_profile_begin()` and `remat_profile_end(name)`, where `name` is a
    constant string naming what the call runs: its callee (the runtime's
    matmul and convolution kernels, or an outlined loop nest, whose name
    says whether it is elementwise, a reduction or a copy), the unit
    function that a `remat_parallel_for` call runs, or `memref.copy`. The
    runtime sums the time and calls per name (remat-run `--profile`). The
    step computes the same: only the two calls are added.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect"];
}

def RematOutlineLoopNestsPass
    : Pass<"remat-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Outline each loop nest left in a function into a function "
                "of its own";
  let description = [{
    A whole training step lowers to one host function with thousands of
    loop nests (GPT-2 small: 52k lines of the LLVM dialect). LLVM's loop
    passes are not linear in the loops of one function: on that step,
    IndVarSimplify alone took 110 s of a 115 s -O3 pipeline. This pass
    moves every top-level `scf.for`, `scf.parallel`, `scf.while` and
    `scf.if` that holds a loop out of the public functions of the module (the
    private ones are the nests outlined before, by this pass or by
    `-remat-outline-parallel-loops`) into a
    private function of its own, never inlined (LLVM's `noinline`), and calls it in its
    place, so that each loop nest is optimized apart (each function is
    small), independent nests can be compiled in parallel, and the repeated
    layers of a network give identical functions that
    `-remat-dedupe-functions` compiles once.

    The values the nest uses from above become the function's arguments, in
    the order of their first use (memrefs, indices, scalars, vectors and
    pointers; constants are cloned into the function instead), and its
    results the function's results. A nest that uses a value of another
    type stays where it is. The ops and their order are unchanged, so the
    step computes the same bits.
  }];
  let statistics = [
    Statistic<"numOutlined", "outlined", "Loop nests outlined">
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def RematDedupeFunctionsPass
    : Pass<"remat-dedupe-functions", "mlir::ModuleOp"> {
  let summary = "Keep one of each set of identical private functions and "
                "GPU kernel modules";
  let description = [{
    The repeated blocks of a network (GPT-2's 12 layers, ResNet's
    bottlenecks) lower to the same loop nests and kernels, which LLVM, the
    NVPTX backend and ptxas would otherwise compile once per copy. This pass
    groups the private `func.func`s with a body, and the `gpu.module`s,
    that are structurally identical up to their symbol names (the same ops,
    attributes, types and uses in the same order, compared with
    `OperationEquivalence`, locations ignored), keeps the first of each
    group in module order, points every symbol reference to a dropped one
    (calls, `func.constant`, `gpu.launch_func`) at the one kept, and erases
    the others. It repeats until nothing changes, since two functions that
    call duplicates become identical once the calls agree. Only names
    change: the step runs the same code.
  }];
  let statistics = [
    Statistic<"numErased", "erased", "Duplicate functions and modules erased">
  ];
}

def RematWidenBoolVectorsPass
    : Pass<"remat-widen-bool-vectors", "mlir::ModuleOp"> {
  let summary = "Load and store vectors of i1 as one byte per element";
  let description = [{
    A `memref<...xi1>` holds one byte per element (its LLVM GEPs step over
    `i1`, whose allocation size is a byte), but LLVM lays a `<N x i1>`
    vector out as N bits, so the `llvm.load` / `llvm.store` of a vector of
    i1 that `-convert-vector-to-llvm` emits for a `vector.load` of such a
    buffer would read and write bits of the first bytes. This pass, run after
    it, loads and stores such vectors as `<N x i8>` with a `llvm.trunc` /
    `llvm.zext`, the bytes scalar i1 loads and stores use.

    Before:
    ```mlir
    %m = llvm.load %p {alignment = 1 : i64} : !llvm.ptr -> vector<8xi1>
    ```
    After:
    ```mlir
    %b = llvm.load %p {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
    %m = llvm.trunc %b : vector<8xi8> to vector<8xi1>
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def RematConvToCublasPass : Pass<"remat-conv-to-cublas", "mlir::ModuleOp"> {
  let summary = "Rewrite f32 convolutions on buffers into im2col gathers and matmuls for cuBLAS";
  let description = [{
    The CUDA target's form of -remat-conv-to-blas: each f32 convolution of
    one group on static buffers that -remat-conv-to-blas recognises becomes
    GEMMs for cuBLAS, in tiles of whole images whose im2col buffer holds at
    most 2 MiB: per tile, a `linalg.generic` gathers the image's windows
    into a fresh buffer (the im2col matrix), and a `linalg.batch_matmul`
    (forward form: the filter, broadcast over the tile's images, times each
    image's matrix) or a `linalg.matmul` (filter gradient: the response's
    tile times the windows, summed over the tile's pixels) accumulates into
    the result, or into a buffer added to it after the last tile where the
    result's layout is not one cuBLAS writes. -remat-matmul-to-cublas then
    calls cuBLAS, and -remat-map-to-gpu makes kernels of the gathers. The
    buffers are device allocations of their own, outside the step's arena.
    Grouped and depthwise convolutions, and those of bf16 or f16 inputs,
    stay loops. The patterns are `populateConvToCublasPatterns`.
  }];
  let statistics = [
    Statistic<"numConvolutions", "convolutions",
              "Convolutions rewritten into gathers and matmuls">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def RematMatmulToCublasPass
    : Pass<"remat-matmul-to-cublas", "mlir::ModuleOp"> {
  let summary = "Call cuBLAS for f32 matrix multiplications on device buffers";
  let description = [{
    The CUDA target's form of -remat-matmul-to-blas: the calls go to the
    CUDA runtime's `remat_cuda_matmul_f32` / `remat_cuda_batch_matmul_f32`
    (cuBLAS on device buffers), and for 2-byte inputs to
    `remat_cuda_matmul_bf16` / `_f16` and the batch forms (cublasGemmEx
    with float32 compute). Only matmuls whose operands have a statically
    unit innermost stride are rewritten: cuBLAS has no fallback loop nest,
    the GPU kernels do. A transposed input is passed as a transposed view,
    which the CUDA runtime reads with `CUBLAS_OP_T`. The patterns are
    `populateMatmulToCublasPatterns`.
  }];
  let statistics = [
    Statistic<"numMatmuls", "matmuls", "Matmuls that call cuBLAS">
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

def RematMapToGPUPass
    : InterfacePass<"remat-map-to-gpu", "mlir::FunctionOpInterface"> {
  let summary = "Turn the loops of a bufferized step into GPU-mapped parallel loops";
  let description = [{
    Prepares a bufferized training step for `-convert-parallel-loops-to-gpu`,
    so that every loop nest that touches a buffer runs on the device:

    * `memref.copy` becomes `linalg.copy` (a kernel, not a host memcpy);
    * a `memref.get_global` read by a linalg op gets a device copy (an
      allocation filled on the host before its first use and freed after
      its last use in the block): generated kernels cannot read host globals;
    * a reduction with one output, fewer than 32768 output elements and at
      least 64 terms each (a loss, a bias gradient, a normalization's
      statistics) becomes a `gpu.launch` of one block per output element:
      each thread folds every block-size-th term into a private accumulator,
      a tree in shared memory combines the threads' values, and thread 0
      folds the total into the output (the order of the terms depends only
      on the shapes, so the bits do not depend on the run);
    * every other linalg op becomes a loop nest with `scf.parallel` for its
      parallel dimensions (reductions stay sequential, inside each thread,
      so their order and bits do not depend on the launch);
    * every outermost `scf.parallel` is linearized into a grid of
      `block-size` threads per block (block x, thread x) with a bounds check;
      an outermost `scf.for` (a reduction to a scalar) becomes one thread.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1) { ... }
    ```
    After:
    ```mlir
    scf.parallel (%b) = (%c0) to (%c1) step (%c1) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
        // %l = %b * 256 + %t; if %l < 256: %i = %l / 32, %j = %l mod 32
        ...
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of every kernel">
  ];
  let dependentDialects = [
    "mlir::affine::AffineDialect",
    "mlir::arith::ArithDialect",
    "mlir::gpu::GPUDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect"
  ];
}

def RematGeneralizeKernelOffsetsPass
    : Pass<"remat-generalize-kernel-offsets", "mlir::ModuleOp"> {
  let summary = "Give kernels' memref arguments a dynamic offset";
  let description = [{
    A kernel that reads a view at a static offset (a batch tile of an
    im2col gather, a slice of a stage's activations) has the offset in its
    argument's type, so the same loop nest over another tile is another
    kernel to compile: ResNet-50's step had 1638 distinct kernel modules for
    5898 launches, most of them differing in one offset. This pass gives
    each strided memref argument of a `gpu.func` kernel a dynamic offset
    (`offset: ?`) when the kernel only loads, stores and reads metadata
    through it, and casts the operand of every `gpu.launch_func` of the
    kernel to that type (`memref.cast`); the kernel then reads the offset
    from the argument's descriptor. Run before `-remat-dedupe-functions`,
    whose kernels then differ only where their code does.
  }];
  let statistics = [
    Statistic<"numGeneralized", "generalized",
              "Kernel arguments given a dynamic offset">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def RematMergeKernelModulesPass
    : Pass<"remat-merge-kernel-modules", "mlir::ModuleOp"> {
  let summary = "Gather the kernel modules into a few larger ones";
  let description = [{
    Each module is a unit of compilation for `-remat-gpu-module-to-binary`:
    one NVPTX compile with libdevice linked in, one `ptxas` process and, at
    run time, one module load. After `-remat-dedupe-functions` a step still
    has hundreds of small modules (ResNet-50's: 378). This pass moves the
    contents of consecutive `gpu.module`s, `kernels-per-module` at a time,
    into the first of them, and points every `gpu.launch_func` at the
    kernel's new place. A symbol whose name is already taken there is
    dropped if it is the same op (a shared declaration) and renamed
    otherwise (the outliner names every kernel `@<function>_kernel`). The
    groups depend on the module order alone, not on the thread count, so
    the binaries do too.
  }];
  let options = [
    Option<"kernelsPerModule", "kernels-per-module", "unsigned",
           /*default=*/"16",
           "Kernel modules gathered into one (0 or 1: none)">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def RematGpuModuleToBinaryPass
    : Pass<"remat-gpu-module-to-binary", "mlir::ModuleOp"> {
  let summary = "Compile the GPU kernel modules to binaries in parallel";
  let description = [{
    Upstream's `-gpu-module-to-binary`, with the modules compiled on the
    context's threads: each `gpu.module` is serialized for each of its
    targets (NVVM: LLVM IR, the NVPTX backend, then the toolkit's `ptxas`,
    a process of its own), in parallel, and then replaced, in module order,
    by a `gpu.binary` of the same name holding its objects. A module's
    binary does not depend on the others or on the thread count, so the
    output is the same as a one-thread compile's. A step's kernels are many
    small modules: one after another, each one's ptxas run waited for the
    last.
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"\"\"",
           "The CUDA toolkit to take ptxas and libdevice from">,
    Option<"compilationTarget", "format", "std::string",
           /*default=*/"\"bin\"",
           "What each module becomes: offloading, assembly, isa, bin or "
           "fatbin">
  ];
  let statistics = [
    Statistic<"numModules", "modules", "Kernel modules compiled">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def RematCUDAHostAllocsPass : Pass<"remat-cuda-host-allocs", "mlir::ModuleOp"> {
  let summary = "Route the host code's heap allocations to the CUDA runtime";
  let description = [{
    After `-finalize-memref-to-llvm{use-generic-functions}`, renames the
    allocator the host code calls (`_mlir_memref_to_llvm_alloc`,
    `_aligned_alloc`, `_free`) to the CUDA runtime's counting device
    allocator (`remat_cuda_alloc`, `remat_cuda_aligned_alloc`,
    `remat_cuda_free`), so every buffer of the step lives on the device and
    is counted, and the CPU and CUDA runtimes can be linked into one binary.
  }];
}

#endif // REMAT_CODEGEN_PASSES_TD
