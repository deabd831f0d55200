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

import itertools
import math
import operator


class UnsupportedOp(Exception):
    """An ATen op (or a form of one) that the exporter does not map."""


def tensor_type(shape, dtype):
    if not shape:
        return f"tensor<{dtype}>"
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


# The bit patterns of -inf, +inf and NaN per float type (MLIR's hexadecimal
# float literals are the type's own bits).
SPECIAL_BITS = {"f32": ("0xFF800000", "0x7F800000", "0x7FC00000"),
                "bf16": ("0xFF80", "0x7F80", "0x7FC0"),
                "f16": ("0xFC00", "0x7C00", "0x7E00"),
                "f64": ("0xFFF0000000000000", "0x7FF0000000000000", "0x7FF8000000000000")}


def flit(value, dtype="f32"):
    """A float literal of element type `dtype` that round-trips (a 2-byte
    type rounds the decimal to nearest, as PyTorch's conversion does)."""
    if math.isinf(value):
        return SPECIAL_BITS[dtype][0 if value < 0 else 1]
    if math.isnan(value):
        return SPECIAL_BITS[dtype][2]
    return "%.17e" % value if dtype == "f64" else "%.9e" % value


def is_float(dtype):
    return dtype in ("f32", "f16", "bf16", "f64")


def is_half(dtype):
    """bfloat16 and float16: autocast's 2-byte types, computed in float32."""
    return dtype in ("f16", "bf16")


def accumulator(dtype):
    """The element type a product or sum of `dtype` floats accumulates in:
    float64's own, float32 for float32 and the 2-byte types (PyTorch's CPU
    and cuBLAS kernels accumulate those in float32)."""
    return "f64" if dtype == "f64" else "f32"


INT_BITS = {"i1": 1, "i32": 32, "i64": 64}
FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def literal(value, dtype):
    """`value` as an MLIR literal of element type `dtype`."""
    if dtype == "i1":
        return "true" if value else "false"
    if is_float(dtype):
        return flit(float(value), dtype)
    return str(int(value))


def _element_types():
    """The torch dtypes the exporter maps and their element types."""
    import torch
    return {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16",
            torch.float16: "f16", torch.int64: "i64", torch.int32: "i32", torch.bool: "i1"}


def mlir_dtype(torch_dtype):
    """The element type of a torch dtype the exporter maps, else UnsupportedOp."""
    types = _element_types()
    if torch_dtype not in types:
        raise UnsupportedOp(f"dtype {torch_dtype} (only float32, float64, bfloat16, float16, "
                            f"int64, int32 and bool)")
    return types[torch_dtype]


def torch_dtype(element_type):
    """The torch dtype of an element type mlir_dtype gives."""
    return {t: d for d, t in _element_types().items()}[element_type]


def _category(dtype):
    """PyTorch's type categories, ordered: boolean, integer, float."""
    return 0 if dtype == "i1" else 2 if is_float(dtype) else 1


def _widest(dtypes):
    """The widest of `dtypes` by PyTorch's promotion: bfloat16 with float16
    is float32."""
    dtypes = set(dtypes)
    if {"bf16", "f16"} <= dtypes:
        dtypes = (dtypes - {"bf16", "f16"}) | {"f32"}
    return max(sorted(dtypes), key=lambda d: (_category(d),
                                              FLOAT_BITS[d] if is_float(d) else INT_BITS[d]))


def promote(*xs):
    """The element type of an elementwise op on `xs` (Values and Python
    numbers), by PyTorch's rules (torch.result_type): the widest of the
    tensors with dimensions; a zero-dimensional tensor, then a Python
    number, counts only where its category (boolean < integer < float) is
    higher than theirs, a Python int then giving int64 and a float
    float32 (a boolean mask times 8 is int64, an int32 tensor plus an int64
    scalar tensor stays int32)."""
    result = None
    values = [x for x in xs if isinstance(x, Value)]
    numbers = ["i1" if isinstance(x, bool) else "f32" if isinstance(x, float) else "i64"
               for x in xs if not isinstance(x, Value) and x is not None]
    for group in ([v.dtype for v in values if v.shape], [v.dtype for v in values
                                                         if not v.shape], numbers):
        if group:
            widest = _widest(group)
            if result is None or _category(widest) > _category(result):
                result = widest
    return result or "f32"


class Value:
    def __init__(self, name, shape, dtype="f32"):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def type(self):
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
        self.result_dtype = None  # the element type of the node being mapped
        self.node = None  # the FX node being mapped, when the caller sets it
        # Loop bodies being emitted, innermost last: their ops go there, not
        # into the function body.
        self.regions = []

    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, text, result=None, attrs=None):
        """`attrs`: the op's own attributes ("strides = ..."), which go into
        the same dictionary as the segment marks."""
        seg = None if self.in_backward else self.segment
        target = self.regions[-1] if self.regions else \
            self.backward if self.in_backward else self.forward
        target.append([text, result, seg, list(attrs or [])])

    def render_line(self, line):
        text, result, seg, attrs = line
        attrs = list(attrs)
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
        lit = literal(value, dtype)
        self.emit(f"  {out.name} = arith.constant{self.ATTRS} dense<{lit}> : {out.type}",
                  out.name)
        return out

    def constant(self, rows, dtype="f32"):
        """A dense constant from nested lists (a splat when all equal)."""
        flat = []

        def walk(v, depth):
            if isinstance(v, (list, tuple)):
                shape.append(len(v)) if depth == len(shape) else None
                for x in v:
                    walk(x, depth + 1)
            else:
                flat.append(v)
        shape = []
        walk(rows, 0)
        if len(set(flat)) == 1:
            return self.splat(flat[0], shape, dtype)

        def text(v):
            if isinstance(v, (list, tuple)):
                return "[" + ", ".join(text(x) for x in v) + "]"
            return literal(v, dtype)
        out = self.new(shape, dtype, "cst")
        self.emit(f"  {out.name} = arith.constant{self.ATTRS} dense<{text(rows)}> : "
                  f"{out.type}", out.name)
        return out

    def empty(self, shape, dtype="f32"):
        out = self.new(shape, dtype, "e")
        self.emit(f"  {out.name} = tensor.empty(){self.ATTRS} : {out.type}", out.name)
        return out

    def filled(self, shape, value, dtype="f32"):
        init = self.empty(shape, dtype)
        c = self.fresh("c")
        lit = int(bool(value)) if dtype == "i1" else literal(value, dtype)
        self.emit(f"  {c} = arith.constant{self.ATTRS} {lit} : {dtype}", c)
        out = self.new(shape, dtype, hint="f")
        self.emit(f"  {out.name} = linalg.fill{self.ATTRS} ins({c} : {dtype}) outs("
                  f"{init.name} : {init.type}) -> {out.type}", out.name)
        return out

    def operand(self, x, shape, dtype="f32"):
        """A tensor of `shape` and element type `dtype` from a Value
        (broadcast, converted) or a Python number."""
        if isinstance(x, Value):
            return self.convert(self.broadcast_to(x, shape), dtype)
        return self.splat(x, shape, dtype)

    def convert(self, a, dtype):
        """`a` with element type `dtype`, as PyTorch's `.to(dtype)`: floats
        truncate toward zero into integers, nonzero is true."""
        if a.dtype == dtype:
            return a
        if dtype == "i1":
            return self.cmp("une" if is_float(a.dtype) else "ne", a, 0)
        if is_half(a.dtype) and not is_float(dtype) or is_half(dtype) and not is_float(a.dtype):
            # Between integers and 2-byte floats through float32.
            return self.convert(self.convert(a, "f32"), dtype)
        if is_float(a.dtype) and is_float(dtype):
            if FLOAT_BITS[a.dtype] == FLOAT_BITS[dtype]:  # bfloat16 <-> float16
                return self.convert(self.convert(a, "f32"), dtype)
            op = "extf" if FLOAT_BITS[dtype] > FLOAT_BITS[a.dtype] else "truncf"
        elif is_float(a.dtype):
            op = "fptosi"
        elif is_float(dtype):
            op = "uitofp" if a.dtype == "i1" else "sitofp"
        elif a.dtype == "i1":
            op = "extui"
        else:
            op = "extsi" if INT_BITS[dtype] > INT_BITS[a.dtype] else "trunci"
        out = self.new(a.shape, dtype, "cv")
        self.emit(f"  {out.name} = arith.{op} {a.name}{self.ATTRS} : {a.type} to {out.type}",
                  out.name)
        return out

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

    # The integer and boolean forms of the float ops `binary` is given.
    INT_OPS = {"addf": "addi", "subf": "subi", "mulf": "muli", "maximumf": "maxsi",
               "minimumf": "minsi", "divf": None, "powf": None}
    BOOL_OPS = {"addf": "ori", "mulf": "andi", "maximumf": "ori", "minimumf": "andi"}

    def binary(self, op, a, b, dtype=None):
        """arith.`op` (a float op name) on the promoted element type; on
        integers the integer op, on booleans the logical one; true division
        and powers are float ops whatever the operands."""
        shapes = [x.shape for x in (a, b) if isinstance(x, Value)]
        shape = broadcast_shape(*shapes)
        dtype = dtype or promote(a, b)
        if op in ("andi", "ori", "xori"):
            dtype = "i1"
        elif not is_float(dtype):
            table = self.BOOL_OPS if dtype == "i1" else self.INT_OPS
            if table.get(op) is None:
                if op not in ("divf", "powf"):
                    raise UnsupportedOp(f"arith.{op} on {dtype}")
                dtype = "f32"
            else:
                op = table[op]
        a, b = self.operand(a, shape, dtype), self.operand(b, shape, dtype)
        out = self.new(shape, dtype)
        dialect = "math" if op == "powf" else "arith"
        self.emit(f"  {out.name} = {dialect}.{op} {a.name}, {b.name}{self.ATTRS} : "
                  f"{out.type}", out.name)
        return out

    def unary(self, op, a):
        """A float op on `a` (an integer `a` is converted first, as PyTorch
        computes exp or sqrt of an integer tensor in float)."""
        a = self.convert(a, "f32") if not is_float(a.dtype) else a
        out = self.new(a.shape, a.dtype)
        self.emit(f"  {out.name} = {op} {a.name}{self.ATTRS} : {out.type}", out.name)
        return out

    # The integer predicates of arith.cmpf's ordered ones (une: not equal).
    INT_PREDICATES = {"oeq": "eq", "une": "ne", "one": "ne", "olt": "slt", "ole": "sle",
                      "ogt": "sgt", "oge": "sge", "eq": "eq", "ne": "ne"}

    def cmp(self, pred, a, b):
        shapes = [x.shape for x in (a, b) if isinstance(x, Value)]
        shape = broadcast_shape(*shapes)
        dtype = promote(a, b)
        a, b = self.operand(a, shape, dtype), self.operand(b, shape, dtype)
        out = self.new(shape, "i1", "m")
        if is_float(dtype):
            pred = {"eq": "oeq", "ne": "une"}.get(pred, pred)
            self.emit(f"  {out.name} = arith.cmpf {pred}, {a.name}, {b.name}{self.ATTRS} : "
                      f"{a.type}", out.name)
        else:
            pred = self.INT_PREDICATES[pred]
            if dtype == "i1" and pred not in ("eq", "ne"):
                pred = pred.replace("s", "u", 1)  # false < true
            self.emit(f"  {out.name} = arith.cmpi {pred}, {a.name}, {b.name}{self.ATTRS} : "
                      f"{a.type}", out.name)
        return out

    def select(self, mask, a, b):
        shape = broadcast_shape(*[x.shape for x in (mask, a, b) if isinstance(x, Value)])
        mask = self.convert(self.broadcast_to(mask, shape), "i1")
        dtype = promote(a, b)
        a, b = self.operand(a, shape, dtype), self.operand(b, shape, dtype)
        out = self.new(shape, dtype)
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
        """A (batch) matmul; of bfloat16 or float16 operands (autocast's) it
        accumulates in float32, into a float32 result rounded once to the
        operands' type, as PyTorch's CPU and cuBLAS kernels do; of float64
        operands, in float64."""
        if a.dtype != b.dtype or a.dtype not in ("f32", "f64", "bf16", "f16"):
            raise UnsupportedOp(f"a matmul of {a.dtype} and {b.dtype} (only float32, "
                                f"float64, bfloat16 or float16 on both)")
        shape = a.shape[:-1] + b.shape[-1:]
        acc = accumulator(a.dtype)
        init = self.filled(shape, 0.0, acc)
        out = self.new(shape, acc, hint="mm")
        self.emit(f"  {out.name} = linalg.{op}{self.ATTRS} ins({a.name}, {b.name} : "
                  f"{a.type}, {b.type}) outs({init.name} : {init.type}) -> {out.type}",
                  out.name)
        return self.convert(out, a.dtype)

    def reduce(self, a, dims, kind="sum", keepdim=False):
        """Sum, max or min over `dims`, or "any" (a logical or, of
        booleans); booleans sum as int64, as PyTorch does."""
        dims = sorted({d % len(a.shape) for d in dims}) if a.shape else []
        shape = [s for i, s in enumerate(a.shape) if i not in dims]
        if kind == "any":
            a = self.convert(a, "i1")
        if not dims:
            return a
        if a.dtype == "i1" and kind == "sum":
            a = self.convert(a, "i64")
        dt = a.dtype
        # A sum of 2-byte floats accumulates in float32 and rounds once, as
        # PyTorch's reductions do (a max is exact in any type).
        acc_dt = "f32" if is_half(dt) and kind == "sum" else dt
        if kind == "any":
            start, comb = False, "arith.ori"
        elif is_float(dt):
            start = {"sum": 0.0, "max": -math.inf, "min": math.inf}[kind]
            comb = {"sum": "arith.addf", "max": "arith.maximumf", "min": "arith.minimumf"}[kind]
        else:
            bits = INT_BITS[dt] - 1
            start = {"sum": 0, "max": -(1 << bits), "min": (1 << bits) - 1}[kind]
            comb = {"sum": "arith.addi", "max": "arith.maxsi", "min": "arith.minsi"}[kind]
        init = self.filled(shape, start, acc_dt)
        out = self.new(shape, acc_dt, hint="red")
        i, acc, s = self.fresh("in"), self.fresh("acc"), self.fresh("s")
        x, ext = i, ""
        if acc_dt != dt:
            x = self.fresh("x")
            ext = f"      {x} = arith.extf {i} : {dt} to {acc_dt}\n"
        self.emit(f"  {out.name} = linalg.reduce ins({a.name} : {a.type}) outs({init.name} "
                  f": {init.type}) dimensions = [{', '.join(map(str, dims))}]{self.ATTRS}\n"
                  f"    ({i}: {dt}, {acc}: {acc_dt}) {{\n"
                  f"{ext}"
                  f"      {s} = {comb} {x}, {acc} : {acc_dt}\n"
                  f"      linalg.yield {s} : {acc_dt}\n"
                  f"    }}", out.name)
        out = self.convert(out, dt)
        if keepdim:
            out = self.reshape(out, [1 if i in dims else d for i, d in enumerate(a.shape)])
        return out

    def slice_nd(self, a, offsets, sizes, strides=None):
        """tensor.extract_slice of `sizes` elements from `offsets`, `strides`
        apart (1 where None)."""
        strides = list(strides or [1] * len(a.shape))
        offsets, sizes = list(offsets), list(sizes)
        if not any(offsets) and sizes == list(a.shape) and all(s == 1 for s in strides):
            return a
        if 0 in sizes:
            return EmptyTensor(sizes, a.dtype)
        out = self.new(sizes, a.dtype, "sl")
        self.emit(f"  {out.name} = tensor.extract_slice {a.name}[{', '.join(map(str, offsets))}]"
                  f" [{', '.join(map(str, sizes))}] [{', '.join(map(str, strides))}]"
                  f"{self.ATTRS} : {a.type} to {out.type}", out.name)
        return out

    def extract_slice(self, a, dim, start, size, step=1):
        offsets = [0] * len(a.shape)
        offsets[dim] = start
        sizes = list(a.shape)
        sizes[dim] = size
        strides = [1] * len(a.shape)
        strides[dim] = step
        return self.slice_nd(a, offsets, sizes, strides)

    def insert(self, src, dest, offsets, strides=None):
        """tensor.insert_slice of `src` into `dest` at `offsets`, its
        elements `strides` apart."""
        strides = list(strides or [1] * len(src.shape))
        out = self.new(dest.shape, dest.dtype, "ins")
        self.emit(f"  {out.name} = tensor.insert_slice {src.name} into {dest.name}"
                  f"[{', '.join(map(str, offsets))}] [{', '.join(map(str, src.shape))}] "
                  f"[{', '.join(map(str, strides))}]{self.ATTRS} : {src.type} into "
                  f"{dest.type}", out.name)
        return out

    def place(self, src, shape, offsets, strides, value=0.0):
        """A tensor of `shape` filled with `value` that holds src[t] at
        offsets + strides * t in each dimension (elements that fall outside
        are dropped): zero padding with a negative amount trimming, and the
        stride's dilation of a convolution's transposed input."""
        lo, sizes, offs = [], [], []
        for d, off, st, n in zip(src.shape, offsets, strides, shape):
            t0 = (-off + st - 1) // st if off < 0 else 0
            t1 = min(d, (n - 1 - off) // st + 1) if n - 1 - off >= 0 else 0
            lo.append(t0)
            sizes.append(max(t1, t0) - t0)
            offs.append(off + st * t0)
        if list(sizes) == list(shape):  # nothing of the fill is left
            return self.slice_nd(src, lo, sizes)
        dest = self.filled(shape, value, src.dtype)
        if any(sz == 0 for sz in sizes):
            return dest
        return self.insert(self.slice_nd(src, lo, sizes), dest, offs, strides)

    def pad(self, a, lo, hi=None, value=0.0):
        """Pads dimension i with `lo[i]` elements of `value` before and
        `hi[i]` after (`lo` on both sides when `hi` is None); a negative
        amount trims. A fill with `a` inserted, which the CPU lowering
        bufferizes as an allocation, a fill and a copy."""
        hi = lo if hi is None else hi
        shape = [d + l + h for d, l, h in zip(a.shape, lo, hi)]
        if not any(lo) and not any(hi):
            return a
        return self.place(a, shape, lo, [1] * len(lo), value)

    @staticmethod
    def window_attrs(strides, dilations):
        """The strides and dilations attributes of a linalg convolution or
        pooling op, none when both are 1."""
        if all(s == 1 for s in strides) and all(d == 1 for d in dilations):
            return []
        n = len(strides)
        return [f"dilations = dense<[{', '.join(map(str, dilations))}]> : tensor<{n}xi64>",
                f"strides = dense<[{', '.join(map(str, strides))}]> : tensor<{n}xi64>"]

    def conv2d(self, x, w, strides=(1, 1), dilations=(1, 1), groups=1):
        """Valid 2-D convolution of the (padded) input x [N, C, H, W] with w
        [F, C / groups, KH, KW]: out[n, f, h, w] = sum_{c, i, j} x[n, g(f) *
        C / groups + c, h * s + i * d, w * s + j * d] * w[f, c, i, j] as
        linalg.conv_2d_nchw_fchw, grouped as linalg.conv_2d_ngchw_gfchw."""
        if x.dtype != w.dtype or x.dtype not in ("f32", "f64", "bf16", "f16"):
            raise UnsupportedOp(f"a convolution of {x.dtype} and {w.dtype} (only float32, "
                                f"float64, bfloat16 or float16 on both)")
        # 2-byte operands accumulate in the float32 result, rounded once.
        acc = accumulator(x.dtype)
        n, c, hp, wp = x.shape
        f, cg, kh, kw = w.shape
        (sh, sw), (dh, dw) = strides, dilations
        ho = (hp - dh * (kh - 1) - 1) // sh + 1
        wo = (wp - dw * (kw - 1) - 1) // sw + 1
        # The rows and columns the windows reach (a stride may leave some).
        x = self.slice_nd(x, [0, 0, 0, 0], [n, c, (ho - 1) * sh + dh * (kh - 1) + 1,
                                          (wo - 1) * sw + dw * (kw - 1) + 1])
        attrs = self.window_attrs(strides, dilations)
        if groups == 1:
            shape = [n, f, ho, wo]
            init = self.filled(shape, 0.0, acc)
            out = self.new(shape, acc, hint="conv")
            self.emit(f"  {out.name} = linalg.conv_2d_nchw_fchw{self.ATTRS} ins({x.name}, "
                      f"{w.name} : {x.type}, {w.type}) outs({init.name} : {init.type}) -> "
                      f"{out.type}", out.name, attrs)
            return self.convert(out, x.dtype)
        g = groups
        xg = self.reshape(x, [n, g, c // g] + list(x.shape[2:]))
        wg = self.reshape(w, [g, f // g, cg, kh, kw])
        shape = [n, g, f // g, ho, wo]
        init = self.filled(shape, 0.0, acc)
        out = self.new(shape, acc, hint="conv")
        self.emit(f"  {out.name} = linalg.conv_2d_ngchw_gfchw{self.ATTRS} ins({xg.name}, "
                  f"{wg.name} : {xg.type}, {wg.type}) outs({init.name} : {init.type}) -> "
                  f"{out.type}", out.name, attrs)
        return self.convert(self.reshape(out, [n, f, ho, wo]), x.dtype)

    def generic(self, inputs, maps, shape, iterators, body, init=None, yields="{y}",
                dtype="f32"):
        """linalg.generic over `inputs` with `maps` (affine expressions of
        d0...; the output's map last), `body` the payload on the block
        arguments {0}, {1}, ... (str.format fields; the output's last), with
        {y} and {t} fresh names, yielding `yields`. `body` may instead be a
        function of the block arguments' names and `fresh` that returns the
        payload's text and the value it yields. The output's element type is
        `dtype` (the init's when one is given)."""
        dims = ", ".join(f"d{i}" for i in range(len(iterators)))
        init = init if init is not None else self.empty(shape, dtype)
        out = self.new(shape, init.dtype, hint="g")
        args = [self.fresh("a") for _ in range(len(inputs) + 1)]
        if callable(body):
            text, result = body(args, self.fresh)
        else:
            fields = dict(y=self.fresh("y"), t=self.fresh("t"))
            text = body.format(*args, **fields)
            result = yields.format(*args, **fields)
        maps_text = ", ".join(f"affine_map<({dims}) -> ({m})>" for m in maps)
        iters = ", ".join(f'"{t}"' for t in iterators)
        ins = (f" ins({', '.join(v.name for v in inputs)} : "
               f"{', '.join(v.type for v in inputs)})") if inputs else ""
        block = "".join(f"      {line}\n" for line in text.strip().splitlines())
        types = [v.dtype for v in inputs] + [init.dtype]
        self.emit(f"  {out.name} = linalg.generic {{indexing_maps = [{maps_text}], "
                  f"iterator_types = [{iters}]}}{ins} outs({init.name} : {init.type})"
                  f"{self.GENERIC_ATTRS} {{\n"
                  f"    ^bb0({', '.join(f'{a}: {t}' for a, t in zip(args, types))}):\n"
                  f"{block}"
                  f"      linalg.yield {result} : {init.dtype}\n"
                  f"    }} -> {out.type}", out.name)
        return out

    def concat(self, values, dim):
        if len(values) == 1:
            return values[0]
        shape = list(values[0].shape)
        shape[dim] = sum(v.shape[dim] for v in values)
        dtype = promote(*values)
        values = [self.convert(v, dtype) for v in values]
        out = self.new(shape, dtype, hint="cat")
        self.emit(f"  {out.name} = tensor.concat dim({dim}) "
                  f"{', '.join(v.name for v in values)}{self.ATTRS} : "
                  f"({', '.join(v.type for v in values)}) -> {out.type}", out.name)
        return out

    def flip(self, a, dims):
        """`a` with the order of its elements reversed along `dims` (a
        copy, read through a reversed indexing map)."""
        dims = {d % len(a.shape) for d in dims}
        if not dims:
            return a
        rank = len(a.shape)
        source = ", ".join(f"{a.shape[i] - 1} - d{i}" if i in dims else f"d{i}"
                           for i in range(rank))
        identity = ", ".join(f"d{i}" for i in range(rank))
        return self.generic([a], [source, identity], a.shape, ["parallel"] * rank,
                            "", yields="{0}", dtype=a.dtype)

    def index_constant(self, value):
        c = self.fresh("c")
        self.emit(f"  {c} = arith.constant{self.ATTRS} {int(value)} : index", c)
        return c

    def _slot(self, stack_shape, at):
        rank = len(stack_shape)
        offsets = ", ".join([at] + ["0"] * (rank - 1))
        sizes = ", ".join(["1"] + [str(d) for d in stack_shape[1:]])
        return f"[{offsets}] [{sizes}] [{', '.join(['1'] * rank)}]"

    def read_slot(self, stack, at):
        """Slot `at` (an index value's name) of `stack` along dimension 0,
        that dimension dropped."""
        out = self.new(stack.shape[1:], stack.dtype, "slot")
        self.emit(f"  {out.name} = tensor.extract_slice {stack.name}"
                  f"{self._slot(stack.shape, at)}{self.ATTRS} : {stack.type} to "
                  f"{out.type}", out.name)
        return out

    def write_slot(self, value, stack, at):
        """`stack` with slot `at` along dimension 0 replaced by `value`."""
        out = self.new(stack.shape, stack.dtype, "stack")
        self.emit(f"  {out.name} = tensor.insert_slice {value.name} into {stack.name}"
                  f"{self._slot(stack.shape, at)}{self.ATTRS} : {value.type} into "
                  f"{stack.type}", out.name)
        return out

    def rng_uniform(self, shape, dtype="f32"):
        """Uniform [0, 1) noise; of float64, the float32 draws widened
        exactly (-remat-thread-rng's Philox makes 24-bit draws in any type)."""
        out = self.new(shape, dtype, hint="u")
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


def _result_dtype(e, kwargs):
    """The element type a creation op makes: its dtype argument, else the
    one PyTorch recorded for the node, else float32."""
    if kwargs.get("dtype") is not None:
        return mlir_dtype(kwargs["dtype"])
    return e.result_dtype or "f32"


def _layer_norm(e, x, normalized_shape, weight, bias, eps):
    if is_half(x.dtype):  # in float32, as _batch_norm_train
        out, mean, rstd = _layer_norm(e, e.convert(x, "f32"), normalized_shape, weight,
                                      bias, eps)
        return e.convert(out, x.dtype), mean, rstd
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


def _group_norm(e, x, weight, bias, n, c, hxw, group, eps):
    """native_group_norm over x [N, C, *]: each sample's channels in
    `group` groups of C / group, normalized over the group's channels and
    positions (biased variance), then scaled and shifted per channel.
    Returns (out, mean [N, group], rstd [N, group]), what its decomposed
    backward reads."""
    if x.shape[:2] != (n, c) or c % group or x.numel != n * c * hxw:
        raise UnsupportedOp(f"group norm of {list(x.shape)} with N={n}, C={c}, "
                            f"HxW={hxw}, group={group}")
    if is_half(x.dtype):  # in float32, as _batch_norm_train
        out, mean, rstd = _group_norm(e, e.convert(x, "f32"), weight, bias, n, c, hxw,
                                      group, eps)
        return e.convert(out, x.dtype), mean, rstd
    grouped = e.reshape(x, [n, group, (c // group) * hxw])
    size = (c // group) * hxw
    mean = e.binary("mulf", e.reduce(grouped, [2]), 1.0 / size)
    centered = e.binary("subf", grouped, e.reshape(mean, [n, group, 1]))
    var = e.binary("mulf", e.reduce(e.binary("mulf", centered, centered), [2]), 1.0 / size)
    rstd = e.unary("math.rsqrt", e.binary("addf", var, float(eps)))
    out = e.reshape(e.binary("mulf", centered, e.reshape(rstd, [n, group, 1])), x.shape)
    per_channel = [c] + [1] * (len(x.shape) - 2)
    if weight is not None:
        out = e.binary("mulf", out, e.reshape(weight, per_channel))
    if bias is not None:
        out = e.binary("addf", out, e.reshape(bias, per_channel))
    return out, mean, rstd


def _weight_norm_backward(e, grad_w, v, g, norms, dim):
    """The gradients of weight norm w = v * g / ||v|| (norms over every
    dimension but `dim`, in g's shape), as PyTorch's fused kernel computes
    them: grad_g = sum(grad_w * v) / norms, grad_v = g / norms * (grad_w -
    v * grad_g / norms)."""
    rank = len(v.shape)
    dim %= rank
    if list(g.shape) != [v.shape[i] if i == dim else 1 for i in range(rank)] or \
            g.shape != norms.shape:
        raise UnsupportedOp(f"weight norm backward of v {list(v.shape)}, g "
                            f"{list(g.shape)}, norms {list(norms.shape)}")
    axes = [i for i in range(rank) if i != dim]
    grad_g = e.binary("divf", e.reduce(e.binary("mulf", grad_w, v), axes, keepdim=True),
                      norms)
    grad_v = e.binary("mulf", e.binary("divf", g, norms), e.binary(
        "subf", grad_w, e.binary("mulf", v, e.binary("divf", grad_g, norms))))
    return grad_v, grad_g


def _softmax(e, x, dim):
    mx = e.reduce(x, [dim], "max", keepdim=True)
    ex = e.unary("math.exp", e.binary("subf", x, mx))
    return e.binary("divf", ex, e.reduce(ex, [dim], keepdim=True))


def _gelu(e, x, approximate="none"):
    if approximate == "none":
        # x * (1 + erf(x / sqrt(2))) / 2
        cdf = e.binary("addf", e.unary("math.erf", e.binary("mulf", x, 1 / math.sqrt(2.0))),
                       1.0)
        return e.binary("mulf", e.binary("mulf", x, cdf), 0.5)
    if approximate != "tanh":
        raise UnsupportedOp(f"gelu with approximate='{approximate}'")
    cube = e.binary("mulf", x, e.binary("mulf", x, x))
    inner = e.binary("mulf", e.binary("addf", x, e.binary("mulf", cube, 0.044715)),
                     math.sqrt(2.0 / math.pi))
    return e.binary("mulf", e.binary("mulf", x, e.binary("addf", e.unary("math.tanh", inner),
                                                         1.0)), 0.5)


def _gelu_backward(e, grad, x, approximate="none"):
    """PyTorch's GELU derivative: erf's cdf + x * pdf, or tanh's."""
    if approximate == "none":
        cdf = e.binary("mulf", e.binary("addf", e.unary(
            "math.erf", e.binary("mulf", x, 1 / math.sqrt(2.0))), 1.0), 0.5)
        pdf = e.binary("mulf", e.unary("math.exp", e.binary("mulf", e.binary("mulf", x, x),
                                                             -0.5)),
                       1 / math.sqrt(2.0 * math.pi))
        return e.binary("mulf", grad, e.binary("addf", cdf, e.binary("mulf", x, pdf)))
    if approximate != "tanh":
        raise UnsupportedOp(f"gelu_backward with approximate='{approximate}'")
    k, c = math.sqrt(2.0 / math.pi), 0.044715
    x2 = e.binary("mulf", x, x)
    inner = e.binary("mulf", e.binary("mulf", x, e.binary("addf", e.binary("mulf", x2, c),
                                                          1.0)), k)
    t = e.unary("math.tanh", inner)
    left = e.binary("mulf", e.binary("addf", t, 1.0), 0.5)
    dinner = e.binary("mulf", e.binary("addf", e.binary("mulf", x2, 3 * c), 1.0), k)
    right = e.binary("mulf", e.binary("mulf", e.binary("mulf", x, 0.5),
                                      e.binary("subf", 1.0, e.binary("mulf", t, t))), dinner)
    return e.binary("mulf", grad, e.binary("addf", left, right))


def _clamp(e, x, lo=None, hi=None):
    if lo is not None:
        x = e.binary("maximumf", x, lo)
    if hi is not None:
        x = e.binary("minimumf", x, hi)
    return x


def _hardtanh_backward(e, grad, x, lo, hi):
    """Zero where x <= min or x >= max, as PyTorch's hardtanh_backward."""
    outside = e.binary("maximumf", e.cmp("ole", x, lo), e.cmp("oge", x, hi))
    return e.select(outside, 0.0, grad)


def _log1p(e, x):
    """log(1 + x) to the float's precision at small x (Goldberg's
    log(u) * x / (u - 1), u = 1 + x rounded; x where u rounds to 1, u
    where it is infinite): MLIR lowers math.log1p to log(1 + x), whose
    rounding of 1 + x loses x below the unit roundoff (softplus of a
    large negative input)."""
    x = e.convert(x, "f32") if not is_float(x.dtype) else x
    u = e.binary("addf", x, 1.0)
    r = e.binary("divf", e.binary("mulf", e.unary("math.log", u), x), e.binary("subf", u, 1.0))
    return e.select(e.cmp("oeq", u, 1.0), x, e.select(e.cmp("oeq", u, math.inf), u, r))


def _sigmoid(e, x):
    return e.binary("divf", 1.0, e.binary("addf", e.unary("math.exp", e.unary(
        "arith.negf", x)), 1.0))


def _sigmoid_backward(e, grad, y):
    return e.binary("mulf", grad, e.binary("mulf", y, e.binary("subf", 1.0, y)))


def _silu_backward(e, grad, x):
    s = _sigmoid(e, x)
    return e.binary("mulf", grad, e.binary("mulf", s, e.binary(
        "addf", e.binary("mulf", x, e.binary("subf", 1.0, s)), 1.0)))


def _neg(e, a):
    if is_float(a.dtype):
        return e.unary("arith.negf", a)
    return e.binary("subf", 0, a)


def _abs(e, a):
    """|a| in a's element type (math.absi on integers: an integer's abs
    stays an integer, as T5's relative positions do); a boolean is its own."""
    if a.dtype == "i1":
        return a
    if is_float(a.dtype):
        return e.unary("math.absf", a)
    out = e.new(a.shape, a.dtype)
    e.emit(f"  {out.name} = math.absi {a.name}{e.ATTRS} : {out.type}", out.name)
    return out


def _sign(e, a):
    """(a > 0) - (a < 0) in a's element type, as PyTorch's CPU kernel
    computes it: 0 for a float zero of either sign and for NaN."""
    if a.dtype == "i1":
        return a
    one = e.select(e.cmp("ogt", a, 0), 1, 0)
    return e.convert(e.select(e.cmp("olt", a, 0), -1, one), a.dtype)


def _fmod(e, a, b):
    """a - trunc(a / b) * b, the sign of a (C's fmod; arith.remf on floats,
    arith.remsi on integers)."""
    dtype = promote(a, b)
    if dtype == "i1":
        raise UnsupportedOp("fmod of booleans")
    shape = broadcast_shape(*[x.shape for x in (a, b) if isinstance(x, Value)])
    a, b = e.operand(a, shape, dtype), e.operand(b, shape, dtype)
    out = e.new(shape, dtype)
    op = "remf" if is_float(dtype) else "remsi"
    e.emit(f"  {out.name} = arith.{op} {a.name}, {b.name}{e.ATTRS} : {out.type}", out.name)
    return out


def _remainder(e, a, b):
    """a - floor(a / b) * b, the sign of b (Python's %): fmod, plus b where
    that is nonzero and of the other sign than b, as PyTorch's kernel
    computes it."""
    r = _fmod(e, a, b)
    if isinstance(b, Value):
        wrong = e.binary("andi", e.cmp("ne", r, 0), e.cmp("ne", e.cmp("olt", r, 0),
                                                          e.cmp("olt", b, 0)))
    else:
        wrong = e.cmp("ogt", r, 0) if b < 0 else e.cmp("olt", r, 0)
    return e.select(wrong, e.binary("addf", r, b), r)


def _div_mode(e, a, b, rounding_mode=None):
    """a / b rounded toward zero ("trunc") or down ("floor"); integers
    stay integers (arith.divsi, arith.floordivsi)."""
    if rounding_mode is None:
        return e.binary("divf", a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise UnsupportedOp(f"div with rounding_mode={rounding_mode!r}")
    dtype = promote(a, b)
    if dtype == "i1":
        raise UnsupportedOp("div of booleans with a rounding mode")
    if is_float(dtype):
        return e.unary(f"math.{rounding_mode}", e.binary("divf", a, b))
    shape = broadcast_shape(*[x.shape for x in (a, b) if isinstance(x, Value)])
    a, b = e.operand(a, shape, dtype), e.operand(b, shape, dtype)
    out = e.new(shape, dtype)
    op = "divsi" if rounding_mode == "trunc" else "floordivsi"
    e.emit(f"  {out.name} = arith.{op} {a.name}, {b.name}{e.ATTRS} : {out.type}", out.name)
    return out


def _logical_not(e, a):
    return e.cmp("eq", e.convert(a, "i1"), False)


def _logical(op):
    def f(e, a, b):
        return e.binary(op, e.convert(a, "i1") if isinstance(a, Value) else bool(a),
                        e.convert(b, "i1") if isinstance(b, Value) else bool(b), "i1")
    return f


def _bitwise(op):
    """and / or on booleans; integer tensors are not mapped."""
    def f(e, a, b):
        for v in (a, b):
            if isinstance(v, Value) and v.dtype != "i1":
                raise UnsupportedOp(f"a bitwise op on {v.dtype} (only bool)")
        return e.binary(op, a, b, "i1")
    return f


def _masked_fill(e, a, mask, value):
    return e.select(mask, value, a)


def _arange(e, start, end=None, step=1, **kw):
    if end is None:
        start, end = 0, start
    dtype = _result_dtype(e, kw)
    values = []
    v = start
    while (step > 0 and v < end) or (step < 0 and v > end):
        values.append(v)
        v += step
    if not values:
        raise UnsupportedOp("an empty arange")
    return e.constant(values, dtype) if len(values) > 1 else e.splat(values[0], [1], dtype)


def _cumsum(e, x, dim, dtype=None):
    """out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...] along `dim`,
    added in that order as PyTorch's CPU kernel adds them, float32 in a
    float64 accumulator rounded once per element (its acc_type; float64 in
    float64): a
    linalg.generic whose reduction over j adds x[..., j, ...] where j <= i,
    quadratic in the axis but one fixed order, so a recomputed cumsum is
    bit-identical. Integers and booleans sum as int64 unless `dtype` says
    otherwise. Its backward (cumsum_backward) comes decomposed: flip,
    cumsum, flip."""
    target = mlir_dtype(dtype) if dtype is not None else e.result_dtype or (
        x.dtype if is_float(x.dtype) else "i64")
    if is_float(target) and target not in ("f32", "f64"):
        raise UnsupportedOp(f"cumsum to {target}")
    x = e.convert(x, target)
    if not x.shape:
        return x
    rank = len(x.shape)
    dim %= rank
    acc = "f64" if is_float(target) else target
    source = ", ".join(f"d{rank}" if i == dim else f"d{i}" for i in range(rank))
    ident = ", ".join(f"d{i}" for i in range(rank))

    def body(a, fresh):
        value, total = a
        op = _Payload(fresh)
        if acc != target:
            value = op(f"arith.extf {value} : {target} to {acc}")
        le = op(f"arith.cmpi ule, {op(f'linalg.index {rank} : index')}, "
                f"{op(f'linalg.index {dim} : index')} : index")
        added = op(f"arith.{'addf' if is_float(acc) else 'addi'} {total}, {value} : {acc}")
        result = op(f"arith.select {le}, {added}, {total} : {acc}")
        return op.text(), result

    sums = e.generic([x], [source, ident], x.shape, ["parallel"] * rank + ["reduction"],
                     body, init=e.filled(x.shape, 0, acc))
    if acc == target:
        return sums
    out = e.new(x.shape, target, "cs")
    e.emit(f"  {out.name} = arith.truncf {sums.name}{e.ATTRS} : {sums.type} to {out.type}",
           out.name)
    return out


class _Payload:
    """The lines of a linalg.generic payload that `generic`'s `body` returns:
    calling it with an op's text appends `%r = text` under a fresh name and
    returns the name."""

    def __init__(self, fresh):
        self.fresh = fresh
        self.lines = []

    def __call__(self, text):
        r = self.fresh("ix")
        self.lines.append(f"{r} = {text}")
        return r

    def text(self):
        return "\n".join(self.lines)

    def position(self, dim):
        """The payload's position along loop dimension `dim`, as an i64."""
        return self(f"arith.index_cast {self(f'linalg.index {dim} : index')} : index to i64")

    def clamped_index(self, value, size):
        """An i64 `value` clamped to [0, size) as an index (PyTorch raises
        on an index outside; the generated code reads the nearest row)."""
        lo = self("arith.constant 0 : i64")
        hi = self(f"arith.constant {size - 1} : i64")
        clamped = self(f"arith.minsi {self(f'arith.maxsi {value}, {lo} : i64')}, {hi} : i64")
        return self(f"arith.index_cast {clamped} : i64 to index")


def _select_int(e, a, dim, index):
    dim %= len(a.shape)
    index %= a.shape[dim]
    part = e.extract_slice(a, dim, index, 1)
    return e.reshape(part, [s for i, s in enumerate(a.shape) if i != dim])


def _embedding(e, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
               sparse=False):
    """weight[indices]: a linalg.generic over the indices and the embedding
    dimension that reads the table with tensor.extract (an index outside the
    table is clamped: PyTorch raises on it)."""
    shape = list(indices.shape) + [weight.shape[1]]
    rank = len(shape)
    indices = e.convert(indices, "i64")

    def body(a, fresh):
        op = _Payload(fresh)
        row = op.clamped_index(a[0], weight.shape[0])
        col = op(f"linalg.index {rank - 1} : index")
        result = op(f"tensor.extract {weight.name}[{row}, {col}] : {weight.type}")
        return op.text(), result

    dims = [f"d{i}" for i in range(rank)]
    return e.generic([indices], [", ".join(dims[:-1]), ", ".join(dims)], shape,
                     ["parallel"] * rank, body, dtype=weight.dtype)


def _scatter_add_rows(e, dest, index, values, skip=None):
    """dest + the rows of `values` added at the rows `index` names:
    out[v, ...] = dest[v, ...] + sum over positions p with index[p] == v
    (and v != skip) of values[p, ...], in position order (PyTorch's CPU
    kernels add in position order too): a remat.scatter_add_rows, which
    lowers to a loop over the positions per column, in time proportional
    to the positions rather than to the rows times the positions. An index
    outside [0, rows), negative ones included, names no row."""
    positions = math.prod(index.shape)
    row = math.prod(dest.shape[1:])
    values = e.convert(e.broadcast_to(values, list(index.shape) + list(dest.shape[1:])),
                       dest.dtype)
    flat_idx = e.reshape(e.convert(index, "i64"), [positions])
    flat_values = e.reshape(values, [positions, row])
    flat_dest = e.reshape(dest, [dest.shape[0], row])
    out = e.new(flat_dest.shape, dest.dtype, "rows")
    skipped = f" skip {skip}" if skip is not None and skip >= 0 else ""
    e.emit(f"  {out.name} = remat.scatter_add_rows {flat_values.name} into "
           f"{flat_dest.name}[{flat_idx.name}]{skipped}{e.ATTRS} : {flat_values.type}, "
           f"{flat_idx.type} into {flat_dest.type}", out.name)
    return e.reshape(out, dest.shape)


def _embedding_dense_backward(e, grad, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """grad_weight: the gradient's rows added at their tokens' rows, none at
    padding_idx."""
    if scale_grad_by_freq:
        raise UnsupportedOp("embedding backward with scale_grad_by_freq")
    dest = e.filled([num_weights, grad.shape[-1]], 0.0, accumulator(grad.dtype))
    return _scatter_add_rows(e, dest, indices, grad, skip=padding_idx)


def _index_add(e, dest, dim, index, source, alpha=1):
    """dest with source's slices along `dim` added at the slices `index`
    names, in position order (PyTorch's CPU kernel's order): along the
    first dimension rows (_scatter_add_rows; an index outside [0, rows)
    names no row, where PyTorch raises); alpha scales source first."""
    if dim % len(dest.shape) != 0 or len(index.shape) != 1:
        raise UnsupportedOp(f"index_add along dimension {dim} of a "
                            f"{len(dest.shape)}-D tensor")
    if not is_float(dest.dtype):
        raise UnsupportedOp(f"index_add into a {dest.dtype} tensor")
    if alpha != 1:
        source = e.binary("mulf", source, float(alpha))
    return _scatter_add_rows(e, dest, index, source)


def _linear_rows(e, ix, dest):
    """The row of dest reshaped to [its indexed dimensions' product, the
    rest] that each position of `ix` (index tensors on dest's leading
    dimensions) names: the indices' row-major linear index, each index
    counted from the end when negative; -1 (no row) when one is outside
    its dimension."""
    sizes = [dest.shape[i] for i in ix.at]

    def body(a, fresh):
        op = _Payload(fresh)
        zero = op("arith.constant 0 : i64")
        flat = inside = None
        for k, size in enumerate(sizes):
            n = op(f"arith.constant {size} : i64")
            w = ix.wrapped(op, a[k], size)
            ok = op(f"arith.andi {op(f'arith.cmpi sge, {w}, {zero} : i64')}, "
                    f"{op(f'arith.cmpi slt, {w}, {n} : i64')} : i1")
            inside = ok if inside is None else op(f"arith.andi {inside}, {ok} : i1")
            flat = w if flat is None else \
                op(f"arith.addi {op(f'arith.muli {flat}, {n} : i64')}, {w} : i64")
        result = op(f"arith.select {inside}, {flat}, {op('arith.constant -1 : i64')} : i64")
        return op.text(), result

    ident = ", ".join(f"d{i}" for i in range(len(ix.b)))
    return e.generic(ix.values, [ident] * (len(ix.at) + 1), ix.b,
                     ["parallel"] * len(ix.b), body, dtype="i64")


def _index_put(e, dest, indices, values, accumulate=False):
    """dest with `values` added at the elements dest[i0, i1, ...] names
    (see _AdvancedIndex; the decomposed backward of embedding and of
    advanced indexing). One index tensor on the first dimension adds rows
    (_scatter_add_rows; an index outside [0, rows), negative ones included,
    names no row); index tensors on the leading dimensions add rows of
    dest reshaped to [their product, the rest] at their linear index
    (_linear_rows); otherwise a linalg.generic over dest's elements
    that reduces over the index positions in order, adding the values of
    those that name the element. In the last two a negative index counts
    from the end and one outside its dimension names no element, where
    PyTorch raises; all three add each element's terms in position order.
    The overwriting form (accumulate=False: inv_perm[perm] = arange, the
    inverse of a mixture of experts' sort) takes the third way, of any
    element type, each element the value of the last position that names
    it (PyTorch leaves repeated indices undefined; its CPU kernel writes in
    position order), else dest's."""
    if accumulate and not is_float(dest.dtype):
        raise UnsupportedOp(f"index_put into a {dest.dtype} tensor")
    if accumulate and len(indices) == 1 and indices[0] is not None and \
            indices[0].dtype != "i1":
        return _scatter_add_rows(e, dest, indices[0], values)
    ix = _AdvancedIndex(e, dest.shape, indices)
    rank = len(dest.shape)
    values = e.convert(e.broadcast_to(values, ix.shape), dest.dtype)
    if accumulate and ix.at == list(range(len(ix.at))) and ix.b:
        k = len(ix.at)
        rows = e.reshape(dest, [math.prod(dest.shape[:k])] + list(dest.shape[k:]))
        out = _scatter_add_rows(e, rows, _linear_rows(e, ix, dest), values)
        return e.reshape(out, dest.shape)
    # Loop dimensions: d0 ... over dest's elements, then one per dimension
    # of the index positions (reductions, in row-major order).
    bdims = [f"d{rank + j}" for j in range(len(ix.b))]
    value_map = [f"d{i}" for i in ix.before] + bdims + [f"d{i}" for i in ix.after]
    ident = ", ".join(f"d{i}" for i in range(rank))

    def body(a, fresh):
        op = _Payload(fresh)
        hit = None
        for k, i in enumerate(ix.at):
            coord = op.position(i)
            eq = op(f"arith.cmpi eq, {ix.wrapped(op, a[k], dest.shape[i])}, {coord} : i64")
            hit = eq if hit is None else op(f"arith.andi {hit}, {eq} : i1")
        value, acc = a[len(ix.at)], a[len(ix.at) + 1]
        if accumulate:
            value = op(f"arith.addf {acc}, {value} : {dest.dtype}")
        result = op(f"arith.select {hit}, {value}, {acc} : {dest.dtype}")
        return op.text(), result

    maps = [", ".join(bdims) for _ in ix.at] + [", ".join(value_map), ident]
    iterators = ["parallel"] * rank + ["reduction"] * len(ix.b)
    return e.generic(ix.values + [values], maps, dest.shape, iterators, body, init=dest)


def _index_select(e, a, dim, index):
    """a's slices along `dim` that the 1-D (or scalar) `index` names: rows
    of a table as an embedding, else advanced indexing with the index at
    `dim` (torch.roll's decomposition reads a rotated arange)."""
    dim %= len(a.shape)
    if len(index.shape) > 1:
        raise UnsupportedOp(f"index_select with a {len(index.shape)}-D index")
    if dim == 0 and len(a.shape) == 2 and len(index.shape) == 1:
        return _embedding(e, a, index)
    flat = e.reshape(index, [index.numel])
    out = _index_tensor(e, a, [None] * dim + [flat])
    return e.reshape(out, [d if i != dim else index.numel for i, d in enumerate(a.shape)]
                     if index.shape else [d for i, d in enumerate(a.shape) if i != dim])


def _pow(e, a, exponent):
    """a ** exponent as PyTorch's CPU kernel computes the powers it
    special-cases: a * a, and (a * a) * a (GPT-2's GELU), not powf."""
    if exponent == 2:
        return e.binary("mulf", a, a)
    if exponent == 3:
        return e.binary("mulf", e.binary("mulf", a, a), a)
    if exponent == 1:
        return a
    return e.binary("powf", a, float(exponent))


def _pow_tensor(e, a, b):
    """a ** b with a tensor exponent (pow.Tensor_Tensor) or a number base
    (pow.Scalar): math.powf in the promoted float type (ALiBi's slopes,
    base ** arange). An integer power of integers is no float op."""
    if not any(is_float(x.dtype) if isinstance(x, Value) else isinstance(x, float)
               for x in (a, b)):
        raise UnsupportedOp("pow of integers")
    return e.binary("powf", a, b)


def _var(e, a, dims=None, correction=None, keepdim=False):
    """The variance over `dims`: the mean of the squared deviations from
    the mean, times n / (n - correction) (correction 1 unless given: the
    unbiased estimate); its backward comes decomposed."""
    dims = _dims(dims, len(a.shape))
    n = math.prod(a.shape[d] for d in dims)
    correction = 1 if correction is None else correction
    mean = _mean(e, a, dims, keepdim=True)
    d = e.binary("subf", a, mean)
    ss = e.reduce(e.binary("mulf", d, d), dims, keepdim=keepdim)
    return e.binary("divf", ss, float(max(0, n - correction)))


def _var_mean(e, a, dims=None, correction=None, keepdim=False):
    return (_var(e, a, dims, correction, keepdim),
            _mean(e, a, dims, keepdim=keepdim))


def _rounding(op):
    """floor, ceil, trunc, round (half to even, as torch.round): math.`op`
    on floats, the identity on integers (their gradient, zero, comes
    decomposed)."""
    return lambda e, a: e.unary(op, a) if is_float(a.dtype) else a


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
    """a[start:end:step] along `dim` (Python's bounds: negative ones count
    from the end, both clamped to the dimension), a strided
    tensor.extract_slice; its backward, slice_scatter, inserts with the
    same stride."""
    if step < 1:
        raise UnsupportedOp(f"slice with step {step}")
    dim %= len(a.shape)
    n = a.shape[dim]
    start = 0 if start is None else (max(start + n, 0) if start < 0 else min(start, n))
    end = n if end is None else (max(end + n, 0) if end < 0 else min(end, n))
    size = max(0, -(-(end - start) // step))
    return e.extract_slice(a, dim, start, size, step)


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
    if kw.get("dtype") is not None:
        a = e.convert(a, mlir_dtype(kw["dtype"]))
    if not a.shape:
        return a
    return e.reduce(a, _dims(dims, len(a.shape)), keepdim=keepdim)


def _mean(e, a, dims=None, keepdim=False, **kw):
    _check_dtype(kw, "mean")
    dims = _dims(dims, len(a.shape))
    n = math.prod(a.shape[d] for d in dims)
    return e.binary("mulf", e.reduce(a, dims, keepdim=keepdim), 1.0 / n)


def _to_copy(e, a, **kw):
    if kw.get("dtype") is None:
        return a
    dtype = mlir_dtype(kw["dtype"])
    if a.dtype == "i1" and is_float(dtype):
        # bool -> float (a dropout mask)
        return e.convert(e.select(a, 1.0, 0.0), dtype)
    return e.convert(a, dtype)


def _full(e, size, value, **kw):
    return e.splat(value, size, _result_dtype(e, kw))


def _like(value):
    def f(e, a, *args, **kw):
        dtype = mlir_dtype(kw["dtype"]) if kw.get("dtype") is not None else a.dtype
        return e.splat(value if value is not None else args[0], a.shape, dtype)
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


class NotExported(UnsupportedOp):
    """A live node reads a NotMapped result."""


class EmptyTensor:
    """A tensor of no elements, which remat's tensors cannot hold: a
    `torch.tensor([])` literal (the key and value caches transformers
    starts with), an empty slice (x[..., 32:] of a 32-wide x: the part of
    a head rotary embeddings leave alone, when they rotate all of it) and
    whatever is computed from one. No op is emitted for it. An op whose
    result is not empty may read it only where it contributes nothing:
    `cat` skips it, as PyTorch does, and `slice_scatter` of it is its
    destination; the exporter rejects any other reader."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype


def reads_empty(fn):
    """Marks an op's emitter as one that takes an EmptyTensor operand; the
    exporter rejects one for any other."""
    fn.reads_empty = True
    return fn


@reads_empty
def _cat(e, vs, dim=0):
    """torch.cat: the tensors joined along `dim`, the empty ones skipped
    (as PyTorch skips a 1-D empty tensor whatever the others' rank)."""
    vs = [v for v in vs if not isinstance(v, EmptyTensor)]
    if not vs:
        raise UnsupportedOp("every tensor joined is empty")
    return e.concat(vs, dim % len(vs[0].shape))


class Reversed:
    """A tensor a scan reads in reverse along dimension 0: an `aten.flip`
    whose only readers are scans, folded into their slot index."""

    def __init__(self, value):
        self.value = value


def _getitem(e, t, i):
    if isinstance(t[i], NotMapped):
        raise NotExported(t[i].what)
    return t[i]


def _conv_form(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """The 2-D convolutions mapped (1-D ones become 2-D ones of height 1):
    NCHW, any stride, dilation, padding and groups (depthwise included), not
    transposed. Returns (stride, padding,
    dilation) as pairs."""
    if transposed:
        raise UnsupportedOp("a transposed convolution")
    if len(x.shape) != 4:
        raise UnsupportedOp(f"a {len(x.shape) - 2}-D convolution (only 1-D, 2-D and 3-D, "
                            f"NCL, NCHW and NCDHW)")
    pair = lambda v: [v, v] if isinstance(v, int) else list(v)  # noqa: E731
    stride, padding, dilation = pair(stride), pair(padding), pair(dilation)
    if len(stride) != 2 or len(padding) != 2 or len(dilation) != 2 or \
            min(stride + dilation) < 1 or min(padding) < 0:
        raise UnsupportedOp(f"stride {stride}, padding {padding}, dilation {dilation}")
    if x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise UnsupportedOp(f"groups={groups} with weight {list(w.shape)} and input "
                            f"{list(x.shape)}")
    return stride, padding, dilation


def _unit_height(e, x, w, stride, padding, dilation):
    """A 1-D convolution's input [N, C, L] and weight [F, C / groups, K] as
    a 2-D one's of height 1, and its stride, padding and dilation as pairs
    (1, 0 and 1 along the height)."""
    one = lambda v, unit: [unit, v if isinstance(v, int) else v[0]]  # noqa: E731
    for v in (stride, padding, dilation):
        if not isinstance(v, int) and len(v) != 1:
            raise UnsupportedOp(f"a 1-D convolution with stride {stride}, padding "
                                f"{padding}, dilation {dilation}")
    return (e.reshape(x, [x.shape[0], x.shape[1], 1, x.shape[2]]),
            e.reshape(w, [w.shape[0], w.shape[1], 1, w.shape[2]]),
            one(stride, 1), one(padding, 0), one(dilation, 1))


def _convolution(e, x, w, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    """A 2-D convolution; a 1-D one as a 2-D one of height 1; a 3-D one as
    a sum of 2-D ones (_depth_slices)."""
    if len(x.shape) == 5 and len(w.shape) == 5 and not transposed:
        return _convolution3d(e, x, w, bias, stride, padding, dilation, groups)
    if len(x.shape) == 3 and len(w.shape) == 3 and not transposed:
        x4, w4, stride, padding, dilation = _unit_height(e, x, w, stride, padding, dilation)
        out = _convolution(e, x4, w4, bias, stride, padding, dilation, transposed,
                           output_padding, groups)
        return e.reshape(out, [out.shape[0], out.shape[1], out.shape[3]])
    (sh, sw), (ph, pw), (dh, dw) = _conv_form(x, w, stride, padding, dilation, transposed,
                                              output_padding, groups)
    out = e.conv2d(e.pad(x, [0, 0, ph, pw]), w, (sh, sw), (dh, dw), groups)
    if bias is not None:
        out = e.binary("addf", out, e.reshape(bias, [bias.shape[0], 1, 1]))
    return out


def _depth_slices(e, x, w, stride, padding, dilation, groups):
    """A 3-D convolution over NCDHW as KD 2-D ones with the output depth
    folded into the batch: out[n, :, o] = sum_i conv2d(xp[n, :, o * sd + i *
    dd], w[:, :, i]) with xp the input zero-padded in depth. Returns the
    pieces (x_i [N * DO, C, H, W], the depth slice o * sd + i * dd of xp
    transposed to depth-major, and w_i [F, C / groups, KH, KW]), the 2-D
    stride, padding and dilation, and (DO, the padded depth, the depth
    stride, padding and dilation)."""
    trip = lambda v: ([v] * 3 if isinstance(v, int) else  # noqa: E731
                      list(v) * 3 if len(v) == 1 else list(v))
    s, p, d = trip(stride), trip(padding), trip(dilation)
    if len(s) != 3 or len(p) != 3 or len(d) != 3 or min(s + d) < 1 or min(p) < 0:
        raise UnsupportedOp(f"a 3-D convolution with stride {s}, padding {p}, dilation {d}")
    n, c, depth, h, wd = x.shape
    f, cg, kd, kh, kw = w.shape
    if c != cg * groups or f % groups:
        raise UnsupportedOp(f"groups={groups} with weight {list(w.shape)} and input "
                            f"{list(x.shape)}")
    dp = depth + 2 * p[0]
    do = (dp - d[0] * (kd - 1) - 1) // s[0] + 1
    xp = e.pad(x, [0, 0, p[0], 0, 0])
    pieces = []
    for i in range(kd):
        xi = e.slice_nd(xp, [0, 0, i * d[0], 0, 0], [n, c, do, h, wd], [1, 1, s[0], 1, 1])
        xi = e.reshape(e.transpose(xi, [0, 2, 1, 3, 4]), [n * do, c, h, wd])
        wi = e.reshape(e.slice_nd(w, [0, 0, i, 0, 0], [f, cg, 1, kh, kw]), [f, cg, kh, kw])
        pieces.append((xi, wi))
    return pieces, (s[1:], p[1:], d[1:]), (do, dp, s[0], p[0], d[0])


def _convolution3d(e, x, w, bias, stride, padding, dilation, groups):
    """A 3-D convolution over NCDHW: the sum of its depth slices' 2-D
    convolutions (_depth_slices), back to NCDHW."""
    pieces, (s2, p2, d2), (do, *_) = _depth_slices(e, x, w, stride, padding, dilation,
                                                    groups)
    out = None
    for xi, wi in pieces:
        yi = _convolution(e, xi, wi, None, s2, p2, d2, False, [0, 0], groups)
        out = yi if out is None else e.binary("addf", out, yi)
    _, f, ho, wo = out.shape
    out = e.transpose(e.reshape(out, [x.shape[0], do, f, ho, wo]), [0, 2, 1, 3, 4])
    if bias is not None:
        out = e.binary("addf", out, e.reshape(bias, [bias.shape[0], 1, 1, 1]))
    return out


def _convolution3d_backward(e, grad, x, w, stride, padding, dilation, groups, output_mask):
    """A 3-D convolution's gradients from its depth slices' 2-D ones: each
    slice's input gradient added into the depth-padded input's at depths o
    * sd + i * dd (a strided extract_slice, an add and an insert_slice),
    then cut to the input; the weight's, the slices' stacked along the
    kernel depth; the bias's, the sum of the gradient over batch and
    space."""
    pieces, (s2, p2, d2), (do, dp, sd, pd, dd) = _depth_slices(e, x, w, stride, padding,
                                                                dilation, groups)
    n, c, depth, h, wd = x.shape
    f, cg, kd, kh, kw = w.shape
    _, _, _, ho, wo = grad.shape
    g2 = e.reshape(e.transpose(grad, [0, 2, 1, 3, 4]), [n * do, f, ho, wo])
    acc = e.filled([n, c, dp, h, wd], 0.0, accumulator(x.dtype)) if output_mask[0] else None
    gws = []
    for i, (xi, wi) in enumerate(pieces):
        gxi, gwi, _ = _convolution_backward(e, g2, xi, wi, None, s2, p2, d2, False, [0, 0],
                                            groups, [output_mask[0], output_mask[1], False])
        if gxi is not None:
            gxi = e.transpose(e.reshape(gxi, [n, do, c, h, wd]), [0, 2, 1, 3, 4])
            offsets, strides = [0, 0, i * dd, 0, 0], [1, 1, sd, 1, 1]
            here = e.slice_nd(acc, offsets, [n, c, do, h, wd], strides)
            acc = e.insert(e.binary("addf", here, gxi), acc, offsets, strides)
        if gwi is not None:
            gws.append(e.reshape(gwi, [f, cg, 1, kh, kw]))
    gx = e.pad(acc, [0, 0, -pd, 0, 0]) if acc is not None else None
    gw = e.concat(gws, 2) if gws else None
    gb = e.reduce(grad, [0, 2, 3, 4]) if output_mask[2] else None
    return gx, gw, gb


def _affine(*terms):
    """The affine expression sum(coefficient * dim) + constant of
    (coefficient, dim-or-None) pairs."""
    parts = []
    for c, d in terms:
        if c == 0:
            continue
        if d is None:
            parts.append(str(c))
        else:
            parts.append(d if c == 1 else f"{d} * {c}")
    return " + ".join(parts) or "0"


def _mul_add(dtype):
    """The body of a convolution's linalg.generic: `{2} + {0} * {1}` in
    float32, 2-byte operands widened first (float64 in float64)."""
    if is_half(dtype):
        return (f"{{t}}a = arith.extf {{0}} : {dtype} to f32\n"
                f"{{t}}b = arith.extf {{1}} : {dtype} to f32\n"
                f"{{t}} = arith.mulf {{t}}a, {{t}}b : f32\n"
                f"{{y}} = arith.addf {{2}}, {{t}} : f32")
    acc = accumulator(dtype)
    return f"{{t}} = arith.mulf {{0}}, {{1}} : {acc}\n{{y}} = arith.addf {{2}}, {{t}} : {acc}"


def _conv1x1_transposed(e, grad, w):
    """The input gradient of a 1x1 convolution (one group) from its output
    gradient [N, F, H, W] and weight [F, C, 1, 1]: out[n, c, h, w] = sum_f
    grad[n, f, h, w] * w[f, c, 0, 0], a linalg.generic that reads the weight
    in place, where conv2d would read a transposed copy of it (a copy of
    the whole weight, read a column at a time). -remat-conv-to-blas takes it
    as that convolution, the filter a transposed view: the same sums."""
    n, f, h, wd = grad.shape
    c = w.shape[1]
    out = e.generic([grad, w], ["d0, d4, d2 + d5, d3 + d6", "d4, d1, d5, d6",
                                "d0, d1, d2, d3"],
                    [n, c, h, wd], ["parallel"] * 4 + ["reduction"] * 3,
                    _mul_add(grad.dtype), init=e.filled([n, c, h, wd], 0.0,
                                                        accumulator(grad.dtype)))
    return e.convert(out, grad.dtype)


def _flipped_filter(e, w, groups, taps, flip):
    """The filter w [F, C/g, KH, KW] as the convolution of the gradient
    reads it for grad_input: [C, F/g, th, tw] for taps (th, tw), input and
    output channels swapped within each group, tap (t_h, t_w) read at
    (flip[0](t_h), flip[1](t_w)), each given its dimension's name."""
    f, cg, kh, kw = w.shape
    g, fg = groups, f // groups
    th, tw = taps
    if g == 1:
        return e.generic([w], [f"d1, d0, {flip[0]('d2')}, {flip[1]('d3')}", "d0, d1, d2, d3"],
                         [cg, f, th, tw], ["parallel"] * 4, "", yields="{0}", dtype=w.dtype)
    flipped = e.generic([e.reshape(w, [g, fg, cg, kh, kw])],
                        [f"d0, d2, d1, {flip[0]('d3')}, {flip[1]('d4')}", "d0, d1, d2, d3, d4"],
                        [g, cg, fg, th, tw], ["parallel"] * 5, "", yields="{0}", dtype=w.dtype)
    return e.reshape(flipped, [cg * g, fg, th, tw])


def _strided_input_grad(e, grad, w, x_shape, stride, padding, groups):
    """grad_input of a convolution with stride s > 1 (dilation 1) as its s x s
    phases: the input rows y = r + s * a, r in [0, s), take the filter rows
    i = i0 + s * t, i0 = (r + padding) mod s, alone, so each phase is a
    stride-1 convolution of the gradient (padded) with those rows of the
    flipped filter, inserted s apart into a zeroed grad_input. The spread
    gradient's convolution (_convolution_backward's stride-1 form) would
    multiply (s * s - 1) / (s * s) of its terms by zeros. For a 1x1 filter
    with no padding the one phase with taps sums the same terms in the same
    order as that convolution (bit-identical); with taps in several phases
    each phase sums its own terms only, in the same order."""
    n, c, hx, wx = x_shape
    f, cg, kh, kw = w.shape
    g, fg = groups, f // groups

    def phase(r, s, p, k, extent):
        # Filter rows i0 + s * t (t < taps), output rows r + s * a (a < rows),
        # and the gradient rows phase row a reads: a - lo + t' for t' < taps.
        i0 = (r + p) % s
        taps = len(range(i0, k, s))
        rows = len(range(r, extent, s))
        lo = taps - 1 - (r + p - i0) // s
        return i0, taps, rows, lo

    out = e.filled([n, c, hx, wx], 0.0, grad.dtype)
    for rh in range(stride[0]):
        for rw in range(stride[1]):
            i0, th, rows, loh = phase(rh, stride[0], padding[0], kh, hx)
            j0, tw, cols, low = phase(rw, stride[1], padding[1], kw, wx)
            if not (th and tw and rows and cols):
                continue
            padded = e.place(grad, [n, f, rows + th - 1, cols + tw - 1], [0, 0, loh, low],
                             [1, 1, 1, 1])
            if kh == 1 and kw == 1 and g == 1:
                part = _conv1x1_transposed(e, padded, w)
                out = e.insert(part, out, [0, 0, rh, rw], [1, 1, stride[0], stride[1]])
                continue
            # The phase's filter rows, flipped (t' = taps - 1 - t).
            flipped = _flipped_filter(
                e, w, g, (th, tw),
                (lambda d: f"{i0 + stride[0] * (th - 1)} - {d} * {stride[0]}",
                 lambda d: f"{j0 + stride[1] * (tw - 1)} - {d} * {stride[1]}"))
            part = e.conv2d(padded, flipped, (1, 1), (1, 1), g)
            out = e.insert(part, out, [0, 0, rh, rw], [1, 1, stride[0], stride[1]])
    return out


def _convolution_backward(e, grad, x, w, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    """grad_input: the transposed convolution, the gradient dilated by the
    stride and padded by dilation * (kernel - 1) - padding, convolved (with
    the forward's dilation) with the weight flipped in both spatial
    dimensions and its channels swapped within each group (with a stride,
    phase by phase: _strided_input_grad); grad_weight[f, c,
    i, j] = sum_{n, h, w} grad[n, f, h, w] * padded_x[n, g(f) * C / groups +
    c, h * stride + i * dilation, ...] (a linalg.generic); grad_bias: the sum
    of the gradient over batch and space. A 1-D convolution's, as a 2-D
    one's of height 1; a 3-D convolution's, as its 2-D pieces'
    (_depth_slices)."""
    if len(x.shape) == 5 and len(w.shape) == 5 and not transposed:
        return _convolution3d_backward(e, grad, x, w, stride, padding, dilation, groups,
                                       output_mask)
    if len(x.shape) == 3 and len(w.shape) == 3 and not transposed:
        x4, w4, stride, padding, dilation = _unit_height(e, x, w, stride, padding, dilation)
        g4 = e.reshape(grad, [grad.shape[0], grad.shape[1], 1, grad.shape[2]])
        gx, gw, gb = _convolution_backward(e, g4, x4, w4, bias_sizes, stride, padding,
                                           dilation, transposed, output_padding, groups,
                                           output_mask)
        return (e.reshape(gx, x.shape) if gx is not None else None,
                e.reshape(gw, w.shape) if gw is not None else None, gb)
    (sh, sw), (ph, pw), (dh, dw) = _conv_form(x, w, stride, padding, dilation, transposed,
                                              output_padding, groups)
    n, c, hx, wx = x.shape
    f, cg, kh, kw = w.shape
    g, fg = groups, f // groups
    _, _, ho, wo = grad.shape
    results = [None, None, None]
    if output_mask[0] and (sh > 1 or sw > 1) and dh == 1 and dw == 1:
        results[0] = _strided_input_grad(e, grad, w, x.shape, (sh, sw), (ph, pw), g)
    elif output_mask[0] and kh == 1 and kw == 1 and g == 1:
        results[0] = _conv1x1_transposed(
            e, e.place(grad, [n, f, hx, wx], [0, 0, -ph, -pw], [1, 1, sh, sw]), w)
    elif output_mask[0]:
        spread = e.place(grad, [n, f, hx + dh * (kh - 1), wx + dw * (kw - 1)],
                         [0, 0, dh * (kh - 1) - ph, dw * (kw - 1) - pw], [1, 1, sh, sw])
        flipped = _flipped_filter(e, w, g, (kh, kw), (lambda d: f"{kh - 1} - {d}",
                                                       lambda d: f"{kw - 1} - {d}"))
        results[0] = e.conv2d(spread, flipped, (1, 1), (dh, dw), g)
    if output_mask[1]:
        extent = [(ho - 1) * sh + dh * (kh - 1) + 1, (wo - 1) * sw + dw * (kw - 1) + 1]
        xp = e.pad(x, [0, 0, ph, pw], [0, 0, extent[0] - hx - ph, extent[1] - wx - pw])
        # 2-byte operands: products and sums in float32, rounded once.
        mul_add = _mul_add(x.dtype)
        if g == 1:
            results[1] = e.generic(
                [grad, xp], ["d4, d0, d5, d6",
                             f"d4, d1, {_affine((sh, 'd5'), (dh, 'd2'))}, "
                             f"{_affine((sw, 'd6'), (dw, 'd3'))}", "d0, d1, d2, d3"],
                [f, c, kh, kw], ["parallel"] * 4 + ["reduction"] * 3, mul_add,
                init=e.filled([f, c, kh, kw], 0.0, accumulator(x.dtype)))
        else:
            gw = e.generic(
                [e.reshape(grad, [n, g, fg, ho, wo]), e.reshape(xp, [n, g, cg] + extent)],
                ["d5, d0, d1, d6, d7",
                 f"d5, d0, d2, {_affine((sh, 'd6'), (dh, 'd3'))}, "
                 f"{_affine((sw, 'd7'), (dw, 'd4'))}", "d0, d1, d2, d3, d4"],
                [g, fg, cg, kh, kw], ["parallel"] * 5 + ["reduction"] * 3, mul_add,
                init=e.filled([g, fg, cg, kh, kw], 0.0, accumulator(x.dtype)))
            results[1] = e.reshape(gw, [f, cg, kh, kw])
        results[1] = e.convert(results[1], x.dtype)
    if output_mask[2]:
        results[2] = e.reduce(grad, [0, 2, 3])
    return tuple(results)


# -- Pooling ---------------------------------------------------------------------

def _pool_form(x, kernel, stride, padding, dilation, ceil_mode):
    """(kernel, stride, padding, dilation, output size, padded extent) of a
    2-D pooling over NCHW or a 3-D one over NCDHW, each a list per spatial
    dimension; the output size as PyTorch computes it (with ceil_mode, a
    last window must start inside the input or its left padding). 1-D
    pooling reaches here as 2-D pooling of height 1 (PyTorch's own
    decomposition)."""
    nd = len(x.shape) - 2
    if nd not in (2, 3):
        raise UnsupportedOp(f"{len(x.shape)}-D pooling input (only NCHW and NCDHW)")
    tup = lambda v: ([v] * nd if isinstance(v, int) else  # noqa: E731
                     list(v) * nd if len(v) == 1 else list(v))
    kernel = tup(kernel)
    stride = tup(stride) if stride not in (None, [], ()) else list(kernel)
    padding, dilation = tup(padding), tup(dilation)
    out, extent = [], []
    for size, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        if p > k // 2 or p < 0:
            raise UnsupportedOp(f"padding {padding} with kernel {kernel}")
        o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= size + p:
            o -= 1
        out.append(o)
        extent.append((o - 1) * s + d * (k - 1) + 1)
    return kernel, stride, padding, dilation, out, extent


def in_float32(fn):
    """`fn` computed in float32 on 2-byte float tensors (autocast's): its
    bfloat16 or float16 arguments converted, its float32 results rounded
    back to their type, as PyTorch's CPU kernels of these ops accumulate in
    float32 and store in the input's type."""
    def wrapped(e, *args, **kw):
        halves = [a.dtype for a in args if isinstance(a, Value) and is_half(a.dtype)]
        if not halves:
            return fn(e, *args, **kw)
        args = [e.convert(a, "f32") if isinstance(a, Value) and is_half(a.dtype) else a
                for a in args]
        out = fn(e, *args, **kw)

        def back(v):
            return e.convert(v, halves[0]) if isinstance(v, Value) and v.dtype == "f32" else v
        return tuple(back(v) for v in out) if isinstance(out, tuple) else back(out)
    return wrapped


def _window_reduce(e, xp, k, s, d, shape, kind, attrs=True):
    """The maximum ("max") or sum ("sum") of each window of the padded
    input xp, of output `shape`: linalg.pooling_nchw_max / _sum over NCHW,
    a linalg.generic with the same maps over NCDHW (linalg's 3-D pooling
    ops are NDHWC only)."""
    nd = len(k)
    dt = xp.dtype
    init = e.filled(shape, -math.inf if kind == "max" else 0.0, dt)
    if nd == 2:
        window = e.empty(k, dt)
        out = e.new(shape, dt, hint="pool")
        e.emit(f"  {out.name} = linalg.pooling_nchw_{kind}{e.ATTRS} ins({xp.name}, "
               f"{window.name} : {xp.type}, {window.type}) outs({init.name} : {init.type}) "
               f"-> {out.type}", out.name, e.window_attrs(s, d) if attrs else None)
        return out
    # The window operand gives the reduction dimensions their extents.
    at = ", ".join(_affine((s[i], f"d{2 + i}"), (d[i], f"d{2 + nd + i}")) for i in range(nd))
    outer = ", ".join(f"d{i}" for i in range(nd + 2))
    op = "maximumf" if kind == "max" else "addf"
    return e.generic([xp, e.empty(k, dt)],
                     [f"d0, d1, {at}", ", ".join(f"d{2 + nd + i}" for i in range(nd)), outer],
                     shape, ["parallel"] * (nd + 2) + ["reduction"] * nd,
                     f"{{y}} = arith.{op} {{2}}, {{0}} : {dt}", init=init)


def _max_pool2d_with_indices(e, x, kernel, stride=(), padding=0, dilation=1,
                             ceil_mode=False):
    """The maximum over each window (linalg.pooling_nchw_max on the input
    padded with -inf; over NCDHW a linalg.generic) and its index, the flat
    h * W + w (d * H * W + h * W + w) of the first maximum in the window's
    row-major order that lies inside the input, as PyTorch picks it: the
    smallest in-bounds index whose element equals the maximum, a
    linalg.generic reduction whose result does not depend on the order it
    visits the window in."""
    k, s, p, d, out, extent = _pool_form(x, kernel, stride, padding, dilation, ceil_mode)
    nd = len(k)
    n, c, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    xp = e.pad(x, [0, 0] + p, [0, 0] + [ex - sz - pp for ex, sz, pp in zip(extent, sizes, p)],
               -math.inf)
    shape = [n, c] + out
    val = _window_reduce(e, xp, k, s, d, shape, "max")
    window = e.empty(k, x.dtype)

    def body(a, fresh):
        xv, _, mv, acc = a
        op, const = _Payload(fresh), {}

        def cst(v):
            if v not in const:
                const[v] = op(f"arith.constant {v} : index")
            return const[v]
        inside = op(f"arith.cmpf oeq, {xv}, {mv} : {x.dtype}")
        flat = None
        for i in range(nd):
            o, w = op(f"linalg.index {i + 2} : index"), op(f"linalg.index {i + 2 + nd} : index")
            at = op(f"arith.addi {op(f'arith.muli {o}, {cst(s[i])} : index')}, "
                    f"{op(f'arith.muli {w}, {cst(d[i])} : index')} : index")
            at = op(f"arith.subi {at}, {cst(p[i])} : index")
            ge = op(f"arith.cmpi sge, {at}, {cst(0)} : index")
            lt = op(f"arith.cmpi slt, {at}, {cst(sizes[i])} : index")
            inside = op(f"arith.andi {inside}, {op(f'arith.andi {ge}, {lt} : i1')} : i1")
            flat = at if flat is None else \
                op(f"arith.addi {op(f'arith.muli {flat}, {cst(sizes[i])} : index')}, {at} : index")
        flat = op(f"arith.index_cast {flat} : index to i64")
        least = op(f"arith.minsi {flat}, {acc} : i64")
        result = op(f"arith.select {inside}, {least}, {acc} : i64")
        return op.text(), result

    at = ", ".join(_affine((s[i], f"d{2 + i}"), (d[i], f"d{2 + nd + i}")) for i in range(nd))
    outer = ", ".join(f"d{i}" for i in range(nd + 2))
    idx = e.generic([xp, window, val],
                    [f"d0, d1, {at}", ", ".join(f"d{2 + nd + i}" for i in range(nd)), outer,
                     outer],
                    shape, ["parallel"] * (nd + 2) + ["reduction"] * nd, body,
                    init=e.filled(shape, (1 << 63) - 1, "i64"))
    return val, idx


def _max_pool2d_with_indices_backward(e, grad, x, kernel, stride, padding, dilation,
                                      ceil_mode, indices):
    """Each output's gradient goes to the input element its index names:
    for each window position, the gradients whose index is that position
    are added at stride-spaced offsets into the padded input's gradient (a
    strided extract_slice, an add and an insert_slice, in place), which is
    then cut to the input. An index's window position is computed once (a
    linalg.generic). 2-D over NCHW and 3-D over NCDHW."""
    k, s, p, d, out, extent = _pool_form(x, kernel, stride, padding, dilation, ceil_mode)
    nd = len(k)
    n, c, sizes = x.shape[0], x.shape[1], list(x.shape[2:])

    def body(a, fresh):
        ix, _ = a
        op, const = _Payload(fresh), {}

        def cst(v):
            if v not in const:
                const[v] = op(f"arith.constant {v} : i64")
            return const[v]
        local, ok = None, None
        for i in range(nd):
            o = op.position(i + 2)
            inner = math.prod(sizes[i + 1:])
            v = op(f"arith.divsi {ix}, {cst(inner)} : i64") if inner != 1 else ix
            v = op(f"arith.remsi {v}, {cst(sizes[i])} : i64") if i > 0 else v
            start = op(f"arith.subi {op(f'arith.muli {o}, {cst(s[i])} : i64')}, {cst(p[i])} : i64")
            off = op(f"arith.divsi {op(f'arith.subi {v}, {start} : i64')}, {cst(d[i])} : i64")
            good = op(f"arith.andi {op(f'arith.cmpi sge, {off}, {cst(0)} : i64')}, "
                      f"{op(f'arith.cmpi slt, {off}, {cst(k[i])} : i64')} : i1")
            local = off if local is None else \
                op(f"arith.addi {op(f'arith.muli {local}, {cst(k[i])} : i64')}, {off} : i64")
            ok = good if ok is None else op(f"arith.andi {ok}, {good} : i1")
        result = op(f"arith.select {ok}, {local}, {cst(-1)} : i64")
        return op.text(), result

    outer = ", ".join(f"d{i}" for i in range(nd + 2))
    local = e.generic([indices], [outer, outer], [n, c] + out, ["parallel"] * (nd + 2), body,
                      dtype="i64")
    acc = e.filled([n, c] + extent, 0.0, grad.dtype)
    for flat, pos in enumerate(itertools.product(*(range(kk) for kk in k))):
        part = e.select(e.cmp("eq", local, flat), grad, 0.0)
        offsets = [0, 0] + [pp * dd for pp, dd in zip(pos, d)]
        strides = [1, 1] + s
        here = e.slice_nd(acc, offsets, [n, c] + out, strides)
        acc = e.insert(e.binary("addf", here, part), acc, offsets, strides)
    return e.pad(acc, [0, 0] + [-pp for pp in p],
                 [0, 0] + [sz + pp - ex for sz, pp, ex in zip(sizes, p, extent)])


def _adaptive_weights(e, size, out, dtype):
    """[out, size]: 1 / |window| where input element h is in output o's
    window [floor(o * size / out), ceil((o + 1) * size / out)), else 0."""
    rows = []
    for o in range(out):
        lo, hi = (o * size) // out, -((-(o + 1) * size) // out)
        rows.append([1.0 / (hi - lo) if lo <= i < hi else 0.0 for i in range(size)])
    return e.constant(rows, dtype)


def _adaptive_avg(e, src, sizes, out_sizes, backward):
    """out[n, c, o...] = sum_{i...} src[n, c, i...] * prod_j A_j[o_j, i_j]
    with each spatial dimension's averaging weights A_j (the backward: the
    same sum with each A_j transposed), 2-D or 3-D."""
    nd = len(sizes)
    n, c = src.shape[:2]
    dt = src.dtype
    weights = [_adaptive_weights(e, sz, o, dt) for sz, o in zip(sizes, out_sizes)]
    shape = [n, c] + list(out_sizes if not backward else sizes)
    reduced = [f"d{2 + nd + j}" for j in range(nd)]
    maps = [f"d0, d1, {', '.join(reduced)}"]
    for j in range(nd):
        pair = [f"d{2 + j}", reduced[j]]
        maps.append(", ".join(pair[::-1] if backward else pair))
    maps.append(", ".join(f"d{i}" for i in range(nd + 2)))
    lines, prod = [], "{1}"
    for j in range(2, nd + 1):
        name = "{t}" if j == 2 else f"{{t}}w{j}"
        lines.append(f"{name} = arith.mulf {prod}, {{{j}}} : {dt}")
        prod = name
    lines += [f"{{y}} = arith.mulf {{0}}, {prod} : {dt}",
              f"{{t}}b = arith.addf {{{nd + 1}}}, {{y}} : {dt}"]
    return e.generic([src] + weights, maps, shape, ["parallel"] * (nd + 2) + ["reduction"] * nd,
                     "\n".join(lines), yields="{t}b", init=e.filled(shape, 0.0, dt))


def _adaptive_avg_pool2d(e, x, output_size):
    """out[n, c, o, p] = sum_{h, w} x[n, c, h, w] * A[o, h] * B[p, w] with
    the windows' averaging weights A and B (3-D: a third weight)."""
    if len(x.shape) - 2 != len(output_size) or len(output_size) not in (2, 3):
        raise UnsupportedOp(f"adaptive average pooling of {list(x.shape)} to {output_size}")
    return _adaptive_avg(e, x, list(x.shape[2:]), list(output_size), False)


def _adaptive_avg_pool2d_backward(e, grad, x):
    return _adaptive_avg(e, grad, list(x.shape[2:]), list(grad.shape[2:]), True)


def _avg_pool2d(e, x, kernel, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """The window sums (linalg.pooling_nchw_sum on the zero-padded input;
    over NCDHW a linalg.generic) divided by each window's divisor as
    PyTorch counts it."""
    k, s, p, d, out, extent = _pool_form(x, kernel, stride, padding, 1, ceil_mode)
    n, c, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    xp = e.pad(x, [0, 0] + p, [0, 0] + [ex - sz - pp for ex, sz, pp in zip(extent, sizes, p)])
    total = _window_reduce(e, xp, k, s, d, [n, c] + out, "sum")
    return e.binary("mulf", total, _avg_pool_scale(e, x, k, s, p, out, count_include_pad,
                                                   divisor_override))


def _avg_pool_scale(e, x, k, s, p, out, count_include_pad, divisor_override):
    """[out...]: 1 / the divisor of each window (PyTorch's: the window
    clipped to the padded input, or to the input without count_include_pad)."""
    sizes = x.shape[2:]
    if divisor_override:
        return 1.0 / divisor_override

    def rows(at):
        if len(at) == len(out):
            size = 1
            for o, st, pd, kk, n in zip(at, s, p, k, sizes):
                start = o * st - pd
                end = min(start + kk, n + pd)
                if not count_include_pad:
                    start, end = max(start, 0), min(end, n)
                size *= end - start
            return 1.0 / size
        return [rows(at + [o]) for o in range(out[len(at)])]
    return e.constant(rows([]), x.dtype)


def _avg_pool2d_backward(e, grad, x, kernel, stride, padding, ceil_mode,
                         count_include_pad, divisor_override):
    """The gradient scaled by each window's 1 / divisor, spread over its
    window: dilated by the stride, padded by kernel - 1 - padding and summed
    over kernel-sized windows (linalg.pooling_nchw_sum; over NCDHW a
    linalg.generic)."""
    k, s, p, d, out, extent = _pool_form(x, kernel, stride, padding, 1, ceil_mode)
    n, c, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    scaled = e.binary("mulf", grad, _avg_pool_scale(e, x, k, s, p, out,
                                                     count_include_pad, divisor_override))
    spread = e.place(scaled, [n, c] + [sz + kk - 1 for sz, kk in zip(sizes, k)],
                     [0, 0] + [kk - 1 - pp for kk, pp in zip(k, p)], [1, 1] + s)
    return _window_reduce(e, spread, k, [1] * len(k), [1] * len(k), [n, c] + sizes, "sum",
                          attrs=False)


# -- Indexing --------------------------------------------------------------------

def _gather(e, x, dim, index, sparse_grad=False):
    """out[..., i, ...] = x[..., index[..., i, ...], ...] along `dim`: a
    linalg.generic over the index that reads x with tensor.extract (an index
    outside [0, size) is clamped: PyTorch raises on it)."""
    rank = len(x.shape)
    dim %= rank
    if len(index.shape) != rank or any(index.shape[i] > x.shape[i]
                                       for i in range(rank) if i != dim):
        raise UnsupportedOp(f"gather of index {list(index.shape)} from {list(x.shape)}")
    index = e.convert(index, "i64")
    ident = ", ".join(f"d{i}" for i in range(rank))

    def body(a, fresh):
        op = _Payload(fresh)
        at = op.clamped_index(a[0], x.shape[dim])
        coords = [at if i == dim else op(f"linalg.index {i} : index") for i in range(rank)]
        result = op(f"tensor.extract {x.name}[{', '.join(coords)}] : {x.type}")
        return op.text(), result

    return e.generic([index], [ident, ident], list(index.shape), ["parallel"] * rank, body,
                     dtype=x.dtype)


def _repeat(e, x, repeats):
    """x tiled `repeats` times along each dimension (leading ones added as
    size 1): a linalg.generic copy into [r0, s0, r1, s1, ...], reshaped to
    [r0 * s0, r1 * s1, ...]."""
    reps = list(repeats)
    if len(reps) < len(x.shape):
        raise UnsupportedOp(f"repeat of {list(x.shape)} by {reps}")
    shape = [1] * (len(reps) - len(x.shape)) + list(x.shape)
    x = e.reshape(x, shape)
    tiled = [v for pair in zip(reps, shape) for v in pair]
    out = e.generic([x], [", ".join(f"d{2 * i + 1}" for i in range(len(shape))),
                          ", ".join(f"d{i}" for i in range(len(tiled)))],
                    tiled, ["parallel"] * len(tiled), "", yields="{0}", dtype=x.dtype)
    return e.reshape(out, [r * sz for r, sz in zip(reps, shape)])


def _before(op, a, b, dtype, descending):
    """i1: a sorts strictly before b (ascending: a < b, NaN after every
    number, as PyTorch orders them; descending: a > b, NaN first)."""
    if not is_float(dtype):
        return op(f"arith.cmpi {'sgt' if descending else 'slt'}, {a}, {b} : {dtype}")
    first, second = (b, a) if descending else (a, b)
    less = op(f"arith.cmpf olt, {first}, {second} : {dtype}")
    nan_second = op(f"arith.cmpf uno, {second}, {second} : {dtype}")
    num_first = op(f"arith.cmpf ord, {first}, {first} : {dtype}")
    return op(f"arith.ori {less}, {op(f'arith.andi {nan_second}, {num_first} : i1')} : i1")


def _sort_indices(e, x, dim, descending, k=None):
    """The indices of a stable sort of x along `dim` (the first k of them):
    each element's rank, the number of elements that sort before it or tie
    with it at a smaller index (a linalg.generic over pairs), then for each
    position p the index whose rank is p (a second one). O(L^2) per sorted
    row of length L: sorting networks are not expressible in linalg, and a
    rank is a pure, order-independent reduction that recomputes bit-identically."""
    rank = len(x.shape)
    dim %= rank
    if not (is_float(x.dtype) or x.dtype in ("i64", "i32")) or rank == 0:
        raise UnsupportedOp(f"a sort of {x.dtype} {list(x.shape)}")
    size = x.shape[dim]
    k = size if k is None else k
    dims = [f"d{i}" for i in range(rank)]
    ident = ", ".join(dims)
    other = ", ".join(f"d{rank}" if i == dim else dims[i] for i in range(rank))

    def rank_body(a, fresh):
        xi, xj, acc = a
        op = _Payload(fresh)
        i, j = op(f"linalg.index {dim} : index"), op(f"linalg.index {rank} : index")
        true = op("arith.constant true")
        not_after = op(f"arith.xori {_before(op, xi, xj, x.dtype, descending)}, {true} : i1")
        ahead = op(f"arith.andi {op(f'arith.cmpi slt, {j}, {i} : index')}, {not_after} : i1")
        counts = op(f"arith.ori {_before(op, xj, xi, x.dtype, descending)}, {ahead} : i1")
        result = op(f"arith.addi {acc}, {op(f'arith.extui {counts} : i1 to i64')} : i64")
        return op.text(), result

    ranks = e.generic([x, x], [ident, other, ident], list(x.shape),
                      ["parallel"] * rank + ["reduction"], rank_body,
                      init=e.filled(list(x.shape), 0, "i64"))

    def pick_body(a, fresh):
        r, acc = a
        op = _Payload(fresh)
        p = op.position(dim)
        j = op.position(rank)
        result = op(f"arith.select {op(f'arith.cmpi eq, {r}, {p} : i64')}, {j}, {acc} : i64")
        return op.text(), result

    shape = [k if i == dim else s for i, s in enumerate(x.shape)]
    return e.generic([ranks], [other, ident], shape, ["parallel"] * rank + ["reduction"],
                     pick_body, init=e.filled(shape, 0, "i64"))


def _arg_max_min(kind):
    """argmax / argmin: the first index of the maximum (minimum) along
    `dim` (max.dim's / min.dim's), over the flattened tensor without one."""
    def f(e, x, dim=None, keepdim=False):
        if dim is None:
            flat = e.reshape(x, [x.numel])
            idx = _max_min_dim(kind)(e, flat, 0, keepdim=False)[1]
            return e.reshape(idx, [1] * len(x.shape) if keepdim else [])
        return _max_min_dim(kind)(e, x, dim, keepdim)[1]
    return f


def _max_min_dim(kind):
    """max.dim / min.dim: the maximum (minimum) along `dim` (NaN if any,
    as PyTorch's) and the first index that holds it (a linalg.generic
    reduction keeping the smallest such index, as PyTorch's CPU kernel
    returns); the backward of the values comes decomposed."""
    def f(e, x, dim, keepdim=False):
        if x.dtype == "i1":
            raise UnsupportedOp(f"{kind}.dim of booleans")
        rank = len(x.shape)
        dim %= rank
        values = e.reduce(x, [dim], kind, keepdim=True)
        ident = ", ".join(f"d{i}" for i in range(rank))
        kept = ", ".join("0" if i == dim else f"d{i}" for i in range(rank))
        shape = [1 if i == dim else s for i, s in enumerate(x.shape)]

        def body(a, fresh):
            xi, v, acc = a
            op = _Payload(fresh)
            i = op.position(dim)
            if is_float(x.dtype):
                nan_v = op(f"arith.cmpf uno, {v}, {v} : {x.dtype}")
                nan_x = op(f"arith.cmpf uno, {xi}, {xi} : {x.dtype}")
                # v NaN: the first NaN; else the first x equal to v
                eq = op(f"arith.cmpf oeq, {xi}, {v} : {x.dtype}")
                hit = op(f"arith.select {nan_v}, {nan_x}, {eq} : i1")
            else:
                hit = op(f"arith.cmpi eq, {xi}, {v} : {x.dtype}")
            result = op(f"arith.select {hit}, {op(f'arith.minsi {i}, {acc} : i64')}, {acc}"
                        f" : i64")
            return op.text(), result

        idx = e.generic([x, values], [ident, kept, kept], shape,
                        ["reduction" if i == dim else "parallel" for i in range(rank)], body,
                        init=e.filled(shape, x.shape[dim], "i64"))
        if not keepdim:
            out = [s for i, s in enumerate(x.shape) if i != dim]
            values, idx = e.reshape(values, out), e.reshape(idx, out)
        return values, idx
    return f


def _sort(e, x, dim=-1, descending=False, stable=None):
    """values, indices of a stable sort along `dim` (_sort_indices); the
    values gathered at the indices. Its backward (scatter.src of the
    gradient at the indices) is mapped."""
    idx = _sort_indices(e, x, dim, descending)
    return _gather(e, x, dim, idx), idx


def _histc(e, x, bins=100, min=0, max=0):
    """torch.histc: how many of x's elements fall in each of `bins` equal
    bins between min and max (the last bin closed; elements outside,
    NaNs included, not counted), in x's float type. The bin edges are
    PyTorch's own (torch.linspace in x's type, which its kernel's search
    compares with), so an element on an edge lands where PyTorch puts it:
    bin b counts edge[b] <= x < edge[b + 1], the last edge[bins - 1] <= x
    <= max. A linalg.generic over (bin, element), the elements reduced. A
    mixture of experts' load-balancing loss counts its tokens per expert
    so; it has no gradient."""
    import torch
    if not is_float(x.dtype):
        raise UnsupportedOp(f"histc of {x.dtype} (PyTorch's CPU kernel takes floats only)")
    lo, hi = float(min), float(max)
    if lo == hi == 0.0:
        raise UnsupportedOp("histc with min = max = 0 (the bins span the data's own range)")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise UnsupportedOp(f"histc with min {lo} > max {hi}")
    edges = torch.linspace(lo, hi, bins + 1, dtype=torch_dtype(x.dtype)).tolist()
    flat = e.reshape(x, [x.numel])
    lows = e.constant(edges[:-1], x.dtype)
    highs = e.constant(edges[1:], x.dtype)
    t = x.dtype

    def body(a, fresh):
        xi, low, high, acc = a
        op = _Payload(fresh)
        b = op("linalg.index 0 : index")
        last = op(f"arith.cmpi eq, {b}, {op(f'arith.constant {bins - 1} : index')} : index")
        above = op(f"arith.cmpf oge, {xi}, {low} : {t}")
        below = op(f"arith.cmpf olt, {xi}, {high} : {t}")
        at_max = op(f"arith.andi {last}, {op(f'arith.cmpf ole, {xi}, {high} : {t}')} : i1")
        hit = op(f"arith.andi {above}, {op(f'arith.ori {below}, {at_max} : i1')} : i1")
        one = op(f"arith.constant 1.0 : {t}")
        zero = op(f"arith.constant 0.0 : {t}")
        count = op(f"arith.addf {acc}, {op(f'arith.select {hit}, {one}, {zero} : {t}')} : {t}")
        return op.text(), count

    return e.generic([flat, lows, highs], ["d1", "d0", "d0", "d0"], [bins],
                     ["parallel", "reduction"], body, init=e.filled([bins], 0.0, t))


def _expert_masks(e, offs, rows, dtype):
    """For a grouped matmul's `rows` rows sorted by expert and the running
    ends `offs` of each expert's rows, one [rows, 1] mask of `dtype` per
    expert: 1 on its rows [offs[i - 1], offs[i]), 0 elsewhere (rows at or
    past the last end belong to none). A row's expert is how many ends lie
    at or before it: a linalg.generic over (row, expert), experts reduced."""
    count = offs.shape[0]
    ends = e.convert(offs, "i64")

    def body(a, fresh):
        end, acc = a
        op = _Payload(fresh)
        row = op.position(0)
        past = op(f"arith.extui {op(f'arith.cmpi sle, {end}, {row} : i64')} : i1 to i64")
        expert = op(f"arith.addi {acc}, {past} : i64")
        return op.text(), expert

    expert = e.generic([ends], ["d1", "d0"], [rows], ["parallel", "reduction"], body,
                       init=e.filled([rows], 0, "i64"))
    expert = e.reshape(expert, [rows, 1])
    return [e.convert(e.cmp("eq", expert, e.splat(i, [], "i64")), dtype) for i in range(count)]


def _per_expert(e, x, w, offs):
    """(mask of expert i's rows of x, w[i] as [K, N]) for each expert i of
    a grouped matmul (_expert_masks)."""
    for i, mask in enumerate(_expert_masks(e, offs, x.shape[0], x.dtype)):
        yield mask, e.reshape(e.extract_slice(w, 0, i, 1), list(w.shape[1:]))


def _grouped_mm(e, x, w, offs):
    """transformers' grouped_mm_fallback (a mixture of experts' default
    experts on the CPU in float32, transformers 5): x [S, K] with its rows
    sorted by expert, w [E, K, N], offs [E] the running ends of each
    expert's rows; row r is x[r] @ w[e] for its expert e, rows past
    offs[E - 1] zero. The offsets are values, so each expert's product is
    a dense [S, K] x [K, N] one of x with the other experts' rows zeroed,
    and the E products are added (each row is nonzero in one of them, so
    the sum is that product's row exactly): E times the multiply-adds of
    the rows themselves."""
    out = None
    for mask, weight in _per_expert(e, x, w, offs):
        part = e.matmul(e.binary("mulf", x, mask), weight)
        out = part if out is None else e.binary("addf", out, part)
    return out


def _grouped_mm_backward(e, x, w, offs, grad):
    """grouped_mm_fallback's backward: the input's gradient, row r
    grad[r] @ w[e]^T for its expert e, and the weight's, expert e's slice
    the product of its rows of x (transposed) with theirs of grad (zero for
    an expert without rows)."""
    grad_x, grad_w = None, []
    for mask, weight in _per_expert(e, x, w, offs):
        part = e.binary("mulf", e.matmul(grad, e.transpose(weight, [1, 0])), mask)
        grad_x = part if grad_x is None else e.binary("addf", grad_x, part)
        mine = e.matmul(e.transpose(e.binary("mulf", x, mask), [1, 0]), grad)
        grad_w.append(e.reshape(mine, [1] + list(mine.shape)))
    return grad_x, e.concat(grad_w, 0)


def _topk(e, x, k, dim=-1, largest=True, sorted=True):
    """The k largest (smallest) values along `dim` and their indices, in
    sorted order, ties to the smaller index: the first k of a stable sort
    (PyTorch's kernel may pick other indices among equal values)."""
    idx = _sort_indices(e, x, dim, largest, k)
    return _gather(e, x, dim, idx), idx


def _scatter_src(e, dest, dim, index, src, accumulate=False):
    """dest with dest[..., index[..., j, ...], ...] = src[..., j, ...] along
    `dim` (the last such j wins, as PyTorch's CPU kernel writes in order),
    or += with `accumulate` (scatter_add, added in order of j): a
    linalg.generic that reduces over j. The index covers `dest` in every
    other dimension; src is read where the index is."""
    rank = len(dest.shape)
    dim %= rank
    if len(index.shape) != rank or len(src.shape) != rank or any(
            index.shape[i] != dest.shape[i] for i in range(rank) if i != dim) or any(
            index.shape[i] > src.shape[i] for i in range(rank)):
        raise UnsupportedOp(f"scatter of {list(src.shape)} at index {list(index.shape)} into "
                            f"{list(dest.shape)}")
    index = e.convert(index, "i64")
    src = e.convert(e.slice_nd(src, [0] * rank, list(index.shape)), dest.dtype)
    dims = [f"d{i}" for i in range(rank)]
    ident = ", ".join(dims)
    jmap = ", ".join(f"d{rank}" if i == dim else dims[i] for i in range(rank))

    def body(a, fresh):
        ix, sv, acc = a
        op = _Payload(fresh)
        pos = op.position(dim)
        new = sv
        if accumulate:
            new = op(f"arith.{'addf' if is_float(dest.dtype) else 'addi'} {acc}, {sv} : "
                     f"{dest.dtype}")
        result = op(f"arith.select {op(f'arith.cmpi eq, {ix}, {pos} : i64')}, {new}, "
                    f"{acc} : {dest.dtype}")
        return op.text(), result

    return e.generic([index, src], [jmap, jmap, ident], list(dest.shape),
                     ["parallel"] * rank + ["reduction"], body, init=dest)


def _scatter_add(e, dest, dim, index, src):
    return _scatter_src(e, dest, dim, index, src, accumulate=True)


def _scatter_value(e, src, dim, index, value):
    """src with src[..., index[..., j, ...], ...] = value along `dim`: a
    boolean mask (a linalg.generic that ors, over j, index == position) and
    a select. The index covers `src` in every other dimension."""
    rank = len(src.shape)
    dim %= rank
    if len(index.shape) != rank or any(index.shape[i] != src.shape[i]
                                       for i in range(rank) if i != dim):
        raise UnsupportedOp(f"scatter of index {list(index.shape)} into {list(src.shape)}")
    index = e.convert(index, "i64")
    dims = [f"d{i}" for i in range(rank)]
    imap = ", ".join(f"d{rank}" if i == dim else dims[i] for i in range(rank))

    def body(a, fresh):
        ix, acc = a
        pos = fresh("ix")
        at = fresh("ix")
        eq = fresh("ix")
        y = fresh("ix")
        return (f"{pos} = linalg.index {dim} : index\n"
                f"{at} = arith.index_cast {pos} : index to i64\n"
                f"{eq} = arith.cmpi eq, {ix}, {at} : i64\n"
                f"{y} = arith.ori {acc}, {eq} : i1"), y

    hit = e.generic([index], [imap, ", ".join(dims)], list(src.shape),
                    ["parallel"] * rank + ["reduction"], body,
                    init=e.filled(list(src.shape), False, "i1"))
    return e.select(hit, value, src)


def _log_softmax(e, x, dim, half_to_float=False):
    shifted = e.binary("subf", x, e.reduce(x, [dim], "max", keepdim=True))
    total = e.reduce(e.unary("math.exp", shifted), [dim], keepdim=True)
    return e.binary("subf", shifted, e.unary("math.log", total))


def _squeeze(e, a, dims=None):
    rank = len(a.shape)
    dims = set(range(rank)) if dims is None else {d % rank for d in
                                                  ([dims] if isinstance(dims, int) else dims)}
    return e.reshape(a, [s for i, s in enumerate(a.shape) if i not in dims or s != 1])


def _batch_norm_train(e, x, weight, bias, eps):
    """Training-mode batch norm over all dimensions but the channels (1):
    (normalized output, batch mean, 1 / sqrt(biased variance + eps)). A
    2-byte input (autocast's) is normalized in float32, and the output and
    statistics rounded to its type (the types the traced graph gives them)."""
    if is_half(x.dtype):
        outs = _batch_norm_train(e, e.convert(x, "f32"), weight, bias, eps)
        return tuple(e.convert(v, x.dtype) for v in outs)
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


def _any(e, a, dims=None, keepdim=False):
    """True where any element over `dims` (all dimensions when None) is
    nonzero: the attention guard for fully masked rows."""
    return e.reduce(a, _dims(dims, len(a.shape)), "any", keepdim=keepdim)


def _constant_pad_nd(e, x, pad, value=0):
    """F.pad's constant mode: `pad` holds (before, after) pairs from the last
    dimension backwards; a negative amount trims."""
    rank = len(x.shape)
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise UnsupportedOp(f"pad {list(pad)} of a {rank}-D tensor")
    lo, hi = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        lo[rank - 1 - i], hi[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return e.pad(x, lo, hi, value)


@reads_empty
def _slice_scatter(e, dest, src, dim=0, start=None, end=None, step=1):
    """dest with dest[..., start:end:step, ...] = src along `dim` (the
    backward of a slice): a strided tensor.insert_slice (dest itself
    when src is empty)."""
    if isinstance(src, EmptyTensor):
        return dest
    dim %= len(dest.shape)
    n = dest.shape[dim]
    start = 0 if start is None else (max(start + n, 0) if start < 0 else min(start, n))
    offsets = [0] * len(dest.shape)
    offsets[dim] = start
    strides = [1] * len(dest.shape)
    strides[dim] = step
    return e.insert(e.convert(src, dest.dtype), dest, offsets, strides)


class _AdvancedIndex:
    """The layout of x[i0, i1, ...] with integer index tensors (PyTorch's
    advanced indexing; None keeps a dimension whole), shared by indexing
    and its backward (index_put): the index tensors broadcast to one shape
    `b`, which takes the place of the indexed dimensions `at` when they are
    adjacent and comes first otherwise; `before` and `after` are x's kept
    dimensions on either side of it, `shape` the result's."""

    def __init__(self, e, x_shape, indices):
        rank = len(x_shape)
        indices = list(indices) + [None] * (rank - len(indices))
        self.at = [i for i, ix in enumerate(indices) if ix is not None]
        if not self.at:
            raise UnsupportedOp("indexing without an index tensor")
        for i in self.at:
            if indices[i].dtype == "i1":
                raise UnsupportedOp("indexing with a boolean mask (its result's shape "
                                    "depends on the mask's values)")
        self.b = list(broadcast_shape(*[indices[i].shape for i in self.at]))
        self.values = [e.convert(e.broadcast_to(indices[i], self.b), "i64")
                       for i in self.at]
        rest = [i for i in range(rank) if indices[i] is None]
        adjacent = self.at == list(range(self.at[0], self.at[-1] + 1))
        first = self.at[0] if adjacent else 0
        self.before = [i for i in rest if i < first]
        self.after = [i for i in rest if i >= first]
        self.shape = ([x_shape[i] for i in self.before] + self.b +
                      [x_shape[i] for i in self.after])

    @staticmethod
    def wrapped(op, value, size):
        """An i64 index `value` of a dimension of `size`, a negative one
        counted from the end."""
        zero = op("arith.constant 0 : i64")
        neg = op(f"arith.cmpi slt, {value}, {zero} : i64")
        wrapped = op(f"arith.addi {value}, {op(f'arith.constant {size} : i64')} : i64")
        return op(f"arith.select {neg}, {wrapped}, {value} : i64")


def _index_tensor(e, x, indices):
    """x[i0, i1, ...] (see _AdvancedIndex): a linalg.generic over the
    result that reads x with tensor.extract; a negative index counts from
    the end, and one outside the dimension is clamped (PyTorch raises)."""
    ix = _AdvancedIndex(e, x.shape, indices)
    rank, out_rank = len(x.shape), len(ix.shape)
    bdims = [f"d{len(ix.before) + j}" for j in range(len(ix.b))]
    ident = ", ".join(f"d{i}" for i in range(out_rank))

    def body(a, fresh):
        op = _Payload(fresh)
        coords = {}
        for k, i in enumerate(ix.at):
            coords[i] = op.clamped_index(ix.wrapped(op, a[k], x.shape[i]), x.shape[i])
        for pos, i in enumerate(ix.before):
            coords[i] = op(f"linalg.index {pos} : index")
        for pos, i in enumerate(ix.after):
            coords[i] = op(f"linalg.index {len(ix.before) + len(ix.b) + pos} : index")
        result = op(f"tensor.extract {x.name}[{', '.join(coords[i] for i in range(rank))}] "
                    f": {x.type}")
        return op.text(), result

    maps = [", ".join(bdims) for _ in ix.at] + [ident]
    return e.generic(ix.values, maps, ix.shape, ["parallel"] * out_rank, body,
                     dtype=x.dtype)


def _rand(e, size, generator=None, **kw):
    """Uniform [0, 1) noise (ViT-MAE's random masking): remat.rng_uniform,
    recomputed bit-identically once -remat-thread-rng makes it Philox."""
    if generator is not None:
        raise UnsupportedOp("rand with a generator")
    dtype = _result_dtype(e, kw)
    if dtype not in ("f32", "f64"):
        raise UnsupportedOp(f"rand of {dtype}")
    return e.rng_uniform(list(size), dtype)


def _bernoulli(e, x, p, generator=None):
    """1.0 with probability p, else 0.0, in x's shape (stochastic depth's
    and in-place dropout's mask): remat.rng_uniform < p."""
    if generator is not None:
        raise UnsupportedOp("bernoulli with a generator")
    if not is_float(x.dtype):
        raise UnsupportedOp(f"bernoulli of a {x.dtype} tensor")
    return e.convert(e.select(e.cmp("olt", e.rng_uniform(x.shape), float(p)), 1.0, 0.0),
                     x.dtype)


def _empty(e, size, *args, **kw):
    """An uninitialized tensor of PyTorch's (empty, empty_permuted,
    new_empty_strided): zeros here, so that a program reading it is still
    deterministic; written only as the shape of an op's result (bernoulli,
    copy), it is dead code."""
    return e.splat(0, list(size), _result_dtype(e, kw))


def _copy(e, dest, src, non_blocking=False):
    """dest's shape and element type, src's values (broadcast)."""
    return e.convert(e.broadcast_to(src, dest.shape), dest.dtype)


def _row_major(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(reversed(strides))


def _strided_block(size, stride):
    """Whether elements `stride` apart over `size` are one row-major block
    (dimensions of size 1 take any stride)."""
    return all(st == rm for d, st, rm in zip(size, stride, _row_major(size)) if d != 1)


def _storage_of(e, what):
    """The node's first argument's numel, after checking that its storage is
    its elements in row-major order (as_strided addresses the storage, and a
    Value is its logical elements)."""
    val = e.node.args[0].meta.get("val") if e.node is not None else None
    if val is None or not hasattr(val, "is_contiguous"):
        raise UnsupportedOp(f"{what} without its input's recorded layout")
    if not val.is_contiguous() or val.storage_offset() != 0:
        raise UnsupportedOp(f"{what} of a non-contiguous tensor (strides "
                            f"{list(val.stride())}, offset {val.storage_offset()})")
    return val.numel()


def _check_strided_view(what, size, stride, offset, numel):
    """The element count of the view (size, stride, offset) of `numel`
    elements; an UnsupportedOp if it reaches outside them."""
    count = math.prod(size)
    last = offset + sum((d - 1) * st for d, st in zip(size, stride)) if count else offset
    if count and (offset < 0 or last >= numel or min(stride, default=0) < 0):
        raise UnsupportedOp(f"{what} {size} {stride} {offset} outside {numel} elements")
    return count


def _strided_address(op, offset, stride, first_dim):
    """In a linalg.generic payload: the flat address offset + sum(index(d) *
    stride) of the view element at loop dimensions first_dim, ..."""
    at = op(f"arith.constant {offset} : index")
    for i, st in enumerate(stride):
        term = op(f"arith.muli {op(f'linalg.index {i + first_dim} : index')}, "
                  f"{op(f'arith.constant {st} : index')} : index")
        at = op(f"arith.addi {at}, {term} : index")
    return at


def _as_strided(e, x, size, stride, storage_offset=0):
    """The view whose element i is x's (row-major) element storage_offset +
    sum(i_k * stride_k): a reshape when that is x's elements in order, a
    slice and a reshape when a row-major block, else a linalg.generic that
    reads x with tensor.extract."""
    numel = _storage_of(e, "as_strided")
    size, stride, offset = list(size), list(stride), storage_offset or 0
    count = _check_strided_view("as_strided", size, stride, offset, numel)
    flat = e.reshape(x, [numel])
    if _strided_block(size, stride):
        return e.reshape(e.slice_nd(flat, [offset], [count]), size)
    rank = len(size)

    def body(a, fresh):
        op = _Payload(fresh)
        at = _strided_address(op, offset, stride, 0)
        result = op(f"tensor.extract {flat.name}[{at}] : {flat.type}")
        return op.text(), result

    return e.generic([], [", ".join(f"d{i}" for i in range(rank))], size,
                     ["parallel"] * rank, body, dtype=x.dtype)


def _as_strided_scatter(e, x, src, size, stride, storage_offset=0):
    """x with the as_strided view (size, stride, storage_offset) replaced
    by src (the backward of as_strided): a tensor.insert_slice into x
    flattened when the view is a row-major block of x's elements, else a
    linalg.generic over x's elements that reduces over the view's: the
    element of src whose address is this one's, if any (PyTorch leaves
    overlapping views' writes undefined; here the last in row-major order
    wins)."""
    numel = _storage_of(e, "as_strided_scatter")
    size, stride, offset = list(size), list(stride), storage_offset or 0
    count = _check_strided_view("as_strided_scatter", size, stride, offset, numel)
    flat = e.reshape(x, [numel])
    part = e.convert(e.broadcast_to(src, size), x.dtype)
    if _strided_block(size, stride):
        part = e.reshape(part, [count])
        if count == numel:
            return e.reshape(part, x.shape)
        return e.reshape(e.insert(part, flat, [offset]), x.shape)
    rank = len(size)

    def body(a, fresh):
        value, acc = a
        op = _Payload(fresh)
        at = _strided_address(op, offset, stride, 1)
        hit = op(f"arith.cmpi eq, {at}, {op('linalg.index 0 : index')} : index")
        result = op(f"arith.select {hit}, {value}, {acc} : {x.dtype}")
        return op.text(), result

    out = e.generic([part], [", ".join(f"d{i + 1}" for i in range(rank)), "d0"], [numel],
                    ["parallel"] + ["reduction"] * rank, body, init=flat)
    return e.reshape(out, x.shape)


def _flash_attention_cpu_backward(e, grad, q, k, v, out, logsumexp, dropout_p, is_causal,
                                  attn_mask=None, scale=None):
    """The gradients of scaled_dot_product_attention's CPU flash kernel:
    dV = P^T dO, dS = P * (dO V^T - rowsum(dO * O)), dQ = dS K * scale,
    dK = dS^T Q * scale, batch matmuls over the leading dimensions
    flattened. The forward's core ATen decomposition returns, in the place
    of the kernel's logsumexp, the attention weights P themselves (after
    its mask, causal mask and guard for fully masked rows), which the
    backward reads as they are; the kernel's own [..., L] logsumexp (its
    forward not decomposed) is not mapped."""
    if dropout_p:
        raise UnsupportedOp(f"flash attention backward with dropout_p={dropout_p}")
    *lead, length, depth = q.shape
    keys = k.shape[-2]
    if list(k.shape[:-2]) != lead or list(v.shape[:-2]) != lead:
        raise UnsupportedOp(f"flash attention backward of query {list(q.shape)}, key "
                            f"{list(k.shape)} and value {list(v.shape)} (no broadcast or "
                            f"grouped heads)")
    bh = math.prod(lead)
    flat = lambda x: e.reshape(x, [bh] + list(x.shape[-2:]))  # noqa: E731
    q3, k3, v3, g3, o3 = (flat(x) for x in (q, k, v, grad, out))
    s = float(scale) if scale is not None else 1.0 / math.sqrt(depth)
    if list(logsumexp.shape) != lead + [length, keys]:
        raise UnsupportedOp(f"flash attention backward with a saved logsumexp of shape "
                            f"{list(logsumexp.shape)} (only the decomposed forward's "
                            f"attention weights, {lead + [length, keys]})")
    p = e.reshape(logsumexp, [bh, length, keys])
    dv = e.matmul(e.transpose(p, [0, 2, 1]), g3, "batch_matmul")
    dp = e.matmul(g3, e.transpose(v3, [0, 2, 1]), "batch_matmul")
    rows = e.reduce(e.binary("mulf", g3, o3), [2], keepdim=True)
    ds = e.binary("mulf", p, e.binary("subf", dp, rows))
    dq = e.binary("mulf", e.matmul(ds, k3, "batch_matmul"), s)
    dk = e.binary("mulf", e.matmul(e.transpose(ds, [0, 2, 1]), q3, "batch_matmul"), s)
    return (e.reshape(dq, q.shape), e.reshape(dk, k.shape), e.reshape(dv, v.shape))


def ops():
    """ATen overload -> emitter function(e, *args, **kwargs)."""
    import torch
    aten = torch.ops.aten
    identity = lambda e, a, *args, **kw: a  # noqa: E731
    table = {
        # views and copies: values are immutable, so these are renames
        aten.detach.default: identity, aten.alias.default: identity,
        aten.clone.default: identity, aten.lift_fresh_copy.default: identity,
        aten._to_copy.default: _to_copy,
        # Inductor's decompositions write float conversions (autocast's) as
        torch.ops.prims.convert_element_type.default:
            lambda e, a, dtype: _to_copy(e, a, dtype=dtype),
        aten.view.default: lambda e, a, s: e.reshape(a, _sizes(s, a)),
        aten._unsafe_view.default: lambda e, a, s: e.reshape(a, _sizes(s, a)),
        aten.reshape.default: lambda e, a, s: e.reshape(a, _sizes(s, a)),
        aten.squeeze.dim: _squeeze, aten.squeeze.dims: _squeeze,
        aten.squeeze.default: _squeeze,
        aten.unsqueeze.default: lambda e, a, d: e.reshape(
            a, list(a.shape[:d % (len(a.shape) + 1)]) + [1]
            + list(a.shape[d % (len(a.shape) + 1):])),
        aten.t.default: lambda e, a: e.transpose(a, [1, 0]) if len(a.shape) == 2 else a,
        aten.transpose.int: lambda e, a, d0, d1: e.transpose(
            a, _swap(len(a.shape), d0, d1)),
        aten.permute.default: lambda e, a, p: e.transpose(a, p),
        aten.expand.default: _expand,
        aten.slice.Tensor: _slice,
        aten.slice_scatter.default: _slice_scatter,
        aten.as_strided.default: _as_strided,
        aten.as_strided_scatter.default: _as_strided_scatter,
        aten.constant_pad_nd.default: _constant_pad_nd,
        aten.copy.default: _copy,
        aten.split.Tensor: _split,
        aten.split_with_sizes.default: _split,
        aten.cat.default: _cat,
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
        aten.div.Tensor_mode: _div_mode, aten.div.Scalar_mode: _div_mode,
        aten.fmod.Scalar: _fmod, aten.fmod.Tensor: _fmod,
        aten.remainder.Scalar: _remainder, aten.remainder.Tensor: _remainder,
        aten.neg.default: _neg,
        aten.pow.Tensor_Scalar: _pow,
        aten.pow.Tensor_Tensor: _pow_tensor, aten.pow.Scalar: _pow_tensor,
        aten.exp.default: lambda e, a: e.unary("math.exp", a),
        aten.floor.default: _rounding("math.floor"), aten.ceil.default: _rounding("math.ceil"),
        aten.trunc.default: _rounding("math.trunc"),
        aten.round.default: _rounding("math.roundeven"),
        aten.tanh.default: lambda e, a: e.unary("math.tanh", a),
        aten.rsqrt.default: lambda e, a: e.unary("math.rsqrt", a),
        aten.sqrt.default: lambda e, a: e.unary("math.sqrt", a),
        aten.relu.default: lambda e, a: e.binary("maximumf", a, 0),
        aten.maximum.default: lambda e, a, b: e.binary("maximumf", a, b),
        aten.minimum.default: lambda e, a, b: e.binary("minimumf", a, b),
        aten.clamp.default: _clamp,
        aten.clamp_min.default: lambda e, a, lo: _clamp(e, a, lo, None),
        aten.clamp_max.default: lambda e, a, hi: _clamp(e, a, None, hi),
        aten.hardtanh.default: lambda e, a, lo=-1.0, hi=1.0: _clamp(e, a, lo, hi),
        aten.hardtanh_backward.default: _hardtanh_backward,
        aten.sigmoid.default: _sigmoid,
        aten.sigmoid_backward.default: _sigmoid_backward,
        aten.silu.default: lambda e, a: e.binary("mulf", a, _sigmoid(e, a)),
        aten.silu_backward.default: _silu_backward,
        aten.erf.default: lambda e, a: e.unary("math.erf", a),
        aten.abs.default: _abs,
        aten.sign.default: _sign,
        aten.sin.default: lambda e, a: e.unary("math.sin", a),
        aten.cos.default: lambda e, a: e.unary("math.cos", a),
        aten.reciprocal.default: lambda e, a: e.binary("divf", 1.0, a),
        aten.logical_not.default: _logical_not,
        aten.logical_and.default: _logical("andi"),
        aten.logical_or.default: _logical("ori"),
        aten.bitwise_and.Tensor: _bitwise("andi"),
        aten.bitwise_or.Tensor: _bitwise("ori"),
        aten.bitwise_not.default: _logical_not,
        aten.masked_fill.Scalar: _masked_fill,
        aten.masked_fill.Tensor: _masked_fill,
        aten.arange.start_step: _arange,
        aten.arange.start: _arange,
        aten.arange.default: _arange,
        aten.cumsum.default: _cumsum,
        aten.select.int: _select_int,
        aten.embedding.default: _embedding,
        aten.embedding_dense_backward.default: _embedding_dense_backward,
        aten.index_select.default: _index_select,
        aten.index_put.default: _index_put,
        aten.index_add.default: _index_add,
        aten.index.Tensor: _index_tensor,
        aten.where.self: _where,
        aten.le.Scalar: lambda e, a, b: e.cmp("ole", a, b),
        aten.lt.Scalar: lambda e, a, b: e.cmp("olt", a, b),
        aten.ge.Scalar: lambda e, a, b: e.cmp("oge", a, b),
        aten.gt.Scalar: lambda e, a, b: e.cmp("ogt", a, b),
        aten.eq.Scalar: lambda e, a, b: e.cmp("eq", a, b),
        aten.ne.Scalar: lambda e, a, b: e.cmp("ne", a, b),
        aten.le.Tensor: lambda e, a, b: e.cmp("ole", a, b),
        aten.lt.Tensor: lambda e, a, b: e.cmp("olt", a, b),
        aten.ge.Tensor: lambda e, a, b: e.cmp("oge", a, b),
        aten.gt.Tensor: lambda e, a, b: e.cmp("ogt", a, b),
        aten.eq.Tensor: lambda e, a, b: e.cmp("eq", a, b),
        aten.ne.Tensor: lambda e, a, b: e.cmp("ne", a, b),
        aten.scalar_tensor.default: lambda e, v, **kw: e.splat(v, (), _result_dtype(e, kw)),
        aten.full.default: _full,
        aten.empty.memory_format: _empty,
        aten.empty_permuted.default: _empty,
        aten.new_empty_strided.default: lambda e, a, size, stride, **kw: _empty(e, size, **kw),
        aten.new_empty.default: lambda e, a, size, **kw: _empty(e, size, **kw),
        aten.zeros_like.default: _like(0.0),
        aten.ones_like.default: _like(1.0),
        aten.full_like.default: _like(None),
        aten.tanh_backward.default: _tanh_backward,
        aten.threshold_backward.default: _threshold_backward,
        # reductions
        aten.sum.default: _sum, aten.sum.dim_IntList: _sum,
        aten.any.default: _any, aten.any.dim: _any, aten.any.dims: _any,
        aten.mean.default: _mean, aten.mean.dim: _mean,
        aten.var.correction: _var, aten.var_mean.correction: _var_mean,
        aten.amax.default: lambda e, a, dims=(), keepdim=False: e.reduce(
            a, _dims(dims, len(a.shape)), "max", keepdim=keepdim),
        aten.amin.default: lambda e, a, dims=(), keepdim=False: e.reduce(
            a, _dims(dims, len(a.shape)), "min", keepdim=keepdim),
        aten.max.dim: _max_min_dim("max"), aten.min.dim: _max_min_dim("min"),
        aten.histc.default: _histc,
        aten.argmax.default: _arg_max_min("max"), aten.argmin.default: _arg_max_min("min"),
        # composites kept by the core ATen decompositions (their backwards are
        # decomposed into the ops above)
        aten.native_layer_norm.default: _layer_norm,
        aten.native_group_norm.default: _group_norm,
        aten._weight_norm_interface_backward.default: _weight_norm_backward,
        aten._softmax.default: lambda e, x, dim, half_to_float=False: _softmax(e, x, dim),
        aten.gelu.default: _gelu,
        aten.gelu_backward.default: _gelu_backward,
        aten.native_dropout.default: _dropout,
        aten.native_dropout_backward.default: _native_dropout_backward,
        aten.bernoulli.p: _bernoulli,
        aten.rand.default: _rand,
        aten._log_softmax.default: _log_softmax,
        aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
            _flash_attention_cpu_backward,
        aten.log.default: lambda e, a: e.unary("math.log", a),
        aten.log1p.default: _log1p,
        # pooling
        aten.max_pool2d_with_indices.default: in_float32(_max_pool2d_with_indices),
        aten.max_pool2d_with_indices_backward.default: in_float32(_max_pool2d_with_indices_backward),
        aten.avg_pool2d.default: in_float32(_avg_pool2d),
        aten.avg_pool2d_backward.default: in_float32(_avg_pool2d_backward),
        aten._adaptive_avg_pool2d.default: in_float32(_adaptive_avg_pool2d),
        aten._adaptive_avg_pool2d_backward.default: in_float32(_adaptive_avg_pool2d_backward),
        # 3-D pooling over NCDHW: the same functions (1-D pooling comes as 2-D)
        aten.max_pool3d_with_indices.default: in_float32(_max_pool2d_with_indices),
        aten.max_pool3d_with_indices_backward.default: in_float32(_max_pool2d_with_indices_backward),
        aten.avg_pool3d.default: in_float32(_avg_pool2d),
        aten.avg_pool3d_backward.default: in_float32(_avg_pool2d_backward),
        aten._adaptive_avg_pool3d.default: in_float32(_adaptive_avg_pool2d),
        aten._adaptive_avg_pool3d_backward.default: in_float32(_adaptive_avg_pool2d_backward),
        # indexing (cross-entropy's gather and its backward's scatter)
        aten.gather.default: _gather,
        aten.scatter.value: _scatter_value,
        aten.scatter.src: _scatter_src,
        aten.scatter_add.default: _scatter_add,
        aten.sort.default: _sort,
        aten.sort.stable: _sort,
        aten.topk.default: _topk,
        aten.repeat.default: _repeat,
        # batch norm in training mode (its backward comes decomposed); the
        # functional form's updated running statistics are not mapped
        aten._native_batch_norm_legit_functional.default: _batch_norm_functional,
        aten._native_batch_norm_legit.no_stats: _batch_norm_no_stats,
        operator.getitem: _getitem,
        aten.flip.default: lambda e, a, dims: e.flip(a, dims),
    }
    # transformers' grouped matmul of a mixture of experts (registered when
    # transformers' MoE integration is imported)
    try:
        grouped = torch.ops.transformers.grouped_mm_fallback.default
        grouped_backward = torch.ops.transformers.grouped_mm_fallback_backward.default
    except (AttributeError, RuntimeError):
        pass
    else:
        table[grouped] = _grouped_mm
        table[grouped_backward] = _grouped_mm_backward
    # A scan's combine graph is functionalized with views as copies
    # (`t_copy`, `view_copy`, ...: ATen's `<view>_copy` for each view);
    # values are immutable, so a view and its copy map alike.
    for op, fn in list(table.items()):
        packet = getattr(op, "overloadpacket", None)
        copy = getattr(aten, f"{packet.__name__}_copy", None) if packet else None
        overload = getattr(copy, op._overloadname, None) if copy else None
        if overload is not None:
            table.setdefault(overload, fn)
    return table


def _swap(rank, d0, d1):
    perm = list(range(rank))
    d0, d1 = d0 % rank, d1 % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm
