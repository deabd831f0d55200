"""Inputs and an explicit reference for scatter-add-rows-step.mlir, in plain
Python (no numpy): a float32 sum is the double sum rounded to float32, which
double rounding leaves exact for one addition.

  check_scatter_add_rows.py inputs DIR    writes values.npy, indices.npy and
                                          dest.npy: repeated indices, the
                                          skipped row 3, negative and
                                          out-of-range indices, terms whose
                                          sum depends on their order, signed
                                          zeros
  check_scatter_add_rows.py check DIR OUT exits 1 unless OUT/out0.npy and
                                          out1.npy hold, bit for bit, each
                                          element's terms added in position
                                          order in float32 (from dest, and
                                          from zeros skipping row 3)
"""
import ast
import os
import random
import struct
import sys
from array import array

ROWS, COLUMNS, POSITIONS, SKIP = 41, 67, 300, 3


def save(path, typecode, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, tuple(shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(array(typecode, data).tobytes())


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    size = struct.unpack("<H", raw[8:10])[0]
    header = ast.literal_eval(raw[10:10 + size].decode())
    return header, raw[10 + size:]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def make_inputs(d):
    rng = random.Random(46)
    indices = [rng.randint(-4, ROWS + 3) for _ in range(POSITIONS)]
    indices[::7] = [0] * len(indices[::7])          # one row many positions add to
    indices[3::11] = [SKIP] * len(indices[3::11])   # padding
    indices[5::13] = [-1] * len(indices[5::13])     # no row (not counted from the end)
    indices[6::17] = [ROWS] * len(indices[6::17])   # one past the last row
    indices[8] = 1 << 40
    values = []
    for p in range(POSITIONS):
        # Large terms that cancel: a sum in another order rounds differently.
        scale = 1e7 if p % 9 == 0 else 1.0
        for _ in range(COLUMNS):
            values.append(-0.0 if p % 23 == 10 else f32(rng.gauss(0, 1) * scale))
    dest = [-0.0 if r % 5 == 1 else f32(rng.gauss(0, 1))
            for r in range(ROWS) for _ in range(COLUMNS)]
    save(os.path.join(d, "values.npy"), "f", "<f4", (POSITIONS, COLUMNS), values)
    save(os.path.join(d, "indices.npy"), "q", "<i8", (POSITIONS,), indices)
    save(os.path.join(d, "dest.npy"), "f", "<f4", (ROWS, COLUMNS), dest)


def reference(values, indices, dest, skip):
    out = list(dest)
    for p, row in enumerate(indices):
        if 0 <= row < ROWS and row != skip:
            for j in range(COLUMNS):
                out[row * COLUMNS + j] = f32(out[row * COLUMNS + j] +
                                             values[p * COLUMNS + j])
    return array("f", out).tobytes()


def check(d, out):
    values = array("f", load(os.path.join(d, "values.npy"))[1])
    indices = array("q", load(os.path.join(d, "indices.npy"))[1])
    dest = array("f", load(os.path.join(d, "dest.npy"))[1])
    expected = [reference(values, indices, dest, None),
                reference(values, indices, [0.0] * len(dest), SKIP)]
    for i, want in enumerate(expected):
        header, got = load(os.path.join(out, f"out{i}.npy"))
        if header["descr"] != "<f4" or header["shape"] != (ROWS, COLUMNS) or got != want:
            sys.exit(f"out{i}: differs from the position-order reference")
    print(f"{len(expected)} outputs bit-identical to the position-order reference")


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        make_inputs(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
