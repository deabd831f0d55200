//===- Passes.td - remat planning passes -------------------*- tablegen -*-===//
//
// The passes that decide what a training step recomputes (its marking)
// and report what a marking costs.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_PLANNING_PASSES_TD
#define REMAT_PLANNING_PASSES_TD

include "mlir/Pass/PassBase.td"

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
      with -remat-checkpoint applied,
      remat::MarkingProblem::measureOnMemoryPlan) is at most B bytes, F times the unmarked peak, or T of the way from the
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
      sqrt, then, up to that limit, the markings of lowest model peak; when
      the model's candidates do not all fit, a quarter more for the
      candidates nearest the budget: fewer recompute FLOPs than the cheapest
      that fits, and a peak within the budget as the model predicts it,
      scaled by the measured plans' ratio at the nearest model peak) and
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
      checkpoints, as exported), selective plans of those segments (the
      dense ops, matmuls and convolutions, saved in all or some of them),
      prefixes by bytes per FLOP and greedy
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
    Option<"dropRaisingSegments", "drop-raising-segments", "bool",
           /*default=*/"false",
           "Unmark each top-level segment whose recomputation alone raises "
           "the static peak above the unmarked step's, then every segment "
           "if the rest still do; a remark names what was dropped">,
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

#endif // REMAT_PLANNING_PASSES_TD
