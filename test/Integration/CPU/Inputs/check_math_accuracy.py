"""Checks remat-run's tanh, erf, erfc and exp (Inputs/math-step.mlir) against
Python's math module, evaluated in double precision.

  check_math_accuracy.py inputs X.npy        writes the inputs: a grid over
                                             [-12, 12], special values and
                                             normal samples
  check_math_accuracy.py check X.npy DIR ULPS
                                             exits 1 unless every output in DIR
                                             is within ULPS float32 ulps of the
                                             exact value (an ulp of the exact
                                             value, at least the smallest
                                             normal's) and NaN exactly where
                                             the exact value is; prints the
                                             largest error of each function
"""
import math
import sys

import numpy as np

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, -1e-30, 1e-6,
           -1e-6, 3e-4, 4e-4, 5e-4, 0.5, -0.5, 1.0, 2.0, 4.0, 7.99, 8.01, 9.0,
           10.0, -10.0, 20.0, -20.0]
COUNT = 4099


def make_inputs(path):
    grid = np.linspace(-12.0, 12.0, 4000, dtype=np.float32)
    rest = COUNT - len(grid) - len(SPECIAL)
    normal = np.random.RandomState(0).standard_normal(rest).astype(np.float32) * 3
    x = np.concatenate([grid, np.array(SPECIAL, np.float32), normal])
    np.save(path, x.astype(np.float32))


def exact(fn, v):
    return math.nan if math.isnan(v) else fn(v)


def check(inputs, out_dir, ulps):
    x = np.load(inputs).astype(np.float64)
    failed = False
    for i, (name, fn) in enumerate((("tanh", math.tanh), ("erf", math.erf),
                                    ("erfc", math.erfc), ("exp", math.exp))):
        y = np.load(f"{out_dir}/out{i}.npy").astype(np.float64)
        ref = np.array([exact(fn, v) for v in x])
        nan = np.isnan(ref)
        if not np.array_equal(np.isnan(y), nan):
            print(f"{name}: NaN where the exact value is not, or not where it is")
            failed = True
        ulp = np.maximum(np.spacing(np.abs(ref[~nan]).astype(np.float32)),
                         np.finfo(np.float32).tiny).astype(np.float64)
        with np.errstate(invalid="ignore"):
            err = np.where(y[~nan] == ref[~nan], 0.0,
                           np.abs(y[~nan] - ref[~nan]) / ulp)
        worst = int(np.argmax(err))
        print(f"{name}: largest error {err[worst]:.2f} ulp at x = {x[~nan][worst]:.9g}")
        if not err[worst] <= ulps:
            print(f"{name}: above {ulps} ulp")
            failed = True
    sys.exit(1 if failed else 0)


if sys.argv[1] == "inputs":
    make_inputs(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3], float(sys.argv[4]))
