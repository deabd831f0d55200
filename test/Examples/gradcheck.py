"""Checks a training step's gradients against central finite differences.

Usage: gradcheck.py REMAT_RUN STEP.mlir WORKDIR [--tolerance T] [--eps E]
           [--directions N]

The step returns the loss followed by the gradient of each parameter, and
takes the parameters among its arguments (the gradients' shapes say which:
the arguments after the inputs, in order; see python/remat_autodiff). For N
random directions v over all parameters at once it compares the directional
derivative <grad, v> with (L(p + e v) - L(p - e v)) / 2e. The loss must be a
deterministic function of the parameters, dropout included (fixed seed).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("remat_run")
parser.add_argument("step")
parser.add_argument("workdir")
parser.add_argument("--tolerance", type=float, default=1e-6)
parser.add_argument("--eps", type=float, default=1e-5)
parser.add_argument("--directions", type=int, default=3)
args = parser.parse_args()

text = open(args.step).read()
header = re.search(r"func\.func @step\((.*?)\)\s*->\s*\((.*?)\)\s*\{", text, re.S)
arg_decls = re.findall(r"(%\w+): (tensor<[^>]*>|i64)", header.group(1))
result_types = re.findall(r"tensor<[^>]*>", header.group(2))


def parse_type(t):
    if t == "i64":
        return (), np.int64
    body = t[len("tensor<"):-1].split("x")
    dtype = {"f32": np.float32, "f64": np.float64}[body[-1]]
    return tuple(int(d) for d in body[:-1]), dtype


args_spec = [(name, *parse_type(t)) for name, t in arg_decls]
grad_shapes = [parse_type(t)[0] for t in result_types[1:]]
# Parameters: the arguments whose shapes match the gradients, in order.
param_idx, g = [], 0
for i, (name, shape, dtype) in enumerate(args_spec):
    if g < len(grad_shapes) and shape == grad_shapes[g] and \
            name not in ("%x", "%target"):
        param_idx.append(i)
        g += 1
assert g == len(grad_shapes), "could not match gradients to arguments"

rng = np.random.default_rng(0)
values = []
for name, shape, dtype in args_spec:
    if dtype == np.int64:
        values.append(np.int64(1234))
    else:
        values.append((rng.standard_normal(shape) * 0.5).astype(dtype))
os.makedirs(args.workdir, exist_ok=True)


def run(vals, tag):
    paths = []
    for i, v in enumerate(vals):
        path = os.path.join(args.workdir, f"{tag}-in{i}.npy")
        np.save(path, v)
        paths.append(path)
    out = os.path.join(args.workdir, f"{tag}-out")
    subprocess.run([args.remat_run, args.step, "--inputs", ",".join(paths),
                    "--outputs", out], check=True)
    return [np.load(os.path.join(out, f"out{i}.npy"))
            for i in range(len(result_types))]


base = run(values, "base")
grads = base[1:]
worst = 0.0
for d in range(args.directions):
    direction = [rng.standard_normal(values[i].shape) for i in param_idx]
    analytic = sum(float(np.sum(gr.astype(np.float64) * v))
                   for gr, v in zip(grads, direction))
    plus, minus = list(values), list(values)
    for i, v in zip(param_idx, direction):
        plus[i] = (values[i] + args.eps * v).astype(values[i].dtype)
        minus[i] = (values[i] - args.eps * v).astype(values[i].dtype)
    lp = float(run(plus, f"p{d}")[0])
    lm = float(run(minus, f"m{d}")[0])
    numeric = (lp - lm) / (2 * args.eps)
    rel = abs(analytic - numeric) / max(abs(analytic), abs(numeric), 1e-12)
    worst = max(worst, rel)
    print(f"direction {d}: analytic {analytic:.10g} numeric {numeric:.10g} "
          f"relative error {rel:.3g}")
print(f"{len(param_idx)} parameters, worst relative error {worst:.3g}")
if worst > args.tolerance:
    sys.exit(f"gradient check failed: {worst:.3g} > {args.tolerance:g}")
print("gradient check passed")
