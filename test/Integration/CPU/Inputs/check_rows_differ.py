"""Checks that the rows of a 2-D float32 .npy output (one row per loop
iteration) are pairwise different and that each holds both zero and non-zero
values, so that every iteration drew its own dropout mask. Reads .npy
without numpy. Usage: check_rows_differ.py FILE.npy
"""
import ast
import struct
import sys


def read_npy_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", "not a .npy file"
    if data[6] == 1:
        (length,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    assert header["descr"] == "<f4", header
    assert not header["fortran_order"], header
    shape = header["shape"]
    count = 1
    for size in shape:
        count *= size
    body = data[start + length:]
    return shape, struct.unpack("<%df" % count, body[:4 * count])


path = sys.argv[1]
(rows, cols), values = read_npy_f32(path)
table = [values[r * cols:(r + 1) * cols] for r in range(rows)]
for r, row in enumerate(table):
    zeros = sum(1 for v in row if v == 0.0)
    print("row %d: %d of %d dropped" % (r, zeros, cols))
    if zeros in (0, cols):
        print("row %d: the mask keeps or drops everything" % r)
        sys.exit(1)
same = [(a, b) for a in range(rows) for b in range(a + 1, rows)
        if table[a] == table[b]]
for a, b in same:
    print("rows %d and %d are equal" % (a, b))
if same:
    sys.exit(1)
print("%s: %d rows, pairwise different" % (path.split("/")[-1], rows))
