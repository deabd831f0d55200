"""Writes the .npy files of remat-run-npy.test into the directory argv[1]:
well-formed ones in format versions 1, 2 and 3, and hostile ones byte by
byte (bad versions, truncations, bad dtypes, shapes and payloads)."""
import os
import struct
import sys

out = sys.argv[1]
MAGIC = b"\x93NUMPY"


def header(text, major=1, minor=0):
    body = text.encode("latin1")
    pad = (-(len(MAGIC) + 2 + (2 if major == 1 else 4) + len(body) + 1)) % 64
    body += b" " * pad + b"\n"
    length = struct.pack("<H" if major == 1 else "<I", len(body))
    return MAGIC + bytes([major, minor]) + length + body


def dictionary(descr="'<f4'", order="False", shape="(2, 3)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr, order, shape)


def write(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


floats = struct.pack("<6f", 0.5, -0.25, 1.0, 2.0, -3.0, 0.125)
bools = bytes([1, 0, 1])
for major in (1, 2, 3):
    write("x-v%d.npy" % major, header(dictionary(), major) + floats)
write("b.npy", header(dictionary("'|b1'", shape="(3,)")) + bools)

# Format versions around the supported ones.
write("v0.npy", header(dictionary(), 0) + floats)
write("v4.npy", header(dictionary(), 4) + floats)
write("v255.npy", MAGIC + bytes([255, 1]) + b"\x00" * 8)

# Truncations: in the version, in the header length, in the header.
write("magic-only.npy", MAGIC)
write("no-minor.npy", MAGIC + b"\x01")
write("v1-short-length.npy", MAGIC + b"\x01\x00\x76")
write("v2-short-length.npy", MAGIC + b"\x02\x00\x76\x00\x00")
write("short-header.npy", header(dictionary())[:30])
write("empty.npy", b"")

# Dtypes, order and shapes.
write("big-endian.npy", header(dictionary("'>f4'")) + floats)
write("no-size.npy", header(dictionary("'<f'")) + floats)
write("zero-size.npy", header(dictionary("'<f0'")) + floats)
write("native.npy", header(dictionary("'=f4'")) + floats)
write("f8.npy", header(dictionary("'<f8'")) + floats * 2)
write("fortran.npy", header(dictionary(order="True")) + floats)
write("bad-order.npy", header(dictionary(order="maybe")) + floats)
write("no-shape.npy", header("{'descr': '<f4', 'fortran_order': False, }") + floats)
write("word-shape.npy", header(dictionary(shape="(2, three)")) + floats)
write("bare-shape.npy", header(dictionary(shape="6")) + floats)
write("negative-shape.npy", header(dictionary(shape="(-2, -3)")) + floats)
write("overflow-elements.npy",
      header(dictionary(shape="(4294967296, 4294967296, 16)")) + floats)
write("overflow-bytes.npy",
      header(dictionary(shape="(2305843009213693952, 2)")) + floats)
write("transposed.npy", header(dictionary(shape="(3, 2)")) + floats)
write("flat.npy", header(dictionary(shape="(6,)")) + floats)

# Payloads: short, long, a boolean that is neither 0 nor 1.
write("short-data.npy", header(dictionary()) + floats[:20])
write("long-data.npy", header(dictionary()) + floats + b"\x00" * 4)
write("bool-2.npy", header(dictionary("'|b1'", shape="(3,)")) + bytes([1, 2, 0]))
write("bool-255.npy", header(dictionary("'|b1'", shape="(3,)")) + bytes([0, 0, 255]))
