"""Checks the CPU lowering's rounding of float32 to bfloat16 and float16
(Inputs/half-rounding-step.mlir) against round to nearest, ties to even,
computed here from the values (not from the bits the lowering shifts).

  check_half_rounding.py inputs X.npy   writes the inputs: every bfloat16
                                        bit pattern with the low halves that
                                        make ties, the floats on either side
                                        of them and truncations; every
                                        float16 value, the ties halfway to
                                        the next one and the floats on
                                        either side; random float32 bits
  check_half_rounding.py check X.npy DIR
                                        exits 1 unless DIR's outputs are
                                        the nearest bfloat16 (NaN: 0x7fc0)
                                        and float16 (NaN: a NaN) of each
                                        input and of each op of the chains
                                        the step computes, rounded after
                                        every op; prints what it checked
"""
import sys

import numpy as np

COUNT = 720903


def make_inputs(path):
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    lows = np.array([0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff], np.uint32)
    bf16_edges = (high[:, None] | lows[None, :]).ravel()
    # float16 values (finite and not), the ties halfway to the next value
    # up in magnitude and the floats on either side of each tie.
    f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    finite = f16[np.isfinite(f16)].astype(np.float16)
    with np.errstate(over="ignore"):
        up = np.nextafter(finite, np.copysign(np.float16(np.inf), finite))
    tie = (finite.astype(np.float64) + up.astype(np.float64)) / 2
    tie = tie[np.isfinite(tie)].astype(np.float32)
    tie[np.abs(tie) == 0] = 0  # the tie above -0 and +0 is the same
    f16_edges = np.concatenate([f16, tie, np.nextafter(tie, np.float32(np.inf)),
                                np.nextafter(tie, np.float32(-np.inf))])
    # The tie between float16's largest finite value and infinity (65520).
    f16_edges = np.concatenate([f16_edges, np.float32([65520.0, -65520.0])])
    rest = COUNT - len(bf16_edges) - len(f16_edges)
    rng = np.random.RandomState(0)
    random = rng.randint(0, 1 << 32, size=rest, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bf16_edges.view(np.float32), f16_edges,
                        random.view(np.float32)]).astype(np.float32)
    assert len(x) == COUNT, len(x)
    np.save(path, x)


def nearest_bf16(x):
    """bfloat16 bits of float32 x, rounded to nearest even on the values:
    the two bfloat16 neighbours of x (its truncation and the next one up
    in magnitude, 2^128 past the largest finite value) compared in float64."""
    x = np.asarray(x, np.float32)
    low = x.view(np.uint32) & np.uint32(0xffff0000)
    value = np.abs(x.astype(np.float64))
    lower = np.abs(low.view(np.float32).astype(np.float64))
    with np.errstate(over="ignore"):
        upper = np.abs((low + np.uint32(0x10000)).view(np.float32).astype(np.float64))
    upper = np.where(np.isinf(upper) | ((low & np.uint32(0x7fffffff)) == 0x7f7f0000),
                     2.0 ** 128, upper)
    below, above = value - lower, upper - value
    odd = ((low >> np.uint32(16)) & np.uint32(1)) == 1
    round_up = (above < below) | ((above == below) & odd)
    result = np.where(round_up, low + np.uint32(0x10000), low) >> np.uint32(16)
    result = result.astype(np.uint16)
    # Past the largest finite value: an infinity of x's sign.
    result = np.where(np.isinf(x) | (round_up & (upper == 2.0 ** 128)),
                      np.where(np.signbit(x), np.uint16(0xff80), np.uint16(0x7f80)),
                      result)
    return np.where(np.isnan(x), np.uint16(0x7fc0), result).astype(np.uint16)


def widen_bf16(bits):
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def check(inputs, out_dir):
    x = np.load(inputs)
    failed = False
    np.seterr(all="ignore")

    def expect(index, name, got, want, nan_bits):
        nonlocal failed
        got = np.asarray(got)
        if nan_bits:
            differ = got.view(np.uint16) != want.view(np.uint16)
        else:
            differ = ~((got.view(np.uint16) == want.view(np.uint16)) |
                       (np.isnan(got) & np.isnan(want)))
        bad = np.flatnonzero(differ)
        if len(bad):
            i = bad[0]
            print(f"out{index} ({name}): {len(bad)} of {len(got)} differ; first at "
                  f"x = {x[i]!r} (bits 0x{x.view(np.uint32)[i]:08x}): got "
                  f"0x{got.view(np.uint16)[i]:04x}, want 0x{want.view(np.uint16)[i]:04x}")
            failed = True
        else:
            print(f"out{index} ({name}): {len(got)} values rounded to nearest even")

    out = [np.load(f"{out_dir}/out{i}.npy") for i in range(4)]
    a = nearest_bf16(x)
    expect(0, "bf16", out[0], a, True)
    h = x.astype(np.float16)
    expect(1, "f16", out[1], h, False)
    # The chains: y = x16 * x16, then y + x16, each op in float32 and
    # rounded before the next.
    wa = widen_bf16(a)
    product = nearest_bf16(wa * wa)
    expect(2, "bf16 x * x + x", out[2], nearest_bf16(widen_bf16(product) + wa), True)
    h32 = h.astype(np.float32)
    hp = (h32 * h32).astype(np.float16)
    expect(3, "f16 x * x + x", out[3], (hp.astype(np.float32) + h32).astype(np.float16),
           False)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        make_inputs(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
