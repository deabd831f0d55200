"""Checks one zoo model exported from PyTorch by remat-torch-export.

1. Dropout on: for every policy in POLICIES, the step after rematerialization
   gives loss and gradients bit-identical to remat's own run without
   rematerialization (-remat-thread-rng only), on the same inputs. A step
   with loops (a torch scan) is also checked under LOOP_POLICIES
   (-remat-checkpoint-loops, which must rewrite a loop), here and in 2.
2. Dropout p=0: remat's loss and gradients (CPU codegen) without
   rematerialization and under EAGER_POLICIES match PyTorch eager's within
   1e-4 relative (max |remat - torch| over
   max |torch|, per output). With p=0 PyTorch's own generator, which is not
   Philox, draws nothing that matters. An output that is zero in theory
   (the bias of a batch norm whose output only feeds another batch norm)
   is rounding noise in both: its error is measured against an absolute
   floor, FLOOR of the step's largest gradient, instead of its own maximum.
   An output more than 1e-4 from eager float32 is judged against eager
   float64 instead: it passes within 1e-4 of float64, or within
   ILL_CONDITIONED times float32's spread there (an ill-conditioned
   gradient: a near tie in a max-pooling window, a ReLU input a rounding
   from zero, a batch norm over a few values), and the line says how many
   did. The spread is the larger of eager float32's distance from float64
   and the exporter's noise64: float64 runs with every op's result moved by
   up to float32's unit roundoff (Monte Carlo arithmetic). remat's ops round
   like PyTorch's, so its distance is another draw of the same spread. A
   wrong mapping is off by far more: 1e-2 to 1. An output farther than
   that too is left to 3 (float32 cannot decide it: a rounding that moves
   a ReLU input across 0 inside a max-pooling tie changes a gradient by
   19%, beyond what the Monte Carlo runs find).

3. The float64 step, with --float64 or when 2 left an output undecided:
   remat-torch-export --float64 writes the step in float64 (every float32
   op of it float64); at dropout 0, without rematerialization and under
   EAGER_POLICIES, its loss and gradients are within TOLERANCE64 relative
   of PyTorch eager's in float64, and an output 2 left undecided passes
   only so. float64's unit roundoff is 2^29 times smaller than float32's:
   the near ties and cancellations that move float32 results by 1e-1
   move these by 1e-10 at most, while a wrong mapping is still off by
   1e-2. An output farther than TOLERANCE64 from eager passes within it of
   PyTorch's own float64 run of the decomposed step (the core ATen graph
   the exporter maps), if no farther from eager than that run: PyTorch's
   decomposition of an op need not compute its kernel's bits (DeepLabV3's
   is 2.9e-8 from eager). This decides the mapping (every op's formula,
   which the float32 step shares); the float32 kernels are decided on the
   models float32 can judge. With --float64, 1 is also run on the float64 step: its
   dropout masks are the float32 step's, bit-identical under every policy.
   --float64-only runs 1 and 3 on the float64 step alone (a model whose
   float32 step another test checks).

4. With --peak: in 2 and 3, each step's static peak (-remat-report's memory
   plan) equals the peak the generated code's allocator measures (remat-run
   --stats), to the byte.

5. With --arena-bound R: in 1, each step's memory plan (-remat-report) has an
   arena of at most R times the most bytes its buffers hold live at once (the
   zoo's blocks: 1.05, issue 17).

6. With --without-checkpointing: in 1, the model's own checkpointing
   (transformers' gradient_checkpointing_enable, timm's
   set_grad_checkpointing, ...) changes no value: the step exported with
   the factory's checkpoint=False has no segments, the same arguments, and
   with dropout on the same outputs, bit for bit, as the checkpointed
   step's run without rematerialization.

Usage: check_torch.py REMAT_OPT REMAT_RUN FACTORY WORKDIR [--arena-bound R] [--peak]
                      [--float64 | --float64-only] [--without-checkpointing]
FACTORY as remat-torch-export takes it (remat_torch.zoo:mlp). Prints one line
per policy and check; exits 1 on the first failure.
"""
import json
import os
import subprocess
import sys

import numpy as np

remat_opt, remat_run, factory, workdir = sys.argv[1:5]
ARENA_BOUND = (float(sys.argv[sys.argv.index("--arena-bound") + 1])
               if "--arena-bound" in sys.argv else None)
PEAK = "--peak" in sys.argv
WITHOUT_CHECKPOINTING = "--without-checkpointing" in sys.argv
# --float64-only: the float64 step alone (1 and 3), for models whose
# float32 step another test checks.
FLOAT64_ONLY = "--float64-only" in sys.argv
FLOAT64 = "--float64" in sys.argv or FLOAT64_ONLY
name = factory.rpartition(":")[2]
TOLERANCE = 1e-4
# An output farther than TOLERANCE from eager float32 passes within this
# many times float32's spread around float64.
ILL_CONDITIONED = 4
FLOOR = 1e-2
# The float64 step against eager float64 (3).
TOLERANCE64 = 1e-9

# The rematerialization policies checked: the segments and selective policies
# recorded from torch.utils.checkpoint, early-stop and reentrant, then each
# policy of -remat-mark, which replaces the recorded marks. predict=false:
# the marking is the same without the peak -remat-mark would predict for its
# remark (a memory plan of the step, and of each segment's recomputation
# where the marking raises the peak: 2.2 s of ResNet-18's 2.4 s in
# -remat-mark), and these checks read the step's outputs, not the remark.
POLICIES = {
    "torch-checkpoint": ["-remat-checkpoint"],
    "torch-checkpoint-reentrant": ["-remat-checkpoint=early-stop=false"],
    "sequential": ["-remat-mark=policy=sequential segments=3 predict=false",
                   "-remat-checkpoint"],
    "sqrt": ["-remat-mark=policy=sqrt predict=false", "-remat-checkpoint"],
    # Saves the matmuls and convolutions (JAX's dots_saveable).
    "selective": ["-remat-mark=policy=selective save-ops=linalg.matmul,"
                  "linalg.conv_2d_nchw_fchw,linalg.conv_2d_ngchw_gfchw predict=false",
                  "-remat-checkpoint"],
    # Halfway between the smallest reachable and the unmarked peak, with 8
    # of the model's markings measured on their memory plans instead of 48:
    # whichever marking it chooses must give the same bits, PyTorch's values
    # and a static peak equal to the measured one, which is what these
    # checks read; how good the choice is, bench/pareto and test/Planning
    # check at the defaults. Each plan bufferizes the whole step: 48 took
    # 33 s of ViT's 137 s check.
    "budget": ["-remat-mark=policy=budget budget-between=0.5 plan-candidates=8",
               "-remat-checkpoint"],
}
# The sanitized tools' run (test/lit.cfg.py) checks the policies named in
# REMAT_CHECK_TORCH_POLICIES only: their passes' code under the sanitizers;
# the Release run checks every policy on the same steps.
if os.environ.get("REMAT_CHECK_TORCH_POLICIES"):
    _checked = os.environ["REMAT_CHECK_TORCH_POLICIES"].split(",")
    POLICIES = {policy: POLICIES[policy] for policy in POLICIES if policy in _checked}
# A step with a loop (a torch scan) is also checked with the loop
# checkpointed as a whole: its carries saved every k iterations, its blocks
# recomputed in the backward. The remark says the loop was rewritten; a
# step whose loop the pass leaves alone fails the check.
LOOP_POLICIES = {
    "checkpoint-loops": ["-remat-checkpoint-loops"],
}
LOOP_REWRITTEN = "saves its carries every"
AFTER = ["-remat-verify", "-cse", "-canonicalize"]
# Checked against PyTorch eager at dropout 0. Part 1 already proves every
# policy bit-identical to the run without rematerialization; these show that
# the step itself computes PyTorch's function, and that the budget planner's
# marking (the policy with the most moving parts) does at p=0 too. Each run is
# one JIT compilation of the whole network, most of these tests' time.
EAGER_POLICIES = ["none", "budget"]


def export(out, *extra, deferred_reference64=False):
    """remat-torch-export FACTORY -o OUT EXTRA..., in this process (see
    export_manifest for deferred_reference64)."""
    from remat_torch.__main__ import export_manifest
    try:
        return export_manifest(factory, out, *extra,
                               deferred_reference64=deferred_reference64)
    except RuntimeError as err:
        fail(str(err))


def opt(out, src, passes):
    r = subprocess.run([remat_opt, src, "-remat-thread-rng", *passes, "-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"remat-opt {' '.join(passes)} failed\n{r.stderr}")
    if any(p in passes for p in LOOP_POLICIES["checkpoint-loops"]) and \
            LOOP_REWRITTEN not in r.stderr:
        fail(f"-remat-checkpoint-loops left the scan alone\n{r.stderr}")
    return out


def report_totals(step):
    """-remat-report's totals of the step (its memory plan)."""
    r = subprocess.run([remat_opt, step, "-remat-report=format=json", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"remat-report {os.path.basename(step)} failed\n{r.stderr}")
    return json.loads(r.stdout)["functions"][0]["totals"]


def arena_ratio(step):
    """The step's planned arena over the most bytes its buffers hold live at
    once (-remat-report's plan)."""
    totals = report_totals(step)
    return totals["arena_bytes"] / max(1, totals["arena_max_live_bytes"])


def has_loops(step):
    with open(step) as f:
        return "scf.for" in f.read()


def run(step, inputs, outdir, outputs, stats=None):
    # -O0: on a whole network LLVM's -O3 compile, not the step, is most of
    # each run (ResNet-18: 12 s at -O3, 3 s at -O0); every run of one check
    # compiles at the same level, and the kernels (BLAS, convolutions) are
    # the runtime's either way.
    os.makedirs(outdir, exist_ok=True)
    cmd = [remat_run, step, "--opt-level", "0", "--inputs", ",".join(inputs),
           "--outputs", outdir] + (["--stats"] if stats is not None else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{os.path.basename(step)}: remat-run failed\n{r.stdout}{r.stderr}")
    if stats is not None:
        stats.update(json.loads(r.stdout.strip().splitlines()[-1]))
    return [os.path.join(outdir, f"out{i}.npy") for i in range(len(outputs))]


def fail(message):
    print(f"{name}: FAIL: {message}")
    sys.exit(1)


def label(tag):
    """How the lines name a step: "" for the float32 one, " float64"."""
    return f" {tag.strip('-')}" if tag else ""


def check_dropout(tag, *extra):
    """1. Dropout on: bit-identical with and without rematerialization. The
    run without is compiled and run once; each policy's outputs are
    compared with it byte for byte (bit-identical: NaNs and signed zeros
    included). `extra`: the exporter's further options (--float64)."""
    d = os.path.join(workdir, f"{name}-dropout{tag}")
    m = export(d, *extra)
    src = os.path.join(d, "step.mlir")
    base_step = opt(os.path.join(d, "base.mlir"), src, [])
    base = run(base_step, m["inputs"], os.path.join(d, "out-base"), m["outputs"])
    if WITHOUT_CHECKPOINTING and not tag:
        check_without_checkpointing(m, base)
    if ARENA_BOUND is not None:
        ratio = arena_ratio(base_step)
        if ratio > ARENA_BOUND:
            fail(f"no recomputation: arena {ratio:.3f}x the live bytes (bound {ARENA_BOUND:g})")
        print(f"{name} no recomputation: arena {ratio:.3f}x live")
    if has_loops(src):
        POLICIES.update(LOOP_POLICIES)
        for policy in LOOP_POLICIES:
            if policy not in EAGER_POLICIES:
                EAGER_POLICIES.append(policy)
    for policy in POLICIES:
        passes = POLICIES[policy]
        variant = opt(os.path.join(d, f"{policy}.mlir"), src, passes + AFTER)
        outs = run(variant, m["inputs"], os.path.join(d, f"out-{policy}"), m["outputs"])
        for out, got, want in zip(m["outputs"], outs, base):
            if not same_bits(np.load(got), np.load(want)):
                fail(f"{label(tag).strip()} {policy}: {out} differs from the run without "
                     f"rematerialization".strip())
        arena = ""
        if ARENA_BOUND is not None:
            ratio = arena_ratio(variant)
            if ratio > ARENA_BOUND:
                fail(f"{policy}: arena {ratio:.3f}x the live bytes (bound {ARENA_BOUND:g})")
            arena = f", arena {ratio:.3f}x live"
        print(f"{name}{label(tag)} {policy} dropout: {len(outs)} outputs bit-identical, "
              f"{m['segments']} segments{arena}")


def check_without_checkpointing(m, base):
    """6: the step exported with checkpoint=False against `base`, the
    outputs of the checkpointed export `m` without rematerialization."""
    d = os.path.join(workdir, f"{name}-no-checkpoint")
    plain = export(d, "--no-checkpoint")
    if plain["arguments"] != m["arguments"]:
        fail("the export without checkpointing has other arguments")
    if plain["segments"]:
        fail(f"the export without checkpointing has {plain['segments']} segments")
    step = opt(os.path.join(d, "base.mlir"), os.path.join(d, "step.mlir"), [])
    outs = run(step, m["inputs"], os.path.join(d, "out-base"), m["outputs"])
    for out, got, want in zip(m["outputs"], outs, base):
        if not same_bits(np.load(got), np.load(want)):
            fail(f"without checkpointing: {out} differs from the checkpointed step's")
    print(f"{name} without checkpointing: {len(outs)} outputs bit-identical, "
          f"{plain['segments']} segments (checkpointed: {m['segments']})")


def same_bits(got, want):
    """Equal dtype, shape and bytes (NaNs and signed zeros included)."""
    return got.dtype == want.dtype and got.shape == want.shape and \
        got.tobytes() == want.tobytes()


def scales(refs):
    """Each output's scale: its own maximum magnitude, or for a gradient at
    least FLOOR of the step's largest gradient."""
    floor = FLOOR * max(float(np.max(np.abs(r))) for r in refs[1:])
    return [max(float(np.max(np.abs(ref))), floor if i > 0 else 0.0, 1e-30)
            for i, ref in enumerate(refs)]


def relative_errors(values, refs):
    """max |value - ref| over the ref's scale, per output."""
    return [float(np.max(np.abs(value.astype(np.float64) - ref))) / scale
            for value, ref, scale in zip(values, refs, scales(refs))]


def run_eager_policies(tag, *extra):
    """Exports the step at dropout 0 with PyTorch eager's reference, runs it
    without rematerialization and under EAGER_POLICIES (with --peak, its
    static peak against the measured one); yields (policy, the manifest,
    the outputs, their relative errors from the reference, and a function
    that adds the float64 reference to the manifest, computed only when
    called: None for a float64 step, its own reference)."""
    d = os.path.join(workdir, f"{name}-p0{tag}")
    m, add_reference64 = export(d, "--dropout", "0", "--reference", *extra,
                                deferred_reference64=True)
    src = os.path.join(d, "step.mlir")
    refs = [np.load(p) for p in m["reference"]]
    for policy in EAGER_POLICIES:
        passes = [] if policy == "none" else POLICIES[policy]
        step = opt(os.path.join(d, f"{policy}.mlir"), src, passes + (AFTER if passes else []))
        stats = {} if PEAK else None
        outs = run(step, m["inputs"], os.path.join(d, f"out-{policy}"), m["outputs"], stats)
        if PEAK:
            static = report_totals(step)["static_peak_bytes"]
            if static != stats["peak_bytes"]:
                fail(f"{label(tag).strip()} {policy}: static peak {static} bytes, measured "
                     f"{stats['peak_bytes']}".strip())
            print(f"{name}{label(tag)} {policy}: static peak == measured peak ({static} bytes)")
        got = [np.load(p) for p in outs]
        for out, value, ref in zip(m["outputs"], got, refs):
            if value.shape != ref.shape or value.dtype != ref.dtype:
                fail(f"{label(tag).strip()} {policy}: {out} is {value.dtype} {value.shape}, "
                     f"torch {ref.dtype} {ref.shape}".strip())
        yield policy, m, got, relative_errors(got, refs), add_reference64


def check_float32():
    """2. Dropout 0: against PyTorch eager float32, then float64 where
    float32 is farther (see the module's docstring). Returns, per policy,
    the outputs neither decides: {policy: [(output, detail)]}."""
    undecided = {}
    refs64 = spread64 = None
    for policy, m, got, errors, add_reference64 in run_eager_policies(""):
        # The float64 reference, made the first time an output is farther
        # than TOLERANCE from eager float32 (most models need none of it).
        if refs64 is None and any(rel > TOLERANCE for rel in errors):
            refs = [np.load(p) for p in m["reference"]]
            refs64 = [np.load(p) for p in m["reference64"]] if add_reference64() else []
            # float32's spread around float64 per output (relative): eager
            # float32's distance, or the Monte Carlo runs' where they moved
            # farther.
            if refs64:
                spread64 = [max(eager, noise / scale) for eager, noise, scale in
                            zip(relative_errors(refs, refs64),
                                m.get("noise64", [0.0] * len(refs64)), scales(refs64))]
        errors64 = relative_errors(got, refs64) if refs64 else None
        judged64, left = 0, []
        for i, (out, rel) in enumerate(zip(m["outputs"], errors)):
            if rel <= TOLERANCE:
                continue
            if errors64 and (errors64[i] <= TOLERANCE or
                             errors64[i] <= ILL_CONDITIONED * spread64[i]):
                judged64 += 1
                continue
            detail = (f" (from float64: remat {errors64[i]:.2e}, float32's spread "
                      f"{spread64[i]:.2e})" if errors64 else "")
            message = f"{policy}: {out} differs from torch eager by {rel:.2e} relative{detail}"
            if not errors64:
                fail(message)
            left.append((out, message))
        undecided[policy] = left
        worst = max(((rel, out) for rel, out in zip(errors, m["outputs"]) if rel <= TOLERANCE),
                    default=(0.0, "none"))
        note = (f"; {judged64} more than {TOLERANCE:g} from eager float32, within "
                f"{TOLERANCE:g} of float64 or {ILL_CONDITIONED}x float32's spread"
                if judged64 else "")
        note += f"; {len(left)} left to the float64 step" if left else ""
        print(f"{name} {policy} vs torch eager: {len(errors) - judged64 - len(left)} outputs "
              f"within {TOLERANCE:g} relative (worst {worst[0]:.1e}, {worst[1]}){note}")
    return undecided


def decomposed_reference64(outputs):
    """PyTorch's own run of the step the exporter maps, in float64: the model
    through torch.compile with AOTAutograd and the core ATen decompositions
    the exporter traces with, each graph run by PyTorch's kernels, without
    the model's checkpoints where its factory can leave them out (they do
    not change the values). Its loss and gradients, in the order of
    `outputs`; None, with the reason printed, when PyTorch cannot run it."""
    import inspect
    import torch
    from functorch.compile import make_boxed_func
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd
    from remat_torch.__main__ import call_factory, load_factory, to_float64
    fn = load_factory(factory)
    model, inputs = call_factory(fn, 0.0, False if "checkpoint" in
                                 inspect.signature(fn).parameters else None)
    model, inputs = to_float64(model.train(), inputs)
    boxed = lambda gm, example: make_boxed_func(gm)  # noqa: E731
    backend = aot_autograd(fw_compiler=boxed, bw_compiler=boxed,
                           decompositions=core_aten_decompositions())
    torch._dynamo.reset()
    try:
        loss = torch.compile(model, backend=backend, fullgraph=True)(*inputs)
        loss.backward()
    except RuntimeError as err:
        print(f"{name}: no decomposed float64 reference: {str(err).splitlines()[0]}")
        return None
    params = dict(model.named_parameters())
    return [loss.detach().numpy()] + [params[n].grad.numpy() for n in outputs[1:]]


def check_float64(undecided):
    """3. The float64 step (remat-torch-export --float64) at dropout 0
    against PyTorch eager float64, within TOLERANCE64 of each output's
    scale under every policy of EAGER_POLICIES. An output float32 left
    undecided passes here or fails with both distances. Where PyTorch's
    own core ATen decomposition of an op, which the exporter maps, computes
    a float64 result farther than that from its eager kernel, an output
    passes within TOLERANCE64 of PyTorch's decomposed step (run by PyTorch
    in float64) and as close to eager float64 as that step is."""
    decomposed = None
    for policy, m, got, errors, _ in run_eager_policies("-float64", "--float64"):
        failed = [(rel, out) for rel, out in zip(errors, m["outputs"]) if rel > TOLERANCE64]
        kernels = ""
        if failed:
            if decomposed is None:
                decomposed = decomposed_reference64(m["outputs"]) or [
                    np.full(np.shape(np.load(p)), np.nan) for p in m["reference"]]
                refs = [np.load(p) for p in m["reference"]]
                gap = relative_errors(decomposed, refs)
            from_decomposed = relative_errors(got, decomposed)
            explained = [i for i, out in enumerate(m["outputs"]) if errors[i] > TOLERANCE64
                         and from_decomposed[i] <= TOLERANCE64
                         and errors[i] <= gap[i] + TOLERANCE64]
            failed = [(errors[i], out) for i, out in enumerate(m["outputs"])
                      if errors[i] > TOLERANCE64 and i not in explained]
            if explained:
                kernels = (f"; {len(explained)} more within {TOLERANCE64:g} of PyTorch's "
                           f"decomposed step (up to {max(from_decomposed[i] for i in explained):.1e}), "
                           f"itself up to {max(gap[i] for i in explained):.1e} from eager")
        if failed:
            rel, out = max(failed)
            before = dict(undecided.get(policy, []))
            detail = f"{before[out]}; " if out in before else ""
            fail(f"{detail}float64 {policy}: {out} differs from torch eager float64 by "
                 f"{rel:.2e} relative")
        within = [(rel, out) for rel, out in zip(errors, m["outputs"]) if rel <= TOLERANCE64]
        worst = max(within)
        left = len(undecided.get(policy, []))
        note = kernels + (f"; decides the {left} float32 left undecided" if left else "")
        print(f"{name} float64 {policy} vs torch eager float64: {len(within)} outputs within "
              f"{TOLERANCE64:g} relative (worst {worst[0]:.1e}, {worst[1]}){note}")


undecided = {}
if not FLOAT64_ONLY:
    check_dropout("")
    undecided = check_float32()
if FLOAT64 or any(undecided.values()):
    if FLOAT64:
        check_dropout("-float64", "--float64")
    check_float64(undecided)
