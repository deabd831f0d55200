"""Runs the scanned layer of scan-mlp-step.mlir on random inputs and checks
its outputs against numpy: h_n after n layers h <- tanh(h W[i]), and the
gradients of x and of every W[i] for the cotangent dy of h_n, computed in
float64 by the same chain rule unrolled.

Usage: check_scan_mlp.py REMAT_RUN STEP.mlir WORKDIR [--tolerance T]
"""
import argparse
import os
import subprocess
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("remat_run")
parser.add_argument("step")
parser.add_argument("workdir")
parser.add_argument("--tolerance", type=float, default=1e-5)
args = parser.parse_args()

rng = np.random.default_rng(7)
x = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
w = rng.uniform(-1, 1, (6, 8, 8)).astype(np.float32)
dy = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
os.makedirs(args.workdir, exist_ok=True)
paths = []
for name, value in (("x", x), ("w", w), ("dy", dy)):
    paths.append(os.path.join(args.workdir, name + ".npy"))
    np.save(paths[-1], value)
outdir = os.path.join(args.workdir, "out")
subprocess.run([args.remat_run, args.step, "--inputs", ",".join(paths),
                "--outputs", outdir], check=True)

# The reference, unrolled: the forward keeps every layer's input and output.
h = x.astype(np.float64)
inputs, outputs = [], []
for i in range(w.shape[0]):
    inputs.append(h)
    h = np.tanh(h @ w[i])
    outputs.append(h)
g = dy.astype(np.float64)
dw = np.zeros(w.shape)
for i in reversed(range(w.shape[0])):
    dz = g * (1 - outputs[i] ** 2)
    dw[i] = inputs[i].T @ dz
    g = dz @ w[i].T

failed = False
for k, expected in enumerate((h, g, dw)):
    got = np.load(os.path.join(outdir, "out%d.npy" % k))
    diff = float(np.max(np.abs(got - expected)))
    ok = got.shape == expected.shape and diff <= args.tolerance
    failed |= not ok
    print("out%d: shape %s, max_abs_diff vs numpy %s" %
          (k, "x".join(map(str, got.shape)), "ok" if ok else "%g FAIL" % diff))
sys.exit(1 if failed else 0)
