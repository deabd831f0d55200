#!/usr/bin/env python3
"""bench/pareto --real: remat's front at real size next to PyTorch's points.

Per model of python/remat_torch/zoo.py's REAL_SIZE (GPT-2 small at batch 4 x
512, ResNet-50 at batch 32 x 224; --small: the sizes bench/peers runs them
at), on this machine's CPU, at --threads threads on both sides, dropout
--dropout (0 by default, so that PyTorch's min-cut rows, which recompute
random ops in the backward, are valid steps):

PyTorch's points (peak: the CPU allocator's, from torch.profiler's memory
events, as bench/peers measures it; ms: the fastest of --repeat steps
after a warm-up, as for remat's points below):
  torch eager         no checkpointing
  torch checkpoint    the model's own torch.utils.checkpoint (GPT-2: per
                      layer, transformers' own; ResNet-50: its four stages)
  torch SAC dots      the same checkpoints, selective: the matmuls' and
                      convolutions' results saved (zoo.save_dots, JAX's
                      dots_saveable), everything else recomputed
  torch min-cut B     torch.compile (AOTAutograd, the min-cut partitioner at
                      activation_memory_budget B, graphs run op by op) for B
                      in --torch-budgets
remat's points (the step exported by remat-torch-export, -remat-thread-rng,
then the row's passes, -remat-verify, -cse, -canonicalize; peak: remat-run
--stats' counting allocator, checked against -remat-report's static peak;
recompute GFLOP: -remat-report's; ms: remat-run's fastest of --repeat,
min_wall_ms: on a shared machine identical steps vary by up to 15% from
one run to the next, and the fastest is the one its other work disturbed
least, on both sides alike):
  remat none, remat checkpoint (the model's checkpoints), remat SAC dots
  (the SAC model's export: its policy's saved ops), remat sqrt, remat budget
  B for B in --budgets (-remat-mark budget-between), remat chunked (the
  step with -remat-chunk-rows at --chunk-rows: the logits, their loss and
  gradients in chunks of rows), remat chunked checkpoint and remat chunked
  budget B (chunked before -remat-mark, so the budget measures the chunked
  step), and, for each PyTorch point, remat budget at that point's peak
  (-remat-mark budget-bytes) and remat chunked budget at it (the chunked
  step's plan within that peak).

The front: a PyTorch point is covered when some remat point has a peak at or
below its peak and a time at or below its time; the bench prints, for each
PyTorch point, the remat point that covers it (the fastest of those at or
below its peak), or the lowest remat peak and that point's time ratio when
none does. Exit 1 when a point with correct gradients is not covered.

Not a test: it prints what it measures here and now.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import torch  # noqa: F401
except ImportError:  # re-run in the PyTorch venv of scripts/torch-venv
    python = subprocess.run([os.path.join(root, "scripts", "torch-venv")], check=True,
                            capture_output=True, text=True).stdout.strip()
    os.execv(python, [python] + sys.argv)

sys.path.insert(0, os.path.join(root, "python"))
import torch  # noqa: E402
from remat_torch import zoo  # noqa: E402
from remat_torch.__main__ import export  # noqa: E402
from remat_torch.partitioner import profiled_peak  # noqa: E402

sys.path.insert(0, os.path.join(root, "bench"))
from benchlib import grad_error, grads, planner  # noqa: E402

parser = argparse.ArgumentParser(prog="bench/pareto --real")
parser.add_argument("--real", nargs="?", default="gpt2_small,resnet50",
                    const="gpt2_small,resnet50",
                    help="comma-separated REAL_SIZE models")
parser.add_argument("--small", action="store_true",
                    help="the models at bench/peers' sizes (zoo.BENCH_SIZES)")
parser.add_argument("--threads", type=int, default=os.cpu_count())
parser.add_argument("--repeat", type=int, default=3)
parser.add_argument("--dropout", type=float, default=0.0)
parser.add_argument("--budgets", default="0,0.5")
parser.add_argument("--torch-budgets", default="0.5")
parser.add_argument("--chunk-rows", type=int, default=256,
                    help="rows per chunk of the chunked points (-remat-chunk-rows); "
                         "0 leaves them out")
parser.add_argument("--build", default=os.path.join(root, "build"))
parser.add_argument("--work", help="keep exports here and reuse them")
args = parser.parse_args()
opt = os.path.join(args.build, "bin", "remat-opt")
run = os.path.join(args.build, "bin", "remat-run")
work = args.work or tempfile.mkdtemp(prefix="remat-pareto-real-")
os.makedirs(work, exist_ok=True)
torch.set_num_threads(args.threads)
MB = 1 << 20
GRAD_TOLERANCE = 1e-4


def model_kwargs(name):
    factory = zoo.REAL_SIZE[name]
    kw = dict(zoo.BENCH_SIZES[name]) if args.small else {}
    kw["dropout"] = args.dropout
    return factory, kw


def torch_point(model, inputs, fn, reference):
    """(peak bytes, fastest ms, largest gradient error relative to each
    parameter's largest reference entry)."""
    params = list(model.parameters())

    def step():
        for p in params:
            p.grad = None
        fn(*inputs).backward()
    step()  # warm up (and compile)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    error = grad_error(grads(model, inputs, fn), reference)
    gc.collect()
    return profiled_peak(step), min(times), error


def torch_points(name):
    factory, kw = model_kwargs(name)
    model, inputs = factory(checkpoint=False, **kw)
    reference = grads(model, inputs, model)
    points = []
    for label, build in (
            ("torch eager", lambda: factory(checkpoint=False, **kw)),
            ("torch checkpoint", lambda: factory(checkpoint=True, **kw)),
            ("torch SAC dots", lambda: factory(checkpoint=True, policy=zoo.save_dots, **kw))):
        model, inputs = build()
        points.append((label,) + torch_point(model, inputs, model, reference))
    for b in (float(b) for b in args.torch_budgets.split(",") if b):
        model, inputs = factory(checkpoint=False, **kw)
        label = f"torch min-cut {b:g}"
        try:
            compiled = planner(model, b, "aot_eager")
            points.append((label,) + torch_point(model, inputs, compiled,
                                                 reference))
        except Exception as err:  # PyTorch's partition can fail (ResNet below 1)
            print(f"{name}: {label}: n/a: {type(err).__name__}: "
                  f"{str(err).splitlines()[0][:80] if str(err) else ''}", file=sys.stderr)
    return points


def exported(name, policy):
    """The step of the model with its own checkpoints (selective under
    `policy`): (step path, input paths), exported once into the work dir."""
    d = os.path.join(work, f"{name}-{'sac' if policy else 'ckpt'}"
                     f"{'-small' if args.small else ''}")
    manifest = os.path.join(d, "manifest.json")
    if not os.path.exists(manifest):
        factory, kw = model_kwargs(name)
        model, inputs = factory(checkpoint=True, policy=policy, **kw)
        export(model, inputs, d)
    with open(manifest) as f:
        return os.path.join(d, "step.mlir"), json.load(f)["inputs"]


measured = {}  # the text of a prepared step -> its point (a budget at or above
# the unmarked peak marks nothing: the same step, run once)


def remat_point(step, inputs, passes, tag):
    path = f"{os.path.splitext(step)[0]}-{tag}.mlir"
    r = subprocess.run([opt, step, "-remat-thread-rng", *passes, "-remat-verify", "-cse",
                        "-canonicalize", "-o", path], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip().splitlines()[0][:100] if r.stderr.strip() else "failed"
    with open(path) as f:
        text = f.read()
    if text in measured:
        return measured[text], None
    totals = json.loads(subprocess.run(
        [opt, path, "-remat-report=format=json", "-o", os.devnull], check=True,
        capture_output=True, text=True).stdout)["functions"][0]["totals"]
    r = subprocess.run([run, path, "--inputs", ",".join(inputs), "--stats", "--repeat",
                        str(args.repeat), "--threads", str(args.threads)],
                       check=True, capture_output=True, text=True)
    stats = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][0])
    if stats["peak_bytes"] != totals["static_peak_bytes"]:
        print(f"warning: {path}: static peak {totals['static_peak_bytes']} bytes, "
              f"measured {stats['peak_bytes']}", file=sys.stderr)
    measured[text] = (stats["peak_bytes"], stats["min_wall_ms"], totals["recompute_flops"])
    return measured[text], None


def remat_points(name, torch_rows):
    step, inputs = exported(name, None)
    sac_step, sac_inputs = exported(name, zoo.save_dots)
    rows = [("remat none", step, inputs, [], "none"),
            ("remat checkpoint", step, inputs, ["-remat-checkpoint"], "ckpt"),
            ("remat SAC dots", sac_step, sac_inputs, ["-remat-checkpoint"], "sac"),
            ("remat sqrt", step, inputs,
             ["-remat-mark=policy=sqrt", "-remat-checkpoint"], "sqrt")]
    for b in (float(b) for b in args.budgets.split(",") if b):
        rows.append((f"remat budget {b:g}", step, inputs,
                     [f"-remat-mark=policy=budget budget-between={b:g}",
                      "-remat-checkpoint"], f"between-{b:g}"))
    chunk = [f"-remat-chunk-rows=chunk-rows={args.chunk_rows}"] if args.chunk_rows else None
    if chunk:
        rows.append(("remat chunked", step, inputs, chunk, "chunked"))
        rows.append(("remat chunked checkpoint", step, inputs,
                     ["-remat-checkpoint"] + chunk, "chunked-ckpt"))
        for b in (float(b) for b in args.budgets.split(",") if b):
            rows.append((f"remat chunked budget {b:g}", step, inputs,
                         chunk + [f"-remat-mark=policy=budget budget-between={b:g}",
                                  "-remat-checkpoint"], f"chunked-between-{b:g}"))
    for label, peak, _, _ in torch_rows:
        at = label[len('torch '):]
        budget = [f"-remat-mark=policy=budget budget-bytes={peak}", "-remat-checkpoint"]
        rows.append((f"remat budget at {at}", step, inputs, budget, f"bytes-{peak}"))
        if chunk:
            rows.append((f"remat chunked budget at {at}", step, inputs, chunk + budget,
                         f"chunked-bytes-{peak}"))
    points = []
    for label, s, i, passes, tag in rows:
        point, error = remat_point(s, i, passes, tag)
        points.append((label, point, error))
    return points


failed = False
for name in args.real.split(","):
    if name not in zoo.REAL_SIZE:
        parser.error(f"{name} is not one of {', '.join(zoo.REAL_SIZE)}")
    torch_rows = torch_points(name)
    remat_rows = remat_points(name, torch_rows)
    size = zoo.BENCH_SIZES[name] if args.small else "real size"
    print(f"\n{name} ({size}), {args.threads} thread(s), dropout {args.dropout:g}")
    print(f"{'run':<34} {'peak MB':>9} {'ms':>9} {'recompute GFLOP':>16}  gradients")
    for label, peak, ms, error in torch_rows:
        verdict = f"{'ok' if error <= GRAD_TOLERANCE else 'WRONG'} ({error:.1e})"
        print(f"{label:<34} {peak / MB:>9.1f} {ms:>9.0f} {'-':>16}  {verdict}")
    ours = []
    for label, point, error in remat_rows:
        if point is None:
            print(f"{label:<34} n/a: {error}")
            continue
        peak, ms, flops = point
        ours.append((label, peak, ms))
        print(f"{label:<34} {peak / MB:>9.1f} {ms:>9.0f} {flops / 1e9:>16.1f}")
    print()
    lowest = min(ours, key=lambda o: o[1])
    for label, peak, ms, error in torch_rows:
        print(f"{label:<20} peak {peak / MB:.1f} MB: lowest remat {lowest[1] / MB:.1f} MB "
              f"({lowest[0]}, x{lowest[1] / peak:.2f})")
    for label, peak, ms, error in torch_rows:
        below = [o for o in ours if o[1] <= peak]
        covering = min((o for o in below if o[2] <= ms), key=lambda o: o[2], default=None)
        if covering:
            print(f"{label:<20} covered by {covering[0]} ({covering[1] / MB:.1f} MB, "
                  f"x{covering[2] / ms:.2f} time)")
            continue
        valid = error <= GRAD_TOLERANCE
        failed |= valid
        fastest = min(below, key=lambda o: o[2], default=None)
        print(f"{label:<20} NOT covered: " + (
            f"fastest remat at or below its peak {fastest[0]} at x{fastest[2] / ms:.2f} time"
            if fastest else f"lowest remat peak {lowest[1] / MB:.1f} MB ({lowest[0]})")
            + ("" if valid else " (its gradients are wrong: not a valid step)"))
sys.exit(1 if failed else 0)
