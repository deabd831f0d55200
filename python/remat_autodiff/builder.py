"""Builds training steps in remat's IR contract with reverse-mode autodiff.

A model is written once against `Builder` (matmul, elementwise ops, reductions,
dropout, ...). The builder prints the forward ops as MLIR and derives the
backward region by the chain rule: every primitive has a vector-Jacobian
product written here, and composed ops (softmax, layer norm, GELU, the loss)
get theirs by composition. The result is a `func.func` that returns the loss
and the gradients of every parameter, with `remat.segment` marks on the
forward ops built inside `with builder.segment(n)`.

Only the standard library is used, so the generator runs anywhere.
"""

import contextlib
import math


def tensor_type(shape, dtype):
    if not shape:
        return f"tensor<{dtype}>"
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def float_literal(value, dtype):
    """A float constant with enough digits to round-trip in its type."""
    if math.isinf(value):
        assert value < 0
        return {"f32": "0xFF800000", "f64": "0xFFF0000000000000"}[dtype]
    return ("%.9e" if dtype == "f32" else "%.17e") % value


class Value:
    """An SSA tensor of the forward or the backward part."""

    def __init__(self, name, shape, dtype, scalar=False):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.scalar = scalar

    @property
    def type(self):
        return self.dtype if self.scalar else tensor_type(self.shape, self.dtype)

    @property
    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


class Node:
    """A forward primitive: its inputs, its output, and how to pull a
    gradient back through it: a function of the builder and the output's
    gradient that returns, per input, a thunk emitting that input's gradient.
    Thunks run only for inputs that depend on a parameter, so the backward
    holds no dead code (which CSE would otherwise merge with live code,
    stretching live ranges)."""

    def __init__(self, inputs, output, vjp):
        self.inputs = inputs
        self.output = output
        self.vjp = vjp


class Builder:
    def __init__(self, name, dtype="f32"):
        self.name = name
        self.dtype = dtype
        self.args = []          # (Value, attribute text)
        self.arg_names = set()
        self.params = []        # Values whose gradients the step returns
        self.nodes = []
        self.forward = []       # lines of the forward part
        self.backward = []      # lines of the backward region
        self.counter = 0
        self.current_segment = None
        self.in_backward = False
        self.seed = None
        self.random_ops = 0

    # -- Naming and emission -------------------------------------------------

    def _fresh(self, hint):
        """A new SSA name, never one of the arguments' names."""
        while True:
            self.counter += 1
            name = f"%{hint}{self.counter}"
            if name not in self.arg_names:
                return name

    def _attrs(self):
        """The attribute dictionary of a forward op, with a leading space."""
        if self.in_backward or self.current_segment is None:
            return ""
        seg = self.current_segment
        if isinstance(seg, (list, tuple)):
            return " {remat.segment = [" + ", ".join(str(s) for s in seg) + "]}"
        return f" {{remat.segment = {seg} : i64}}"

    def _emit(self, line):
        (self.backward if self.in_backward else self.forward).append(line)

    def _new(self, shape, hint="v"):
        return Value(self._fresh(hint), shape, self.dtype)

    @contextlib.contextmanager
    def segment(self, seg):
        """Marks the forward ops built inside with `remat.segment = seg` (an
        int, or a list from the outer to the inner segment)."""
        previous, self.current_segment = self.current_segment, seg
        try:
            yield
        finally:
            self.current_segment = previous

    # -- Arguments ----------------------------------------------------------

    def input(self, name, shape):
        value = Value(f"%{name}", shape, self.dtype)
        assert value.name not in self.arg_names, f"two arguments named {name}"
        self.args.append((value, ""))
        self.arg_names.add(value.name)
        return value

    def param(self, name, shape):
        value = self.input(name, shape)
        self.params.append(value)
        return value

    def seed_arg(self):
        self.seed = Value("%seed", (), "i64", scalar=True)
        self.args.append((self.seed, " {remat.rng_seed}"))
        return self.seed

    # -- Building blocks (no gradient of their own) -------------------------

    def _splat(self, value, shape):
        out = self._new(shape, "cst")
        lit = float_literal(value, self.dtype)
        self._emit(f"  {out.name} = arith.constant{self._attrs()} "
                   f"dense<{lit}> : {out.type}")
        return out

    def _empty(self, shape):
        out = self._new(shape, "e")
        self._emit(f"  {out.name} = tensor.empty(){self._attrs()} : "
                   f"{out.type}")
        return out

    def _filled(self, shape, value):
        init = self._empty(shape)
        scalar = self._fresh("c")
        attrs = self._attrs()
        self._emit(f"  {scalar} = arith.constant{attrs} "
                   f"{float_literal(value, self.dtype)} : {self.dtype}")
        out = self._new(shape, "f")
        self._emit(f"  {out.name} = linalg.fill{attrs} ins({scalar} : "
                   f"{self.dtype}) outs({init.name} : {init.type}) -> "
                   f"{out.type}")
        return out

    def _record(self, inputs, output, vjp):
        if not self.in_backward:
            self.nodes.append(Node(inputs, output, vjp))
        return output

    # -- Primitives ---------------------------------------------------------

    def _binary(self, op, a, b):
        assert a.shape == b.shape, (op, a.shape, b.shape)
        out = self._new(a.shape)
        self._emit(f"  {out.name} = arith.{op} {a.name}, {b.name} "
                   f"{self._attrs()} : {out.type}")
        return out

    def add(self, a, b):
        out = self._binary("addf", a, b)
        return self._record([a, b], out, lambda bb, g: [lambda: g, lambda: g])

    def sub(self, a, b):
        out = self._binary("subf", a, b)
        return self._record([a, b], out,
                            lambda bb, g: [lambda: g, lambda: bb.neg(g)])

    def mul(self, a, b):
        out = self._binary("mulf", a, b)
        return self._record([a, b], out,
                            lambda bb, g: [lambda: bb.mul(g, b), lambda: bb.mul(g, a)])

    def div(self, a, b):
        out = self._binary("divf", a, b)

        def vjp(bb, g):
            return [lambda: bb.div(g, b),
                    lambda: bb.neg(bb.mul(bb.div(g, b), out))]
        return self._record([a, b], out, vjp)

    def neg(self, a):
        out = self._new(a.shape)
        self._emit(f"  {out.name} = arith.negf {a.name}{self._attrs()} : "
                   f"{out.type}")
        return self._record([a], out, lambda bb, g: [lambda: bb.neg(g)])

    def scale(self, a, c):
        """a * c for a Python constant c."""
        k = self._splat(c, a.shape)
        out = self._binary("mulf", a, k)
        return self._record([a], out, lambda bb, g: [lambda: bb.scale(g, c)])

    def _unary_math(self, op, a):
        out = self._new(a.shape)
        self._emit(f"  {out.name} = math.{op} {a.name}{self._attrs()} : "
                   f"{out.type}")
        return out

    def tanh(self, a):
        out = self._unary_math("tanh", a)

        def vjp(bb, g):
            return [lambda: bb.mul(g, bb.sub(bb._splat(1.0, a.shape),
                                             bb.mul(out, out)))]
        return self._record([a], out, vjp)

    def exp(self, a):
        out = self._unary_math("exp", a)
        return self._record([a], out, lambda bb, g: [lambda: bb.mul(g, out)])

    def rsqrt(self, a):
        out = self._unary_math("rsqrt", a)

        def vjp(bb, g):
            # d/da a^-1/2 = -1/2 a^-3/2 = -1/2 out^3
            return [lambda: bb.scale(
                bb.mul(g, bb.mul(out, bb.mul(out, out))), -0.5)]
        return self._record([a], out, vjp)

    def relu(self, a):
        zeros = self._splat(0.0, a.shape)
        out = self._new(a.shape)
        self._emit(f"  {out.name} = arith.maximumf {a.name}, {zeros.name} "
                   f"{self._attrs()} : {out.type}")

        def vjp(bb, g):
            def grad():
                z = bb._splat(0.0, a.shape)
                return bb._select(bb._cmp("ogt", a, z), g, z)
            return [grad]
        return self._record([a], out, vjp)

    def _cmp(self, pred, a, b):
        mask = Value(self._fresh("m"), a.shape, "i1")
        self._emit(f"  {mask.name} = arith.cmpf {pred}, {a.name}, {b.name} "
                   f"{self._attrs()} : {a.type}")
        return mask

    def _select(self, mask, a, b):
        out = self._new(a.shape)
        self._emit(f"  {out.name} = arith.select {mask.name}, {a.name}, "
                   f"{b.name}{self._attrs()} : {mask.type}, {out.type}")
        return out

    def matmul(self, a, b):
        (m, k), (k2, n) = a.shape, b.shape
        assert k == k2, (a.shape, b.shape)
        init = self._filled((m, n), 0.0)
        out = self._new((m, n), "mm")
        self._emit(f"  {out.name} = linalg.matmul{self._attrs()} ins({a.name}, "
                   f"{b.name} : {a.type}, {b.type}) outs({init.name} : "
                   f"{init.type}) -> {out.type}")

        def vjp(bb, g):
            return [lambda: bb.matmul(g, bb.transpose(b, (1, 0))),
                    lambda: bb.matmul(bb.transpose(a, (1, 0)), g)]
        return self._record([a, b], out, vjp)

    def batch_matmul(self, a, b):
        (p, m, k), (p2, k2, n) = a.shape, b.shape
        assert p == p2 and k == k2, (a.shape, b.shape)
        init = self._filled((p, m, n), 0.0)
        out = self._new((p, m, n), "bmm")
        self._emit(f"  {out.name} = linalg.batch_matmul{self._attrs()} "
                   f"ins({a.name}, {b.name} : {a.type}, {b.type}) "
                   f"outs({init.name} : {init.type}) -> {out.type}")

        def vjp(bb, g):
            return [lambda: bb.batch_matmul(g, bb.transpose(b, (0, 2, 1))),
                    lambda: bb.batch_matmul(bb.transpose(a, (0, 2, 1)), g)]
        return self._record([a, b], out, vjp)

    def transpose(self, a, perm):
        shape = tuple(a.shape[p] for p in perm)
        init = self._empty(shape)
        out = self._new(shape, "t")
        perm_text = ", ".join(str(p) for p in perm)
        self._emit(f"  {out.name} = linalg.transpose ins({a.name} : {a.type}) "
                   f"outs({init.name} : {init.type}) permutation = "
                   f"[{perm_text}]{self._attrs()}")
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p] = i
        return self._record([a], out,
                            lambda bb, g: [lambda: bb.transpose(g, tuple(inverse))])

    def reshape(self, a, shape):
        """Row-major reshape (tensor.reshape through a shape constant)."""
        assert math.prod(shape) == a.numel, (a.shape, shape)
        shape_const = self._fresh("shape")
        dims = ", ".join(str(d) for d in shape)
        self._emit(f"  {shape_const} = arith.constant{self._attrs()} "
                   f"dense<[{dims}]> : tensor<{len(shape)}xi64>")
        out = self._new(shape, "r")
        self._emit(f"  {out.name} = tensor.reshape {a.name}({shape_const}) "
                   f"{self._attrs()} : ({a.type}, tensor<{len(shape)}xi64>) -> "
                   f"{out.type}")
        return self._record([a], out, lambda bb, g: [lambda: bb.reshape(g, a.shape)])

    def reduce(self, a, dims, kind="sum"):
        """Sum (or max, without a gradient) over `dims`."""
        dims = tuple(sorted(d % len(a.shape) for d in dims))
        shape = tuple(s for i, s in enumerate(a.shape) if i not in dims)
        init = self._filled(shape, 0.0 if kind == "sum" else -math.inf)
        out = self._new(shape, "red")
        combiner = "arith.addf" if kind == "sum" else "arith.maximumf"
        in_name, acc_name, res_name = (self._fresh("in"), self._fresh("acc"),
                                       self._fresh("s"))
        self._emit(f"  {out.name} = linalg.reduce ins({a.name} : {a.type}) "
                   f"outs({init.name} : {init.type}) dimensions = "
                   f"[{', '.join(str(d) for d in dims)}]{self._attrs()}")
        self._emit(f"    ({in_name}: {self.dtype}, {acc_name}: {self.dtype}) {{")
        self._emit(f"      {res_name} = {combiner} {in_name}, {acc_name} : "
                   f"{self.dtype}")
        self._emit(f"      linalg.yield {res_name} : {self.dtype}")
        self._emit("    }")
        if kind == "max":
            return out  # used for stability shifts only: no gradient.
        return self._record([a], out,
                            lambda bb, g: [lambda: bb.broadcast(g, a.shape, dims)])

    def broadcast(self, a, shape, dims):
        """Broadcasts `a` to `shape`, adding the dimensions `dims`."""
        out = self._emit_broadcast(a, shape, dims)
        return self._record([a], out,
                            lambda bb, g: [lambda: bb.reduce(g, dims, "sum")])

    def _emit_broadcast(self, a, shape, dims):
        init = self._empty(shape)
        out = self._new(shape, "b")
        self._emit(f"  {out.name} = linalg.broadcast ins({a.name} : {a.type}) "
                   f"outs({init.name} : {init.type}) dimensions = "
                   f"[{', '.join(str(d) for d in dims)}]{self._attrs()}")
        return out

    def concat(self, values, dim):
        shape = list(values[0].shape)
        shape[dim] = sum(v.shape[dim] for v in values)
        out = self._new(tuple(shape), "cat")
        names = ", ".join(v.name for v in values)
        types = ", ".join(v.type for v in values)
        self._emit(f"  {out.name} = tensor.concat dim({dim}) {names} "
                   f"{self._attrs()} : ({types}) -> {out.type}")

        def vjp(bb, g):
            thunks, start = [], 0
            for v in values:
                thunks.append(lambda s=start, n=v.shape[dim]: bb.slice(g, dim, s, n))
                start += v.shape[dim]
            return thunks
        return self._record(list(values), out, vjp)

    def slice(self, a, dim, start, size):
        offsets = [0] * len(a.shape)
        offsets[dim] = start
        sizes = list(a.shape)
        sizes[dim] = size
        out = self._new(tuple(sizes), "sl")
        self._emit(f"  {out.name} = tensor.extract_slice {a.name}"
                   f"[{', '.join(map(str, offsets))}] [{', '.join(map(str, sizes))}] "
                   f"[{', '.join('1' for _ in sizes)}]{self._attrs()} : "
                   f"{a.type} to {out.type}")

        def vjp(bb, g):
            return [lambda: grad(bb, g)]

        def grad(bb, g):
            # The gradient of a slice is zero outside it.
            parts = []
            if start:
                parts.append(bb._zeros_with(a, dim, start))
            parts.append(g)
            if start + size < a.shape[dim]:
                parts.append(bb._zeros_with(a, dim, a.shape[dim] - start - size))
            return parts[0] if len(parts) == 1 else bb.concat(parts, dim)
        return self._record([a], out, vjp)

    def _zeros_with(self, a, dim, size):
        shape = list(a.shape)
        shape[dim] = size
        return self._splat(0.0, tuple(shape))

    def dropout(self, a, p):
        """Inverted dropout drawing from the step's generator."""
        assert self.seed is not None, "call seed_arg() before dropout"
        u = Value(self._fresh("u"), a.shape, self.dtype)
        self._emit(f"  {u.name} = remat.rng_uniform{self._attrs()} : {u.type}")
        self.random_ops += 1
        keep = self._cmp("oge", u, self._splat(p, a.shape))
        scale = 1.0 / (1.0 - p)
        scaled = self._binary("mulf", a, self._splat(scale, a.shape))
        out = self._select(keep, scaled, self._splat(0.0, a.shape))

        def vjp(bb, g):
            return [lambda: bb._select(keep, bb.scale(g, scale),
                                       bb._splat(0.0, a.shape))]
        return self._record([a], out, vjp)

    # -- Composed ops (gradients by composition) ----------------------------

    def add_bias(self, x, bias):
        return self.add(x, self.broadcast(bias, x.shape,
                                          tuple(range(len(x.shape) - 1))))

    def linear(self, x, w, b):
        return self.add_bias(self.matmul(x, w), b)

    def gelu(self, x):
        """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))."""
        cube = self.mul(x, self.mul(x, x))
        inner = self.scale(self.add(x, self.scale(cube, 0.044715)),
                           math.sqrt(2.0 / math.pi))
        one = self._splat(1.0, x.shape)
        return self.scale(self.mul(x, self.add(self.tanh(inner), one)), 0.5)

    def softmax(self, x):
        """Softmax over the last dimension, shifted by the row maximum (a
        constant for the gradient: softmax does not depend on it)."""
        last = len(x.shape) - 1
        row_max = self.reduce(x, (last,), "max")
        shifted = self.sub(x, self._emit_broadcast(row_max, x.shape, (last,)))
        e = self.exp(shifted)
        total = self.reduce(e, (last,), "sum")
        return self.div(e, self.broadcast(total, x.shape, (last,)))

    def layer_norm(self, x, gamma, beta, eps=1e-5):
        """Layer norm over the last dimension with affine gamma, beta."""
        last = len(x.shape) - 1
        n = x.shape[last]
        mean = self.scale(self.reduce(x, (last,), "sum"), 1.0 / n)
        centered = self.sub(x, self.broadcast(mean, x.shape, (last,)))
        var = self.scale(self.reduce(self.mul(centered, centered), (last,), "sum"),
                         1.0 / n)
        inv = self.rsqrt(self.add(var, self._splat(eps, var.shape)))
        normed = self.mul(centered, self.broadcast(inv, x.shape, (last,)))
        lead = tuple(range(last))
        scaled = self.mul(normed, self.broadcast(gamma, x.shape, lead))
        return self.add(scaled, self.broadcast(beta, x.shape, lead))

    def mse_loss(self, y, target):
        """0.5 * mean((y - target)^2) as a 0-d tensor."""
        d = self.sub(y, target)
        total = self.reduce(self.mul(d, d), tuple(range(len(y.shape))), "sum")
        return self.scale(total, 0.5 / y.numel)

    # -- The step -----------------------------------------------------------

    def finish(self, loss, description):
        """Returns the MLIR text of the step: loss and parameter gradients."""
        # Values whose gradient is needed: those computed from a parameter.
        needed = {p.name for p in self.params}
        for node in self.nodes:
            if any(i.name in needed for i in node.inputs):
                needed.add(node.output.name)

        self.in_backward = True
        seed_grad = self._splat(1.0, loss.shape)
        grads = {loss.name: seed_grad}
        for node in reversed(self.nodes):
            g = grads.get(node.output.name)
            if g is None:
                continue
            for inp, thunk in zip(node.inputs, node.vjp(self, g)):
                if inp.name not in needed:
                    continue
                gi = thunk()
                prev = grads.get(inp.name)
                grads[inp.name] = gi if prev is None else self.add(prev, gi)
        results = []
        for p in self.params:
            g = grads.get(p.name)
            results.append(g if g is not None else self._splat(0.0, p.shape))
        self.in_backward = False

        arg_text = ", ".join(f"{v.name}: {v.type}{attr}" for v, attr in self.args)
        result_types = [loss.type] + [p.type for p in self.params]
        grad_types = ", ".join(p.type for p in self.params)
        lines = [f"// {line}".rstrip() for line in description.strip().splitlines()]
        lines.append(f"func.func @{self.name}({arg_text})")
        lines.append(f"    -> ({', '.join(result_types)}) {{")
        lines.extend(self.forward)
        count = len(self.params)
        lines.append(f"  %grads{':' + str(count) if count > 1 else ''} = "
                     "remat.backward {")
        lines.extend("  " + l for l in self.backward)
        lines.append(f"    remat.yield {', '.join(r.name for r in results)} : "
                     f"{grad_types}")
        lines.append(f"  }} : {grad_types}")
        outs = [loss.name] + (["%grads"] if count == 1 else
                              [f"%grads#{i}" for i in range(count)])
        lines.append(f"  return {', '.join(outs)} : {', '.join(result_types)}")
        lines.append("}")
        return "\n".join(lines) + "\n"
