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
   wrong mapping is off by far more: 1e-2 to 1.

3. With --peak: in 2, each step's static peak (-remat-report's memory plan)
   equals the peak the generated code's allocator measures (remat-run
   --stats), to the byte.

4. With --arena-bound R: in 1, each step's memory plan (-remat-report) has an
   arena of at most R times the most bytes its buffers hold live at once (the
   zoo's blocks: 1.05, issue 17).

Usage: check_torch.py REMAT_OPT REMAT_RUN FACTORY WORKDIR [--arena-bound R] [--peak]
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
name = factory.rpartition(":")[2]
TOLERANCE = 1e-4
# An output farther than TOLERANCE from eager float32 passes within this
# many times float32's spread around float64.
ILL_CONDITIONED = 4
FLOOR = 1e-2

# The rematerialization policies checked: the segments and selective policies
# recorded from torch.utils.checkpoint, early-stop and reentrant, then each
# policy of -remat-mark, which replaces the recorded marks.
POLICIES = {
    "torch-checkpoint": ["-remat-checkpoint"],
    "torch-checkpoint-reentrant": ["-remat-checkpoint=early-stop=false"],
    "sequential": ["-remat-mark=policy=sequential segments=3", "-remat-checkpoint"],
    "sqrt": ["-remat-mark=policy=sqrt", "-remat-checkpoint"],
    # Saves the matmuls and convolutions (JAX's dots_saveable).
    "selective": ["-remat-mark=policy=selective save-ops=linalg.matmul,"
                  "linalg.conv_2d_nchw_fchw,linalg.conv_2d_ngchw_gfchw", "-remat-checkpoint"],
    # Halfway between the smallest reachable and the unmarked peak.
    "budget": ["-remat-mark=policy=budget budget-between=0.5", "-remat-checkpoint"],
}
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


def export(out, *extra):
    """remat-torch-export FACTORY -o OUT EXTRA..., in this process."""
    from remat_torch.__main__ import export_manifest
    try:
        return export_manifest(factory, out, *extra)
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


# 1. Dropout on: bit-identical with and without rematerialization. The run
# without is compiled and run once; each policy's outputs are compared with
# it byte for byte (bit-identical: NaNs and signed zeros included).
d = os.path.join(workdir, f"{name}-dropout")
m = export(d)
src = os.path.join(d, "step.mlir")
base_step = opt(os.path.join(d, "base.mlir"), src, [])
base = run(base_step, m["inputs"], os.path.join(d, "out-base"), m["outputs"])
if ARENA_BOUND is not None:
    ratio = arena_ratio(base_step)
    if ratio > ARENA_BOUND:
        fail(f"no recomputation: arena {ratio:.3f}x the live bytes (bound {ARENA_BOUND:g})")
    print(f"{name} no recomputation: arena {ratio:.3f}x live")
if has_loops(src):
    POLICIES.update(LOOP_POLICIES)
    EAGER_POLICIES += list(LOOP_POLICIES)
for policy in POLICIES:
    passes = POLICIES[policy]
    variant = opt(os.path.join(d, f"{policy}.mlir"), src, passes + AFTER)
    outs = run(variant, m["inputs"], os.path.join(d, f"out-{policy}"), m["outputs"])
    for out, got, want in zip(m["outputs"], outs, base):
        got, want = np.load(got), np.load(want)
        if got.dtype != want.dtype or got.shape != want.shape or \
                got.tobytes() != want.tobytes():
            fail(f"{policy}: {out} differs from the run without rematerialization")
    arena = ""
    if ARENA_BOUND is not None:
        ratio = arena_ratio(variant)
        if ratio > ARENA_BOUND:
            fail(f"{policy}: arena {ratio:.3f}x the live bytes (bound {ARENA_BOUND:g})")
        arena = f", arena {ratio:.3f}x live"
    print(f"{name} {policy} dropout: {len(outs)} outputs bit-identical, "
          f"{m['segments']} segments{arena}")

# 2. Dropout 0: against PyTorch eager.
d = os.path.join(workdir, f"{name}-p0")
m = export(d, "--dropout", "0", "--reference")
src = os.path.join(d, "step.mlir")
refs = [np.load(p) for p in m["reference"]]
refs64 = [np.load(p) for p in m.get("reference64", [])]


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


# float32's spread around float64 per output (relative): eager float32's
# distance, or the Monte Carlo runs' where they moved farther.
spread64 = None
if refs64:
    spread64 = [max(eager, noise / scale) for eager, noise, scale in
                zip(relative_errors(refs, refs64), m.get("noise64", [0.0] * len(refs64)),
                    scales(refs64))]
for policy in EAGER_POLICIES:
    passes = [] if policy == "none" else POLICIES[policy]
    step = opt(os.path.join(d, f"{policy}.mlir"), src, passes + (AFTER if passes else []))
    stats = {} if PEAK else None
    outs = run(step, m["inputs"], os.path.join(d, f"out-{policy}"), m["outputs"], stats)
    if PEAK:
        static = report_totals(step)["static_peak_bytes"]
        if static != stats["peak_bytes"]:
            fail(f"{policy}: static peak {static} bytes, measured {stats['peak_bytes']}")
        print(f"{name} {policy}: static peak == measured peak ({static} bytes)")
    got = [np.load(p) for p in outs]
    for out, value, ref in zip(m["outputs"], got, refs):
        if value.shape != ref.shape:
            fail(f"{policy}: {out} has shape {value.shape}, torch {ref.shape}")
    errors = relative_errors(got, refs)
    errors64 = relative_errors(got, refs64) if refs64 else None
    judged64 = 0
    for i, (out, rel) in enumerate(zip(m["outputs"], errors)):
        if rel <= TOLERANCE:
            continue
        if errors64 and (errors64[i] <= TOLERANCE or
                         errors64[i] <= ILL_CONDITIONED * spread64[i]):
            judged64 += 1
            continue
        detail = (f" (from float64: remat {errors64[i]:.2e}, float32's spread "
                  f"{spread64[i]:.2e})" if errors64 else "")
        fail(f"{policy}: {out} differs from torch eager by {rel:.2e} relative{detail}")
    worst = max((rel, out) for rel, out in zip(errors, m["outputs"]) if rel <= TOLERANCE)
    note = (f"; {judged64} more than {TOLERANCE:g} from eager float32, within "
            f"{TOLERANCE:g} of float64 or {ILL_CONDITIONED}x float32's spread"
            if judged64 else "")
    print(f"{name} {policy} vs torch eager: {len(refs) - judged64} outputs within "
          f"{TOLERANCE:g} relative (worst {worst[0]:.1e}, {worst[1]}){note}")
