"""Maps the ATen ops of an AOTAutograd joint graph to remat's IR contract.

Ops are emitted in the vocabulary python/remat_autodiff writes and remat's
CPU lowering runs: elementwise arith/math ops on tensors, linalg.matmul /
batch_matmul / transpose / broadcast / reduce / fill, tensor.empty / reshape /
extract_slice / insert_slice / concat, linalg.conv_2d_nchw_fchw and
linalg.generic (the convolution's backward), and remat.rng_uniform for
dropout. Each line keeps an
attribute placeholder that is filled in when the step is printed, so a
checkpoint region's `remat.segment` goes on every op of its ATen nodes and
`remat.policy = "save"` only on the op that defines a saved node's result.
"""

import math
import operator


class UnsupportedOp(Exception):
    """An ATen op (or a form of one) that the exporter does not map."""


def tensor_type(shape, dtype):
    if not shape:
        return f"tensor<{dtype}>"
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def flit(value):
    """An f32 literal that round-trips."""
    if math.isinf(value):
        return "0xFF800000" if value < 0 else "0x7F800000"
    return "%.9e" % value


class Value:
    def __init__(self, name, shape, dtype="f32"):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def type(self):
        if self.dtype == "i64" and self.shape is None:
            return "i64"
        return tensor_type(self.shape, self.dtype)

    @property
    def numel(self):
        return math.prod(self.shape)


def broadcast_shape(*shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        assert len(dims) <= 1, shapes
        out.append(dims.pop() if dims else 1)
    return tuple(out)


class Emitter:
    """Emits MLIR lines. `segment` and `policy` describe the ATen node being
    emitted; `render()` turns the placeholders into attribute dictionaries."""

    ATTRS = "\x00"  # placeholder of an op's attribute dictionary
    GENERIC_ATTRS = "\x01"  # the same as linalg.generic's `attrs = {...}`

    def __init__(self):
        self.forward = []   # [text, result name, segment]
        self.backward = []
        self.in_backward = False
        self.segment = None
        self.counter = 0
        self.saved_names = set()  # results that get remat.policy = "save"
        self.random_ops = 0

    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, text, result=None):
        seg = None if self.in_backward else self.segment
        (self.backward if self.in_backward else self.forward).append([text, result, seg])

    def render_line(self, line):
        text, result, seg = line
        attrs = []
        if seg is not None:
            attrs.append(f"remat.segment = {seg} : i64")
        if result is not None and result in self.saved_names and seg is not None:
            attrs.append('remat.policy = "save"')
        text = text.replace(self.GENERIC_ATTRS,
                            " attrs = {" + ", ".join(attrs) + "}" if attrs else "")
        return text.replace(self.ATTRS, " {" + ", ".join(attrs) + "}" if attrs else "")

    # -- Building blocks ------------------------------------------------------

    def new(self, shape, dtype="f32", hint="v"):
        return Value(self.fresh(hint), shape, dtype)

    def splat(self, value, shape, dtype="f32"):
        out = self.new(shape, dtype, "cst")
        lit = flit(value) if dtype == "f32" else str(int(value))
        self.emit(f"  {out.name} = arith.constant{self.ATTRS} dense<{lit}> : {out.type}",
                  out.name)
        return out

    def empty(self, shape, dtype="f32"):
        out = self.new(shape, dtype, "e")
        self.emit(f"  {out.name} = tensor.empty(){self.ATTRS} : {out.type}", out.name)
        return out

    def filled(self, shape, value):
        init = self.empty(shape)
        c = self.fresh("c")
        self.emit(f"  {c} = arith.constant{self.ATTRS} {flit(value)} : f32", c)
        out = self.new(shape, hint="f")
        self.emit(f"  {out.name} = linalg.fill{self.ATTRS} ins({c} : f32) outs({init.name} : "
                  f"{init.type}) -> {out.type}", out.name)
        return out

    def operand(self, x, shape):
        """A tensor of `shape` from a Value (broadcast) or a Python number."""
        if isinstance(x, Value):
            return self.broadcast_to(x, shape)
        if isinstance(x, bool):
            raise UnsupportedOp("a boolean scalar operand")
        return self.splat(float(x), shape)

    def reshape(self, a, shape):
        shape = tuple(shape)
        if a.shape == shape:
            return a
        assert math.prod(shape) == a.numel, (a.shape, shape)
        s = self.fresh("shape")
        dims = ", ".join(str(d) for d in shape)
        self.emit(f"  {s} = arith.constant{self.ATTRS} dense<[{dims}]> : "
                  f"tensor<{len(shape)}xi64>" if shape else
                  f"  {s} = arith.constant{self.ATTRS} dense<> : tensor<0xi64>", s)
        out = self.new(shape, a.dtype, "r")
        self.emit(f"  {out.name} = tensor.reshape {a.name}({s}){self.ATTRS} : ({a.type}, "
                  f"tensor<{len(shape)}xi64>) -> {out.type}", out.name)
        return out

    def broadcast_to(self, a, shape):
        shape = tuple(shape)
        if a.shape == shape:
            return a
        offset = len(shape) - len(a.shape)
        assert offset >= 0, (a.shape, shape)
        kept = [i for i, d in enumerate(a.shape) if d == shape[offset + i]]
        dims = [i for i in range(len(shape)) if i < offset or (i - offset) not in kept]
        src = self.reshape(a, [a.shape[i] for i in kept])
        init = self.empty(shape, a.dtype)
        out = self.new(shape, a.dtype, "b")
        self.emit(f"  {out.name} = linalg.broadcast ins({src.name} : {src.type}) outs("
                  f"{init.name} : {init.type}) dimensions = [{', '.join(map(str, dims))}]"
                  f"{self.ATTRS}", out.name)
        return out

    def binary(self, op, a, b, dtype=None):
        shapes = [x.shape for x in (a, b) if isinstance(x, Value)]
        shape = broadcast_shape(*shapes)
        a, b = self.operand(a, shape), self.operand(b, shape)
        out = self.new(shape, dtype or a.dtype)
        self.emit(f"  {out.name} = arith.{op} {a.name}, {b.name}{self.ATTRS} : {out.type}",
                  out.name)
        return out

    def unary(self, op, a):
        out = self.new(a.shape, a.dtype)
        self.emit(f"  {out.name} = {op} {a.name}{self.ATTRS} : {out.type}", out.name)
        return out

    def cmp(self, pred, a, b):
        shapes = [x.shape for x in (a, b) if isinstance(x, Value)]
        shape = broadcast_shape(*shapes)
        a, b = self.operand(a, shape), self.operand(b, shape)
        out = self.new(shape, "i1", "m")
        self.emit(f"  {out.name} = arith.cmpf {pred}, {a.name}, {b.name}{self.ATTRS} : "
                  f"{a.type}", out.name)
        return out

    def select(self, mask, a, b):
        shape = broadcast_shape(*[x.shape for x in (mask, a, b) if isinstance(x, Value)])
        mask = self.broadcast_to(mask, shape)
        a, b = self.operand(a, shape), self.operand(b, shape)
        out = self.new(shape)
        self.emit(f"  {out.name} = arith.select {mask.name}, {a.name}, {b.name}"
                  f"{self.ATTRS} : {mask.type}, {out.type}", out.name)
        return out

    def transpose(self, a, perm):
        perm = [p % len(a.shape) for p in perm]
        if perm == list(range(len(perm))):
            return a
        shape = [a.shape[p] for p in perm]
        init = self.empty(shape, a.dtype)
        out = self.new(shape, a.dtype, "t")
        self.emit(f"  {out.name} = linalg.transpose ins({a.name} : {a.type}) outs("
                  f"{init.name} : {init.type}) permutation = [{', '.join(map(str, perm))}]"
                  f"{self.ATTRS}", out.name)
        return out

    def matmul(self, a, b, op="matmul"):
        shape = a.shape[:-1] + b.shape[-1:]
        init = self.filled(shape, 0.0)
        out = self.new(shape, hint="mm")
        self.emit(f"  {out.name} = linalg.{op}{self.ATTRS} ins({a.name}, {b.name} : "
                  f"{a.type}, {b.type}) outs({init.name} : {init.type}) -> {out.type}",
                  out.name)
        return out

    def reduce(self, a, dims, kind="sum", keepdim=False):
        dims = sorted({d % len(a.shape) for d in dims}) if a.shape else []
        shape = [s for i, s in enumerate(a.shape) if i not in dims]
        if not dims:
            return a
        init = self.filled(shape, 0.0 if kind == "sum" else -math.inf)
        out = self.new(shape, hint="red")
        comb = "arith.addf" if kind == "sum" else "arith.maximumf"
        i, acc, s = self.fresh("in"), self.fresh("acc"), self.fresh("s")
        self.emit(f"  {out.name} = linalg.reduce ins({a.name} : {a.type}) outs({init.name} "
                  f": {init.type}) dimensions = [{', '.join(map(str, dims))}]{self.ATTRS}\n"
                  f"    ({i}: f32, {acc}: f32) {{\n"
                  f"      {s} = {comb} {i}, {acc} : f32\n"
                  f"      linalg.yield {s} : f32\n"
                  f"    }}", out.name)
        if keepdim:
            out = self.reshape(out, [1 if i in dims else d for i, d in enumerate(a.shape)])
        return out

    def extract_slice(self, a, dim, start, size):
        offsets = [0] * len(a.shape)
        offsets[dim] = start
        sizes = list(a.shape)
        sizes[dim] = size
        if sizes == list(a.shape):
            return a
        out = self.new(sizes, a.dtype, "sl")
        self.emit(f"  {out.name} = tensor.extract_slice {a.name}[{', '.join(map(str, offsets))}]"
                  f" [{', '.join(map(str, sizes))}] [{', '.join('1' for _ in sizes)}]"
                  f"{self.ATTRS} : {a.type} to {out.type}", out.name)
        return out

    def pad(self, a, pads):
        """Zero padding: `pads[i]` elements before and after dimension i
        (a zero fill with `a` inserted, which the CPU lowering bufferizes as
        an allocation, a fill and a copy)."""
        if not any(pads):
            return a
        shape = [d + 2 * p for d, p in zip(a.shape, pads)]
        dest = self.filled(shape, 0.0)
        out = self.new(shape, a.dtype, "pad")
        self.emit(f"  {out.name} = tensor.insert_slice {a.name} into {dest.name}"
                  f"[{', '.join(map(str, pads))}] [{', '.join(map(str, a.shape))}] "
                  f"[{', '.join('1' for _ in pads)}]{self.ATTRS} : {a.type} into "
                  f"{dest.type}", out.name)
        return out

    def conv2d(self, x, w):
        """linalg.conv_2d_nchw_fchw, stride and dilation 1, no padding:
        out[n, f, h, w] = sum_{c, i, j} x[n, c, h + i, w + j] * w[f, c, i, j]."""
        n, _, hp, wp = x.shape
        f, _, kh, kw = w.shape
        shape = [n, f, hp - kh + 1, wp - kw + 1]
        init = self.filled(shape, 0.0)
        out = self.new(shape, hint="conv")
        self.emit(f"  {out.name} = linalg.conv_2d_nchw_fchw{self.ATTRS} ins({x.name}, "
                  f"{w.name} : {x.type}, {w.type}) outs({init.name} : {init.type}) -> "
                  f"{out.type}", out.name)
        return out

    def generic(self, inputs, maps, shape, iterators, body, init=None, yields="{y}"):
        """linalg.generic over `inputs` with `maps` (affine expressions of
        d0...; the output's map last), `body` the payload on the block
        arguments {0}, {1}, ... (str.format fields; the output's last), with
        {y} and {t} fresh names, yielding `yields`."""
        dims = ", ".join(f"d{i}" for i in range(len(iterators)))
        init = init if init is not None else self.empty(shape)
        out = self.new(shape, hint="g")
        args = [self.fresh("a") for _ in range(len(inputs) + 1)]
        fields = dict(y=self.fresh("y"), t=self.fresh("t"))
        text = body.format(*args, **fields)
        result = yields.format(*args, **fields)
        maps_text = ", ".join(f"affine_map<({dims}) -> ({m})>" for m in maps)
        iters = ", ".join(f'"{t}"' for t in iterators)
        ins = (f" ins({', '.join(v.name for v in inputs)} : "
               f"{', '.join(v.type for v in inputs)})") if inputs else ""
        block = "".join(f"      {line}\n" for line in text.strip().splitlines())
        self.emit(f"  {out.name} = linalg.generic {{indexing_maps = [{maps_text}], "
                  f"iterator_types = [{iters}]}}{ins} outs({init.name} : {init.type})"
                  f"{self.GENERIC_ATTRS} {{\n"
                  f"    ^bb0({', '.join(f'{a}: f32' for a in args)}):\n{block}"
                  f"      linalg.yield {result} : f32\n"
                  f"    }} -> {out.type}", out.name)
        return out

    def concat(self, values, dim):
        if len(values) == 1:
            return values[0]
        shape = list(values[0].shape)
        shape[dim] = sum(v.shape[dim] for v in values)
        out = self.new(shape, hint="cat")
        self.emit(f"  {out.name} = tensor.concat dim({dim}) "
                  f"{', '.join(v.name for v in values)}{self.ATTRS} : "
                  f"({', '.join(v.type for v in values)}) -> {out.type}", out.name)
        return out

    def rng_uniform(self, shape):
        out = self.new(shape, hint="u")
        self.emit(f"  {out.name} = remat.rng_uniform{self.ATTRS} : {out.type}", out.name)
        self.random_ops += 1
        return out


# -- ATen ops ------------------------------------------------------------------

def _dims(dims, rank):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return [d % rank for d in dims]


def _sizes(sizes, a):
    sizes = list(sizes)
    if -1 in sizes:
        known = math.prod(d for d in sizes if d != -1)
        sizes[sizes.index(-1)] = a.numel // known
    return sizes


def _check_dtype(kwargs, what):
    import torch
    dtype = kwargs.get("dtype")
    if dtype not in (None, torch.float32):
        raise UnsupportedOp(f"{what} with dtype {dtype}")


def _layer_norm(e, x, normalized_shape, weight, bias, eps):
    axes = list(range(len(x.shape) - len(normalized_shape), len(x.shape)))
    n = math.prod(normalized_shape)
    mean = e.binary("mulf", e.reduce(x, axes, keepdim=True), 1.0 / n)
    centered = e.binary("subf", x, mean)
    var = e.binary("mulf", e.reduce(e.binary("mulf", centered, centered), axes,
                                    keepdim=True), 1.0 / n)
    rstd = e.unary("math.rsqrt", e.binary("addf", var, float(eps)))
    out = e.binary("mulf", centered, rstd)
    if weight is not None:
        out = e.binary("mulf", out, weight)
    if bias is not None:
        out = e.binary("addf", out, bias)
    return out, mean, rstd


def _softmax(e, x, dim):
    mx = e.reduce(x, [dim], "max", keepdim=True)
    ex = e.unary("math.exp", e.binary("subf", x, mx))
    return e.binary("divf", ex, e.reduce(ex, [dim], keepdim=True))


def _gelu(e, x, approximate="none"):
    if approximate != "tanh":
        raise UnsupportedOp(f"gelu with approximate='{approximate}' (only 'tanh')")
    cube = e.binary("mulf", x, e.binary("mulf", x, x))
    inner = e.binary("mulf", e.binary("addf", x, e.binary("mulf", cube, 0.044715)),
                     math.sqrt(2.0 / math.pi))
    return e.binary("mulf", e.binary("mulf", x, e.binary("addf", e.unary("math.tanh", inner),
                                                         1.0)), 0.5)


def _pow(e, a, exponent):
    if exponent == 2:
        return e.binary("mulf", a, a)
    if exponent == 1:
        return a
    return e.binary("powf", a, float(exponent))


def _dropout(e, x, p, train):
    if not train:
        return x, e.cmp("oge", x, x)  # eval: mask unused downstream
    u = e.rng_uniform(x.shape)
    keep = e.cmp("oge", u, float(p))
    scale = 1.0 / (1.0 - p) if p < 1 else 0.0
    return e.select(keep, e.binary("mulf", x, scale), 0.0), keep


def _add(e, a, b, alpha=1):
    if alpha != 1:
        b = e.binary("mulf", b, float(alpha))
    return e.binary("addf", a, b)


def _sub(e, a, b, alpha=1):
    if alpha != 1:
        b = e.binary("mulf", b, float(alpha))
    return e.binary("subf", a, b)


def _addmm(e, bias, a, b, beta=1, alpha=1):
    mm = e.matmul(a, b)
    if alpha != 1:
        mm = e.binary("mulf", mm, float(alpha))
    if beta != 1:
        bias = e.binary("mulf", bias, float(beta))
    return e.binary("addf", mm, bias)


def _slice(e, a, dim=0, start=None, end=None, step=1):
    if step != 1:
        raise UnsupportedOp("slice with a step other than 1")
    n = a.shape[dim % len(a.shape)]
    start = 0 if start is None else (start + n if start < 0 else min(start, n))
    end = n if end is None else (end + n if end < 0 else min(end, n))
    return e.extract_slice(a, dim % len(a.shape), start, end - start)


def _split(e, a, size, dim=0):
    dim %= len(a.shape)
    sizes = ([size] * (a.shape[dim] // size) + ([a.shape[dim] % size] if a.shape[dim] % size
                                                else [])) if isinstance(size, int) else size
    outs, start = [], 0
    for s in sizes:
        outs.append(e.extract_slice(a, dim, start, s))
        start += s
    return outs


def _sum(e, a, dims=None, keepdim=False, **kw):
    _check_dtype(kw, "sum")
    return e.reduce(a, _dims(dims, len(a.shape)), keepdim=keepdim)


def _mean(e, a, dims=None, keepdim=False, **kw):
    _check_dtype(kw, "mean")
    dims = _dims(dims, len(a.shape))
    n = math.prod(a.shape[d] for d in dims)
    return e.binary("mulf", e.reduce(a, dims, keepdim=keepdim), 1.0 / n)


def _to_copy(e, a, **kw):
    _check_dtype(kw, "_to_copy")
    if a.dtype == "i1" and "dtype" in kw:
        return e.select(a, 1.0, 0.0)  # bool -> float32 (a dropout mask)
    return a


def _full(e, size, value, **kw):
    _check_dtype(kw, "full")
    return e.splat(float(value), size)


def _like(value):
    def f(e, a, *args, **kw):
        _check_dtype(kw, "full_like")
        return e.splat(float(value if value is not None else args[0]), a.shape)
    return f


def _where(e, cond, a, b):
    return e.select(cond, a, b)


def _threshold_backward(e, grad, x, threshold):
    return e.select(e.cmp("ole", x, float(threshold)), 0.0, grad)


def _tanh_backward(e, grad, y):
    return e.binary("mulf", grad, e.binary("subf", 1.0, e.binary("mulf", y, y)))


def _expand(e, a, sizes, implicit=False):
    sizes = list(sizes)
    off = len(sizes) - len(a.shape)
    sizes = [a.shape[i - off] if d == -1 else d for i, d in enumerate(sizes)]
    return e.broadcast_to(a, sizes)


def _native_dropout_backward(e, grad, mask, scale):
    return e.select(mask, e.binary("mulf", grad, float(scale)), 0.0)


class NotMapped:
    """A result of a mapped ATen op that the exporter does not compute (batch
    norm's updated running statistics): an error if a live node reads it."""

    def __init__(self, what):
        self.what = what


def _getitem(e, t, i):
    if isinstance(t[i], NotMapped):
        raise UnsupportedOp(t[i].what)
    return t[i]


def _conv_form(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """The padding of the 2-D convolutions mapped: NCHW, stride 1, dilation 1,
    one group, not transposed, symmetric padding of at most kernel - 1."""
    if len(x.shape) != 4:
        raise UnsupportedOp(f"a {len(x.shape) - 2}-D convolution (only 2-D, NCHW)")
    if transposed:
        raise UnsupportedOp("a transposed convolution")
    if list(stride) != [1, 1]:
        raise UnsupportedOp(f"stride {list(stride)} (only 1)")
    if list(dilation) != [1, 1]:
        raise UnsupportedOp(f"dilation {list(dilation)} (only 1)")
    if groups != 1:
        raise UnsupportedOp(f"groups={groups} (only 1)")
    padding = list(padding)
    if len(padding) != 2 or any(p < 0 or p > k - 1 for p, k in zip(padding, w.shape[2:])):
        raise UnsupportedOp(f"padding {padding} (only 0 to kernel size - 1)")
    return padding


def _convolution(e, x, w, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    ph, pw = _conv_form(x, w, stride, padding, dilation, transposed, output_padding, groups)
    out = e.conv2d(e.pad(x, [0, 0, ph, pw]), w)
    if bias is not None:
        out = e.binary("addf", out, e.reshape(bias, [bias.shape[0], 1, 1]))
    return out


def _convolution_backward(e, grad, x, w, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    """grad_input: the convolution of the gradient, padded by kernel - 1 -
    padding, with the weight flipped in both spatial dimensions and its
    channels swapped; grad_weight[f, c, i, j] = sum_{n, h, w} grad[n, f, h, w]
    * padded_x[n, c, h + i, w + j] (a linalg.generic); grad_bias: the sum of
    the gradient over batch and space."""
    ph, pw = _conv_form(x, w, stride, padding, dilation, transposed, output_padding, groups)
    f, c, kh, kw = w.shape
    results = [None, None, None]
    if output_mask[0]:
        flipped = e.generic([w], [f"d1, d0, {kh - 1} - d2, {kw - 1} - d3",
                                  "d0, d1, d2, d3"], [c, f, kh, kw], ["parallel"] * 4,
                            "", yields="{0}")
        results[0] = e.conv2d(e.pad(grad, [0, 0, kh - 1 - ph, kw - 1 - pw]), flipped)
    if output_mask[1]:
        xp = e.pad(x, [0, 0, ph, pw])
        results[1] = e.generic(
            [grad, xp], ["d4, d0, d5, d6", "d4, d1, d5 + d2, d6 + d3", "d0, d1, d2, d3"],
            [f, c, kh, kw], ["parallel"] * 4 + ["reduction"] * 3,
            "{t} = arith.mulf {0}, {1} : f32\n{y} = arith.addf {2}, {t} : f32",
            init=e.filled([f, c, kh, kw], 0.0))
    if output_mask[2]:
        results[2] = e.reduce(grad, [0, 2, 3])
    return tuple(results)


def _batch_norm_train(e, x, weight, bias, eps):
    """Training-mode batch norm over all dimensions but the channels (1):
    (normalized output, batch mean, 1 / sqrt(biased variance + eps))."""
    axes = [0] + list(range(2, len(x.shape)))
    n = x.numel // x.shape[1]
    stat = [x.shape[1]] + [1] * (len(x.shape) - 2)
    mean = e.binary("mulf", e.reduce(x, axes), 1.0 / n)
    centered = e.binary("subf", x, e.reshape(mean, stat))
    var = e.binary("mulf", e.reduce(e.binary("mulf", centered, centered), axes), 1.0 / n)
    rstd = e.unary("math.rsqrt", e.binary("addf", var, float(eps)))
    out = e.binary("mulf", centered, e.reshape(rstd, stat))
    if weight is not None:
        out = e.binary("mulf", out, e.reshape(weight, stat))
    if bias is not None:
        out = e.binary("addf", out, e.reshape(bias, stat))
    return out, mean, rstd


RUNNING_STATS = NotMapped(
    "batch norm's updated running statistics are not exported (they do not affect "
    "the loss or the gradients of a training step)")


def _batch_norm_functional(e, x, weight, bias, running_mean, running_var, training,
                           momentum, eps):
    if not training:
        raise UnsupportedOp("batch norm in eval mode (training=False)")
    return _batch_norm_train(e, x, weight, bias, eps) + (RUNNING_STATS, RUNNING_STATS)


def _batch_norm_no_stats(e, x, weight, bias, training, momentum, eps):
    if not training:
        raise UnsupportedOp("batch norm in eval mode (training=False)")
    return _batch_norm_train(e, x, weight, bias, eps)


def ops():
    """ATen overload -> emitter function(e, *args, **kwargs)."""
    import torch
    aten = torch.ops.aten
    identity = lambda e, a, *args, **kw: a  # noqa: E731
    return {
        # views and copies: values are immutable, so these are renames
        aten.detach.default: identity, aten.alias.default: identity,
        aten.clone.default: identity, aten.lift_fresh_copy.default: identity,
        aten._to_copy.default: _to_copy,
        aten.view.default: lambda e, a, s: e.reshape(a, _sizes(s, a)),
        aten._unsafe_view.default: lambda e, a, s: e.reshape(a, _sizes(s, a)),
        aten.reshape.default: lambda e, a, s: e.reshape(a, _sizes(s, a)),
        aten.squeeze.dim: lambda e, a, d: e.reshape(
            a, [s for i, s in enumerate(a.shape) if i != d % len(a.shape) or s != 1]),
        aten.unsqueeze.default: lambda e, a, d: e.reshape(
            a, list(a.shape[:d % (len(a.shape) + 1)]) + [1]
            + list(a.shape[d % (len(a.shape) + 1):])),
        aten.t.default: lambda e, a: e.transpose(a, [1, 0]) if len(a.shape) == 2 else a,
        aten.transpose.int: lambda e, a, d0, d1: e.transpose(
            a, _swap(len(a.shape), d0, d1)),
        aten.permute.default: lambda e, a, p: e.transpose(a, p),
        aten.expand.default: _expand,
        aten.slice.Tensor: _slice,
        aten.split.Tensor: _split,
        aten.split_with_sizes.default: _split,
        aten.cat.default: lambda e, vs, dim=0: e.concat(list(vs), dim % len(vs[0].shape)),
        # linear algebra
        aten.mm.default: lambda e, a, b: e.matmul(a, b),
        aten.bmm.default: lambda e, a, b: e.matmul(a, b, "batch_matmul"),
        aten.addmm.default: _addmm,
        aten.convolution.default: _convolution,
        aten.convolution_backward.default: _convolution_backward,
        # elementwise
        aten.add.Tensor: _add, aten.add.Scalar: _add,
        aten.sub.Tensor: _sub, aten.sub.Scalar: _sub,
        aten.rsub.Scalar: lambda e, a, b, alpha=1: _sub(e, b, a, alpha),
        aten.mul.Tensor: lambda e, a, b: e.binary("mulf", a, b),
        aten.mul.Scalar: lambda e, a, b: e.binary("mulf", a, b),
        aten.div.Tensor: lambda e, a, b: e.binary("divf", a, b),
        aten.div.Scalar: lambda e, a, b: e.binary("divf", a, b),
        aten.neg.default: lambda e, a: e.unary("arith.negf", a),
        aten.pow.Tensor_Scalar: _pow,
        aten.exp.default: lambda e, a: e.unary("math.exp", a),
        aten.tanh.default: lambda e, a: e.unary("math.tanh", a),
        aten.rsqrt.default: lambda e, a: e.unary("math.rsqrt", a),
        aten.sqrt.default: lambda e, a: e.unary("math.sqrt", a),
        aten.relu.default: lambda e, a: e.binary("maximumf", a, 0.0),
        aten.maximum.default: lambda e, a, b: e.binary("maximumf", a, b),
        aten.where.self: _where,
        aten.le.Scalar: lambda e, a, b: e.cmp("ole", a, float(b)),
        aten.lt.Scalar: lambda e, a, b: e.cmp("olt", a, float(b)),
        aten.ge.Scalar: lambda e, a, b: e.cmp("oge", a, float(b)),
        aten.gt.Scalar: lambda e, a, b: e.cmp("ogt", a, float(b)),
        aten.scalar_tensor.default: lambda e, v, **kw: (_check_dtype(kw, "scalar_tensor"),
                                                        e.splat(float(v), ()))[1],
        aten.full.default: _full,
        aten.zeros_like.default: _like(0.0),
        aten.ones_like.default: _like(1.0),
        aten.full_like.default: _like(None),
        aten.tanh_backward.default: _tanh_backward,
        aten.threshold_backward.default: _threshold_backward,
        # reductions
        aten.sum.default: _sum, aten.sum.dim_IntList: _sum,
        aten.mean.default: _mean, aten.mean.dim: _mean,
        # composites kept by the core ATen decompositions (their backwards are
        # decomposed into the ops above)
        aten.native_layer_norm.default: _layer_norm,
        aten._softmax.default: lambda e, x, dim, half_to_float=False: _softmax(e, x, dim),
        aten.gelu.default: _gelu,
        aten.native_dropout.default: _dropout,
        aten.native_dropout_backward.default: _native_dropout_backward,
        # batch norm in training mode (its backward comes decomposed); the
        # functional form's updated running statistics are not mapped
        aten._native_batch_norm_legit_functional.default: _batch_norm_functional,
        aten._native_batch_norm_legit.no_stats: _batch_norm_no_stats,
        operator.getitem: _getitem,
    }


def _swap(rank, d0, d1):
    perm = list(range(rank))
    d0, d1 = d0 % rank, d1 % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm
