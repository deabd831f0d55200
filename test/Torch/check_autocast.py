"""Checks a mixed-precision (torch.autocast) training step exported by
remat-torch-export.

1. Dropout on: the step under -remat-checkpoint (the model's own
   torch.utils.checkpoint segments) and under the budget policy gives loss
   and gradients bit-identical to the unmarked step's (-remat-thread-rng
   only): Philox masks in a bfloat16 step, recomputed bit for bit.
2. Dropout 0: the unmarked step and the budget policy's match PyTorch's own
   autocast step (eager, on the same inputs) within TOLERANCE of each
   output's largest entry (max |remat - torch| / max |torch|): both round
   every 2-byte result, in different orders, so they agree to a few 2-byte
   roundings, not bit for bit. Each step's static peak (-remat-report's
   memory plan) equals the peak the generated code's allocator measures
   (remat-run --stats), to the byte.
   With --ill-conditioned, an output farther than TOLERANCE passes within
   SPREADS times PyTorch's own spread: the distance of its autocast step
   from its float32 step on that output (a model whose gradients move that
   far when only its input is rounded to bfloat16, as a randomly
   initialized ResNet's with batch norm do, cannot be matched closer by
   any step that rounds in another order: two such roundings of one
   float32 result, each its spread from it, can lie up to twice that
   apart); the line says how many did.
3. The unmarked step's static peak is at most RATIO times that of the same
   model's float32 step (F32FACTORY).

Usage: check_autocast.py REMAT_OPT REMAT_RUN FACTORY F32FACTORY WORKDIR
       [--ratio R] [--tolerance T] [--ill-conditioned]
Prints one line per check; exits 1 on the first failure.
"""
import json
import os
import subprocess
import sys

import numpy as np

remat_opt, remat_run, factory, f32_factory, workdir = sys.argv[1:6]
RATIO = float(sys.argv[sys.argv.index("--ratio") + 1]) if "--ratio" in sys.argv else 0.75
TOLERANCE = (float(sys.argv[sys.argv.index("--tolerance") + 1])
             if "--tolerance" in sys.argv else 5e-2)
ILL_CONDITIONED = "--ill-conditioned" in sys.argv
# How far apart two bfloat16 roundings of one float32 step may lie, in
# units of PyTorch autocast's distance from float32 (the triangle
# inequality's bound when remat's step is no farther from float32 than
# PyTorch's). On an AVX2 host (no AVX-512: PyTorch's other bfloat16
# kernels) ResNet-18's last convolution's gradient is 0.237 from
# PyTorch's autocast step, whose own spread there is 0.236, and remat's
# step 0.237 from float32.
SPREADS = 2.0
name = factory.rpartition(":")[2]
AFTER = ["-remat-verify", "-cse", "-canonicalize"]
BUDGET = ["-remat-mark=policy=budget budget-between=0.5", "-remat-checkpoint"]


def fail(message):
    print(f"{name}: FAIL: {message}")
    sys.exit(1)


def export(spec, out, *extra):
    """remat-torch-export SPEC -o OUT EXTRA..., in this process."""
    from remat_torch.__main__ import export_manifest
    try:
        return export_manifest(spec, out, *extra)
    except RuntimeError as err:
        fail(str(err))


def opt(out, src, passes):
    r = subprocess.run([remat_opt, src, "-remat-thread-rng", *passes, "-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"remat-opt {' '.join(passes)} failed\n{r.stderr}")
    return out


def static_peak(step):
    r = subprocess.run([remat_opt, step, "-remat-report=format=json", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"remat-report {os.path.basename(step)} failed\n{r.stderr}")
    return json.loads(r.stdout)["functions"][0]["totals"]["static_peak_bytes"]


def run(step, m, outdir):
    """Outputs and measured peak (-O0, as check_torch.py: the compile, not
    the step, is most of a run)."""
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([remat_run, step, "--opt-level", "0", "--inputs", ",".join(m["inputs"]),
                        "--outputs", outdir, "--stats"], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{os.path.basename(step)}: remat-run failed\n{r.stdout}{r.stderr}")
    stats = json.loads(r.stdout.strip().splitlines()[-1])
    outs = [np.load(os.path.join(outdir, f"out{i}.npy")) for i in range(len(m["outputs"]))]
    return outs, stats["peak_bytes"]


# 1. Dropout on: bit-identical under every policy.
d = os.path.join(workdir, f"{name}-dropout")
m = export(factory, d)
src = os.path.join(d, "step.mlir")
with open(src) as f:
    text = f.read()
if "bf16>" not in text and "f16>" not in text:
    fail("the exported step has no 2-byte tensor")
base, _ = run(opt(os.path.join(d, "base.mlir"), src, []), m, os.path.join(d, "out-base"))
policies = {"budget": BUDGET}
if m["segments"]:
    policies = {"torch-checkpoint": ["-remat-checkpoint"], **policies}
for policy, passes in policies.items():
    step = opt(os.path.join(d, f"{policy}.mlir"), src, passes + AFTER)
    outs, _ = run(step, m, os.path.join(d, f"out-{policy}"))
    for out, got, want in zip(m["outputs"], outs, base):
        if got.dtype != want.dtype or got.shape != want.shape or \
                got.tobytes() != want.tobytes():
            fail(f"{policy}: {out} differs from the unmarked step's")
    print(f"{name} {policy} dropout: {len(outs)} outputs bit-identical, "
          f"{m['segments']} segments")

# The float32 step (3) and PyTorch's float32 step on the same weights and
# inputs (2's spread).
d32 = os.path.join(workdir, f"{name}-f32")
m32 = export(f32_factory, d32, "--dropout", "0", "--reference", "--no-reference64")
refs32 = [np.load(p) for p in m32["reference"]]

# 2. Dropout 0: against PyTorch's autocast step; static peak == measured.
d = os.path.join(workdir, f"{name}-p0")
m = export(factory, d, "--dropout", "0", "--reference", "--no-reference64")
src = os.path.join(d, "step.mlir")
refs = [np.load(p) for p in m["reference"]]
peaks = {}
for policy, passes in {"none": [], "budget": BUDGET + AFTER}.items():
    step = opt(os.path.join(d, f"{policy}.mlir"), src, passes)
    outs, measured = run(step, m, os.path.join(d, f"out-{policy}"))
    static = static_peak(step)
    if static != measured:
        fail(f"{policy}: static peak {static} bytes, measured {measured}")
    peaks[policy] = static
    print(f"{name} {policy}: static peak == measured peak ({static} bytes)")
    errors, judged = [], 0
    for out, got, ref, ref32 in zip(m["outputs"], outs, refs, refs32):
        if got.shape != ref.shape:
            fail(f"{policy}: {out} has shape {got.shape}, torch {ref.shape}")
        scale = max(float(np.max(np.abs(ref))), 1e-30)
        error = float(np.max(np.abs(got.astype(np.float64) - ref))) / scale
        if error <= TOLERANCE:
            errors.append((error, out))
            continue
        spread = float(np.max(np.abs(ref.astype(np.float64) - ref32))) / scale
        if not ILL_CONDITIONED or error > SPREADS * spread:
            fail(f"{policy}: {out} differs from torch autocast by {error:.2e} of its "
                 f"largest entry (tolerance {TOLERANCE:g}; torch autocast is {spread:.2e} "
                 f"from torch float32)")
        judged += 1
    worst = max(errors)
    note = (f"; {judged} more than {TOLERANCE:g} from torch autocast, within {SPREADS:g}x "
            f"its own distance from torch float32 (ill-conditioned)" if judged else "")
    print(f"{name} {policy} vs torch autocast: {len(errors)} outputs within {TOLERANCE:g} "
          f"of their largest entry (worst {worst[0]:.1e}, {worst[1]}){note}")

# 3. The peak against the float32 step's.
f32 = static_peak(opt(os.path.join(d32, "none.mlir"), os.path.join(d32, "step.mlir"), []))
ratio = peaks["none"] / f32
if ratio > RATIO:
    fail(f"static peak {peaks['none']} bytes, {ratio:.3f}x the float32 step's {f32} "
         f"(bound {RATIO:g})")
print(f"{name}: static peak {ratio:.3f}x the float32 step's (bound {RATIO:g})")
