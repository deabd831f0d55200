"""Checks remat-run's outputs of philox.mlir against Philox4x32-10 written
here from the paper (Salmon et al., SC'11), independently of remat's C
runtime, after checking this implementation against Random123's published
known answer. Usage: check_philox.py OUTPUT_DIR SEED
"""
import sys

import numpy as np

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK, p1 & MASK, \
                         ((p0 >> 32) ^ c3 ^ k1) & MASK, p0 & MASK
        k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
    return [c0, c1, c2, c3]


assert philox4x32_10([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
                     [0xA4093822, 0x299F31D0]) == \
    [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1], "Philox known answer"


def uniform_f32(seed, offset, n):
    words = []
    for j in range(n):
        i = offset + j
        block = i >> 2
        words.append(philox4x32_10([block & MASK, block >> 32, 0, 0],
                                   [seed & MASK, seed >> 32])[i & 3])
    return (np.array(words, dtype=np.uint64) >> 8).astype(np.float32) * \
        np.float32(2.0 ** -24)


def to_bf16_bits(values):
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


out, seed = sys.argv[1], int(sys.argv[2], 0)
cases = [("out0.npy", 6, (3, 5), "f32"),
         ("out1.npy", 1001, (7,), "f16"),
         ("out2.npy", (1 << 34) + 6, (2, 3, 2), "bf16")]
for name, offset, shape, kind in cases:
    got = np.load(f"{out}/{name}")
    n = int(np.prod(shape))
    want = uniform_f32(seed, offset, n).reshape(shape)
    if kind == "f16":
        want = want.astype(np.float16)
    elif kind == "bf16":
        want = to_bf16_bits(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.dtype)
    assert got.tobytes() == want.tobytes(), f"{name}: bits differ\n{got}\n{want}"
    print(f"{name}: {n} {kind} values bit-identical to the reference")
