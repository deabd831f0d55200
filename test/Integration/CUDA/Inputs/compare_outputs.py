"""Compares the .npy outputs of two remat-run --outputs directories: with
tolerance 0 every output must be bit-identical, else every float output must
agree within that relative tolerance (max |a - b| / max |b|, so that
elements near zero do not dominate).

Usage: compare_outputs.py DIR_A DIR_B TOLERANCE
"""
import os
import sys

import numpy

a_dir, b_dir, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
names = sorted(n for n in os.listdir(a_dir) if n.endswith(".npy"))
ok = bool(names)
for name in names:
    a = numpy.load(os.path.join(a_dir, name))
    b = numpy.load(os.path.join(b_dir, name))
    if a.tobytes() == b.tobytes():
        print(f"{name}: bit-identical")
        continue
    if tolerance == 0 or a.dtype.kind != "f":
        print(f"{name}: DIFFER")
        ok = False
        continue
    a64, b64 = a.astype(numpy.float64), b.astype(numpy.float64)
    scale = max(numpy.abs(b64).max(), numpy.finfo(numpy.float32).tiny)
    rel = numpy.abs(a64 - b64).max() / scale
    print(f"{name}: relative difference {rel:.2e}"
          f" {'within' if rel <= tolerance else 'ABOVE'} {tolerance:g}")
    ok &= rel <= tolerance
print("all outputs agree" if ok else "outputs DIFFER")
sys.exit(0 if ok else 1)
