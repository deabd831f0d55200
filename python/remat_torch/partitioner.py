"""remat's planner as AOTAutograd's partition function.

`partition(joint_module, joint_inputs, num_fwd_outputs=...)` takes the place
of `torch._functorch.partitioners.min_cut_rematerialization_partition`: the
joint forward-backward graph is lowered to remat IR with the exporter's ATen
mapping (remat_torch.emit), `remat-opt` runs a `-remat-mark` policy and
`-remat-checkpoint`, and the forward values the `remat.backward` region still
reads afterwards are the values saved for the backward. They are mapped back
to FX nodes (every emitted op carries its FX value's name as its location)
and AOTAutograd's own `_extract_fwd_bwd_modules` builds the forward and
backward graphs, copying the forward nodes that are not saved into the
backward: those are recomputed.

Nodes the planner must not or cannot recompute are pinned: random ops
(PyTorch's generator draws a new mask each call; saving keeps the forward's
mask), ops or forms the exporter does not map, and values of types it does
not model. A pinned forward value enters the remat step as a function
argument, i.e. it is saved; the forward inputs of a pinned backward node are
saved. The unmapped ops are named in one warning per graph. A graph remat
cannot plan at all (no mapped backward, symbolic shapes) falls back to
AOTAutograd's default partition, with a warning saying why.
"""

import operator
import os
import re
import shutil
import subprocess
import time
import warnings

from . import emit as E
from .export import VIEW_OPS, _live_nodes

POLICIES = ("budget", "selective", "sqrt", "sequential", "checkpoint", "none")


class RematOptNotFound(RuntimeError):
    pass


def find_remat_opt():
    """remat-opt from $REMAT_OPT, the build tree ($REMAT_BUILD_DIR/bin, or
    build/bin of the source tree this package is in), or PATH. Raises
    RematOptNotFound naming every place it looked."""
    looked = []
    env = os.environ.get("REMAT_OPT")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        looked.append(f"REMAT_OPT={env} (not an executable file)")
    else:
        looked.append("REMAT_OPT (not set)")
    # The source tree's build (python/remat_torch/ -> build/bin), when this
    # package is not an installed copy.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    builds = [os.environ.get("REMAT_BUILD_DIR")]
    if os.path.isfile(os.path.join(root, "CMakeLists.txt")):
        builds.append(os.path.join(root, "build"))
    for build in filter(None, builds):
        path = os.path.join(build, "bin", "remat-opt")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        looked.append(path)
    found = shutil.which("remat-opt")
    if found:
        return found
    looked.append("PATH")
    raise RematOptNotFound("remat_torch: cannot find remat-opt; looked in: "
                           + ", ".join(looked)
                           + ". Build remat (scripts/bootstrap) or set REMAT_OPT.")


def mark_options(policy, budget):
    """The -remat-mark option string of a policy (None: no -remat-mark)."""
    if policy not in POLICIES:
        raise ValueError(f"remat_torch: unknown policy {policy!r} (one of "
                         f"{', '.join(POLICIES)})")
    if policy == "budget":
        if not 0.0 <= float(budget) <= 1.0:
            raise ValueError(f"remat_torch: budget {budget} is outside [0, 1]")
        # PyTorch's activation_memory_budget scale: 0 is the smallest peak
        # the planner reaches, 1 the lower of the peak without recomputation
        # and the peak with only the cheap ops recomputed (PyTorch's 1 is its
        # default partition, which recomputes pointwise ops).
        return f"policy=budget budget-between={float(budget)!r}"
    if policy in ("selective", "sqrt"):
        return f"policy={policy}"
    if policy == "sequential":
        return "policy=sequential segments=2"
    return None


# -- The joint graph's parts ----------------------------------------------------

def _is_tangent(node):
    return node.op == "placeholder" and "tangents" in str(node.target)


def _backward_nodes(graph):
    """Nodes tagged backward or reading a tangent (transitively)."""
    bwd = set()
    for node in graph.nodes:
        if _is_tangent(node) or node.meta.get("partitioner_tag") == "is_backward" or \
                any(a in bwd for a in node.all_input_nodes):
            bwd.add(node)
    return bwd


def _outputs(graph, num_fwd_outputs):
    out = next(n for n in graph.nodes if n.op == "output")
    outs = list(out.args[0])
    return outs[:num_fwd_outputs], outs[num_fwd_outputs:]


def _random(torch, node):
    if node.op != "call_function":
        return False
    aten = torch.ops.aten
    random = {aten.native_dropout.default, aten.bernoulli.default, aten.bernoulli.p,
              aten.rand.default, aten.randn.default, aten.rand_like.default,
              aten.randn_like.default, aten.randint.default}
    return node.target in random or \
        torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ())


_DTYPES = None


def _mlir_dtype(torch, dtype):
    global _DTYPES
    if _DTYPES is None:
        _DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
                   torch.bool: "i1", torch.int64: "i64"}
    return _DTYPES.get(dtype)


class _Opaque:
    """A value the step does not model (a symbolic size, a non-tensor, an
    element type remat does not take): whatever reads it is pinned."""


OPAQUE = _Opaque()


def _value_of(torch, name, val):
    """The remat Value of an FX value `val` entering the step as an argument."""
    if isinstance(val, (tuple, list)):
        return tuple(_value_of(torch, f"{name}_{i}", v) for i, v in enumerate(val))
    if not isinstance(val, torch.Tensor):
        return OPAQUE
    dtype = _mlir_dtype(torch, val.dtype)
    if dtype is None or any(not isinstance(d, int) for d in val.shape):
        return OPAQUE
    return E.Value(f"%{name}", tuple(val.shape), dtype)


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


# -- Lowering -------------------------------------------------------------------

class _Lowering:
    """The joint graph as one remat step. `owner` maps an emitted value's
    name to (FX node, index in the node's tuple or None, whether it is the
    node's result rather than an intermediate of its expansion); `arg_nodes`
    is the FX node of each function argument (a primal, or a pinned node)."""

    def __init__(self, joint, num_fwd_outputs, checkpoint_regions):
        import torch
        self.torch = torch
        self.joint = joint
        self.graph = joint.graph
        self.table = E.ops()
        self.e = E.Emitter()
        self.env = {}
        self.args = []        # (Value, FX node, index in its tuple or None)
        self.owner = {}
        self.unmapped = {}    # pinned node -> what remat does not map
        self.pinned_bwd_inputs = set()
        self.fwd_outs, self.bwd_outs = _outputs(self.graph, num_fwd_outputs)
        self.bwd = _backward_nodes(self.graph)
        self.checkpoint_regions = checkpoint_regions
        self.seg_ids = {}
        self.backward_views = {}
        self.views = set(VIEW_OPS(torch))
        self.decompositions = None
        self.expansions = {}
        self.decomposed = set()  # ops lowered through their decompositions

    # Arguments ---------------------------------------------------------------

    def _pin(self, node, reason):
        """`node`'s value enters the step as function arguments."""
        if reason:
            self.unmapped[node] = reason
        value = _value_of(self.torch, f"pin_{_sanitize(node.name)}", node.meta.get("val"))
        for i, v in enumerate(_flat(value)):
            if isinstance(v, E.Value):
                self.args.append((v, node, i if isinstance(value, tuple) else None))
        self.env[node] = value
        if node in self.bwd:
            self.pinned_bwd_inputs.update(a for a in node.all_input_nodes
                                          if a not in self.bwd)
        return value

    # Lookups -----------------------------------------------------------------

    def _lookup(self, in_backward):
        def look(n):
            if in_backward and n not in self.bwd and n.op == "call_function" and \
                    n.target in self.views:
                return self._backward_view(n)
            return self.env[n]
        return look

    def _backward_view(self, n):
        """A forward view read by the backward, re-emitted there from its
        source: a view costs PyTorch no memory, so saving a copy of it (the
        transpose of a weight) would be an activation PyTorch does not have."""
        if n in self.backward_views:
            return self.backward_views[n]
        a = self.torch.fx.node.map_arg(n.args, self._lookup(True))
        k = self.torch.fx.node.map_arg(n.kwargs, self._lookup(True))
        if any(v is OPAQUE for v in _leaves(a, k)):
            value = self.env[n]
        else:
            saved = self.e.in_backward, self.e.segment
            self.e.in_backward, self.e.segment = True, None
            mark = len(self.e.backward)
            try:
                value = self.table[n.target](self.e, *a, **k)
            except Exception:
                del self.e.backward[mark:]
                value = self.env[n]
            finally:
                self.e.in_backward, self.e.segment = saved
        self.backward_views[n] = value
        return value

    # The step ----------------------------------------------------------------

    def lower(self):
        torch = self.torch
        live = _live_nodes([n for n in self.fwd_outs + self.bwd_outs
                            if isinstance(n, torch.fx.Node)])
        for node in self.graph.nodes:
            if node.op == "output" or node not in live:
                continue
            if node.op == "placeholder":
                value = _value_of(torch, _sanitize(node.name), node.meta.get("val"))
                for v in _flat(value):
                    if isinstance(v, E.Value):
                        self.args.append((v, node, None))
                self.env[node] = value
                continue
            self._lower_node(node)

    def _decomposed(self, target):
        """An emitter for an op remat does not map by itself but PyTorch's
        core ATen decompositions expand into ops it does (layer norm's,
        GELU's and softmax's backwards in a graph traced without them): the
        op's decomposition, traced on tensors of its operands' types, is
        emitted op by op, all of it owned by the one FX node. None when
        there is no decomposition."""
        torch = self.torch
        if self.decompositions is None:
            from torch._decomp import core_aten_decompositions
            self.decompositions = core_aten_decompositions()
        if target not in self.decompositions:
            return None
        from torch.fx.experimental.proxy_tensor import make_fx

        def emit(e, *args, **kwargs):
            flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
            values = [i for i, x in enumerate(flat) if isinstance(x, E.Value)]

            def call(*tensors):
                items = list(flat)
                for i, t in zip(values, tensors):
                    items[i] = t
                a, k = torch.utils._pytree.tree_unflatten(items, spec)
                return target(*a, **k)

            examples = [torch.empty(flat[i].shape, dtype=E.torch_dtype(flat[i].dtype))
                        for i in values]
            key = (target, repr(spec), tuple(repr(x) if i not in values else
                                             (flat[i].shape, flat[i].dtype)
                                             for i, x in enumerate(flat)))
            if key not in self.expansions:
                self.expansions[key] = make_fx(
                    call, decomposition_table=self.decompositions,
                    tracing_mode="fake")(*examples)
            env = {}
            placeholders = iter(flat[i] for i in values)
            for n in self.expansions[key].graph.nodes:
                if n.op == "placeholder":
                    env[n] = next(placeholders)
                elif n.op == "output":
                    self.decomposed.add(str(target))
                    return torch.fx.node.map_arg(n.args[0], env.__getitem__)
                else:
                    fn = self.table.get(n.target) if n.op == "call_function" else None
                    if fn is None:
                        raise E.UnsupportedOp(f"{n.target} in its decomposition")
                    a = torch.fx.node.map_arg(n.args, env.__getitem__)
                    k = torch.fx.node.map_arg(n.kwargs, env.__getitem__)
                    env[n] = fn(e, *a, **k)
        return emit

    def _lower_node(self, node):
        torch = self.torch
        in_backward = node in self.bwd
        fn = self.table.get(node.target) if node.op == "call_function" else None
        if fn is None and node.op == "call_function":
            fn = self._decomposed(node.target)
        if fn is None:
            self._pin(node, f"{node.target}" if node.op == "call_function"
                      else f"{node.op} {node.target}")
            return
        if _random(torch, node):
            self._pin(node, None)
            return
        other = [v.dtype for v in _flat(node.meta.get("val")) if isinstance(v, torch.Tensor)
                 and v.dtype not in (torch.float32, torch.bfloat16, torch.float16,
                                     torch.bool)]
        if other:
            self._pin(node, f"{node.target} on {other[0]}")
            return
        a = torch.fx.node.map_arg(node.args, self._lookup(in_backward))
        k = torch.fx.node.map_arg(node.kwargs, self._lookup(in_backward))
        if any(v is OPAQUE or (isinstance(v, E.Value) and v.dtype == "i64")
               for v in _leaves(a, k)):
            self._pin(node, None)
            return
        e = self.e
        e.in_backward = in_backward
        e.segment = None
        if not in_backward and self.checkpoint_regions and \
                node.meta.get("recompute") is not None and "ac_graph_id" in node.meta:
            e.segment = self.seg_ids.setdefault(node.meta["ac_graph_id"], len(self.seg_ids))
        lines = e.backward if in_backward else e.forward
        mark, counter = len(lines), e.counter
        try:
            result = fn(e, *a, **k)
        except Exception as err:
            del lines[mark:]
            e.counter = counter
            if isinstance(err, E.NotExported):
                # Batch norm's updated running statistics (a graph traced
                # without decompositions hands them to its backward, which
                # ignores them in training): a few floats each, saved without
                # a warning, as min-cut saves what a mutated input computes.
                self._pin(node, None)
                return
            what = node.target
            if node.target is operator.getitem:
                what = f"{node.args[0].target} (result {node.args[1]})"
            detail = f" ({err})" if isinstance(err, E.UnsupportedOp) else ""
            self._pin(node, f"{what}{detail}")
            return
        val = node.meta.get("val")
        for r, v in zip(_flat(result), _flat(val)):
            if isinstance(r, E.Value) and isinstance(v, torch.Tensor) and (
                    tuple(r.shape) != tuple(v.shape)
                    or r.dtype != _mlir_dtype(torch, v.dtype)):
                # A form the mapping does not take (a boolean operand of
                # an arithmetic op, as Inductor's dropout has it).
                del lines[mark:]
                e.counter = counter
                self._pin(node, f"{node.target} (mixed element types)")
                return
        index = isinstance(result, (tuple, list))
        results = {}
        for i, r in enumerate(_flat(result)):
            if isinstance(r, E.Value):
                results[r.name] = i if index else None
        for line in lines[mark:]:
            name = line[1]
            if name is not None:
                self.owner[name] = (node, results.get(name), name in results)
        self.env[node] = result

    def text(self):
        """The step's MLIR and its function arguments' FX nodes."""
        e = self.e
        torch = self.torch
        # Results: the forward outputs computed in the forward, the
        # gradients (a gradient that is a forward value or an argument still
        # goes through the backward region's yield).
        arg_names = {v.name for v, _, _ in self.args}
        fwd = []
        for n in self.fwd_outs:
            if isinstance(n, torch.fx.Node):
                for v in _flat(self.env.get(n)):
                    if isinstance(v, E.Value) and v.name not in arg_names and \
                            v.name not in {f.name for f in fwd}:
                        fwd.append(v)
        grads = []
        for n in self.bwd_outs:
            if isinstance(n, torch.fx.Node):
                for v in _flat(self.env.get(n)):
                    if isinstance(v, E.Value) and v.name not in {g.name for g in grads}:
                        grads.append(v)
        if not e.backward or not grads:
            return None
        used = set()
        for text, *_ in e.forward + e.backward:
            used.update(re.findall(r"%[A-Za-z0-9_]+", text))
        used.update(v.name for v in fwd + grads)
        self.step_args = [(v, n, i) for v, n, i in self.args if v.name in used]

        def located(line):
            text, result, *rest = line
            tag = result[1:] if result else "none"
            return [f'{text} loc("{tag}")', result, *rest]

        arg_text = ", ".join(f"{v.name}: {v.type}" for v, _, _ in self.step_args)
        result_types = [v.type for v in fwd] + [g.type for g in grads]
        grad_types = ", ".join(g.type for g in grads)
        count = len(grads)
        lines = [f"func.func @step({arg_text}) -> ({', '.join(result_types)}) {{"]
        lines.extend(e.render_line(located(l)) for l in e.forward)
        lines.append(f"  %grads{':' + str(count) if count > 1 else ''} = remat.backward {{")
        lines.extend("  " + e.render_line(located(l)).replace("\n", "\n  ")
                     for l in e.backward)
        lines.append(f"    remat.yield {', '.join(g.name for g in grads)} : {grad_types}")
        lines.append(f"  }} : {grad_types}")
        results = [v.name for v in fwd] + (
            ["%grads"] if count == 1 else [f"%grads#{i}" for i in range(count)])
        lines.append(f"  return {', '.join(results)} : {', '.join(result_types)}")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _leaves(*xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _leaves(*x)
        elif isinstance(x, dict):
            yield from _leaves(*x.values())
        else:
            yield x


# -- Reading the plan -------------------------------------------------------------

_LOC = re.compile(r'loc\("([A-Za-z0-9_]+)"\)')
_DEF = re.compile(r"^    (%[A-Za-z0-9_.$-]+)(?::(\d+))? = ")


def saved_values(text, num_args):
    """From `remat-opt -mlir-print-debuginfo -mlir-print-local-scope` output
    of one step: (the locations of the forward ops whose results the
    `remat.backward` region reads, the indices of the function arguments it
    reads)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if "remat.backward" in l and "=" in l),
                 None)
    if start is None:
        raise RuntimeError("remat-opt's output has no remat.backward region")
    # The region ends at the line that closes it, at its opening indentation.
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(i for i in range(start + 1, len(lines))
               if lines[i].startswith(" " * indent + "}")
               and len(lines[i]) - len(lines[i].lstrip()) == indent)
    used = set()
    for l in lines[start + 1:end]:
        used.update(re.findall(r"%[A-Za-z0-9_.$-]+", l))
    # Forward ops: the op starting on each line at the body's indentation,
    # its location the last of ours up to the next op.
    defs, current = {}, None
    for l in lines[:start]:
        m = _DEF.match(l)
        if m:
            current = [m.group(1), None]
            defs[m.group(1)] = current
        if current is not None:
            locs = _LOC.findall(l)
            if locs:
                current[1] = locs[-1]
    ops = {defs[name][1] for name in used if name in defs and defs[name][1]}
    args = {int(name[4:]) for name in used if re.fullmatch(r"%arg\d+", name)}
    args = {i for i in args if i < num_args}
    return ops, args


def _run_remat_opt(mlir, policy, budget, remat_opt):
    passes = []
    options = mark_options(policy, budget)
    if options is not None:
        passes.append(f"-remat-mark={options}")
    if policy != "none":
        passes.append("-remat-checkpoint")
    cmd = [remat_opt, "-", *passes, "-mlir-print-debuginfo", "-mlir-print-local-scope"]
    proc = subprocess.run(cmd, input=mlir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"remat-opt failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip()[:2000]}")
    return proc.stdout


# -- PyTorch's op-by-op execution -------------------------------------------------

def _tensor_vals(val):
    import torch
    if isinstance(val, torch.Tensor):
        return [val]
    if isinstance(val, (tuple, list)):
        return [t for v in val for t in _tensor_vals(v)]
    return []


class _Allocator:
    """Bytes held, and their peak, as storages are made and released."""

    def __init__(self):
        self.level = self.peak = 0
        self.refs = {}
        self.at = self.peak_at = None

    def make(self, nbytes):
        storage = [nbytes]
        self.refs[id(storage)] = [storage, 0]
        self.level += nbytes
        if self.level > self.peak:
            self.peak, self.peak_at = self.level, self.at
        return storage

    def transient(self, nbytes):
        """An op holds `nbytes` more than its level for a moment."""
        if self.level + nbytes > self.peak:
            self.peak, self.peak_at = self.level + nbytes, self.at

    def live(self, storage):
        return storage is None or id(storage) in self.refs

    def hold(self, storage):
        self.refs[id(storage)][1] += 1

    def release(self, storage):
        entry = self.refs[id(storage)]
        entry[1] -= 1
        if entry[1] == 0:
            self.level -= storage[0]
            del self.refs[id(storage)]


def _run_graph(alloc, module, given, scratch):
    """Runs `module`'s graph on the allocator: `given` maps a placeholder's
    name to the storages of its value (absent: an input the step does not
    count, a primal). Each call's result is a new storage unless its fake
    tensor shares a storage with a value already made in this graph (a
    view: FX values' fake tensors alias exactly where the real ones will);
    a value is released after its last use, as the generated code and the
    boxed calling convention (the inputs' list is cleared) release it.
    `scratch(node)` is the most the node's kernel holds while it runs
    (results included). Returns the storages of each output."""
    nodes = list(module.graph.nodes)
    last = {}
    for i, node in enumerate(nodes):
        for a in node.all_input_nodes:
            last[a] = i
    held, local = {}, {}
    for i, node in enumerate(nodes):
        tensors = _tensor_vals(node.meta.get("val"))
        if node.op == "placeholder":
            # The caller's hold on a given storage passes to this graph.
            storages = given.get(node.name, [])
            for j, t in enumerate(tensors):
                local.setdefault(t.untyped_storage()._cdata,
                                 storages[j] if j < len(storages) else None)
            held[node] = storages
            continue
        elif node.op == "output":
            outs = []
            for a in node.args[0]:
                storages = held.get(a, []) if hasattr(a, "op") else []
                for st in storages:
                    alloc.hold(st)
                outs.append(storages)
            for storages in held.values():
                for st in storages:
                    alloc.release(st)
            return outs
        storages = []
        alloc.at = (module, node.name)
        # What the op's kernel holds above its inputs while it runs.
        alloc.transient(scratch(node))
        for t in tensors:
            key = t.untyped_storage()._cdata
            if key not in local or not alloc.live(local[key]):
                local[key] = alloc.make(t.untyped_storage().nbytes())
            if local[key] is not None:
                storages.append(local[key])
                alloc.hold(local[key])
        held[node] = storages
        for a in node.all_input_nodes + [node]:
            if a in held and last.get(a, -1) <= i:
                for st in held.pop(a):
                    alloc.release(st)
    return []


def _tensor_like(torch, val):
    if val.dtype.is_floating_point:
        return torch.randn(val.shape, dtype=val.dtype)
    return torch.zeros(val.shape, dtype=val.dtype)


def profiled_peak(fn):
    """The most bytes the CPU allocator holds above its level while fn()
    runs: PyTorch's profiler's allocation and free events, in time order
    (events of the same timestamp in the order recorded)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted((e for e in prof.profiler.kineto_results.events()
                     if e.name() == "[memory]"), key=lambda e: e.start_ns())
    level = peak = 0
    for e in events:
        level += e.nbytes()
        peak = max(peak, level)
    return peak


class KernelScratch:
    """The most bytes an op's kernel holds while it runs, its results
    included: measured once per op and operand shapes by running the op on
    random tensors of those shapes under PyTorch's profiler (so the noise
    native_dropout draws, a convolution's unfolded input, the double a
    Python scalar operand is wrapped in are what the kernel does, not a
    rule about it). The random generator's state is restored; an op whose
    run fails, or that communicates (c10d), counts its results only; with a
    profiler already running (the caller's), nothing is measured.
    seconds(node): the kernel's time, measured the same way."""

    def __init__(self, torch):
        self.torch = torch
        self.cache = {}
        self.enabled = not torch.autograd.profiler._is_profiler_enabled

    def __call__(self, node):
        operands = self._operands(node)
        if operands is None:
            return 0
        key = ("peak",) + operands[2]
        if key not in self.cache:
            self.cache[key] = self._measure(node.target, operands[0], operands[1])
        return self.cache[key]

    def seconds(self, node):
        """The time `node`'s kernel takes, measured once per op and
        operand shapes as its scratch is (the fastest of five runs after
        an untimed one); 0 where the scratch is not measured."""
        operands = self._operands(node)
        if operands is None:
            return 0.0
        key = ("seconds",) + operands[2]
        if key not in self.cache:
            self.cache[key] = self._measure(node.target, operands[0], operands[1],
                                            self._time)
        return self.cache[key]

    def _operands(self, node):
        """(flat operands, their pytree spec, the cache key) of a node whose
        kernel is measured, else None."""
        torch = self.torch
        if not self.enabled or node.op != "call_function" or \
                not hasattr(node.target, "_schema") or \
                "c10d" in node.target.name():
            return None
        args = torch.fx.node.map_arg(node.args, lambda a: a.meta.get("val"))
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda a: a.meta.get("val"))
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        key = [node.target]
        for x in flat:
            if isinstance(x, torch.Tensor):
                key.append((tuple(x.shape), tuple(x.stride()), x.dtype))
            else:
                key.append(repr(x))
        return flat, spec, tuple(key)

    @staticmethod
    def _time(fn):
        fn()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        return best

    def _measure(self, target, flat, spec, how=None):
        torch = self.torch
        from torch._subclasses.fake_tensor import unset_fake_temporarily
        try:
            with unset_fake_temporarily(), torch.random.fork_rng(devices=[]), \
                    torch.no_grad():
                real = [torch.empty_strided(x.shape, x.stride(), dtype=x.dtype).copy_(
                    _tensor_like(torch, x)) if isinstance(x, torch.Tensor) else x
                        for x in flat]
                args, kwargs = torch.utils._pytree.tree_unflatten(real, spec)
                return (how or profiled_peak)(lambda: target(*args, **kwargs))
        except Exception:
            return 0


def eager_peak(fw_module, bw_module, num_fwd_outputs, where=None, scratch=None):
    """The peak bytes PyTorch's allocator holds above its level before the
    step when PyTorch's aot_eager compiler runs the forward and then the
    backward graph op by op: inputs and parameters not counted, the
    gradients counted, a saved value freed at its last use in the
    backward; while an op runs, what its kernel holds (KernelScratch,
    measured: `scratch`, shared between calls)."""
    import torch
    scratch = scratch or KernelScratch(torch)
    alloc = _Allocator()
    out_node = next(n for n in fw_module.graph.nodes if n.op == "output")
    outs = _run_graph(alloc, fw_module, {}, scratch)
    by_name = {a.name: st for a, st in zip(out_node.args[0], outs) if hasattr(a, "op")}
    # The forward's hold on a saved value passes to the backward, which
    # releases it at its last use; the tangents are made for it.
    given = {}
    for node in bw_module.graph.nodes:
        if node.op != "placeholder":
            continue
        if node.name in by_name:
            given[node.name] = by_name[node.name]
        elif _is_tangent(node):
            given[node.name] = [alloc.make(t.untyped_storage().nbytes())
                                for t in _tensor_vals(node.meta.get("val"))]
            for st in given[node.name]:
                alloc.hold(st)
    _run_graph(alloc, bw_module, given, scratch)
    if where is not None:  # a list: receives where the peak is
        module, name = alloc.peak_at or (None, None)
        where.append(("forward" if module is fw_module else "backward", name))
    return alloc.peak


# -- The partition ------------------------------------------------------------------

def _mutated_inputs(graph, num_fwd_outputs):
    """The primal inputs the step mutates (batch norm's running statistics),
    by AOTAutograd's output descriptors."""
    from torch._functorch._aot_autograd.descriptors import InputMutationAOTOutput
    out = next(n for n in graph.nodes if n.op == "output")
    descs = out.meta.get("desc") or []
    targets = [d.mutated_input for d in descs[:num_fwd_outputs]
               if isinstance(d, InputMutationAOTOutput)]
    return {n for n in graph.nodes if n.op == "placeholder"
            and n.meta.get("desc") is not None and n.meta["desc"] in targets}


def _closure(graph, bwd, saved, pinned_nodes, mutated):
    """`saved` grown so that AOTAutograd can build the backward: every
    forward value the backward reads is saved or recomputable from saved
    values, and recomputation reaches no primal input (a primal the
    backward needs is saved, as min-cut does), no pinned node and no input
    the step mutates (a value computed from one is saved: the input has
    changed when the backward runs)."""
    saved = set(saved)
    seen = set()

    def need(n):
        if n in saved or n in seen or n in bwd:
            return
        seen.add(n)
        source = n.args[0] if n.target is operator.getitem else n
        if n.op == "placeholder" or n in pinned_nodes or source in pinned_nodes or \
                any(a in mutated for a in source.all_input_nodes):
            saved.add(n)
            return
        for a in n.all_input_nodes:
            need(a)

    for node in graph.nodes:
        if node in bwd:
            for a in node.all_input_nodes:
                need(a)
    return saved


def _split_dropouts(torch, graph):
    """Each training-mode native_dropout's output becomes x * float(mask) *
    scale (bit-identical to ATen's CPU kernel, which multiplies by the mask
    and then the scale): only the random mask must be saved, the output can
    be recomputed from it, as the planner sees it."""
    aten = torch.ops.aten
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.native_dropout.default:
            continue
        x, p = node.args[0], node.args[1]
        train = node.args[2] if len(node.args) > 2 else node.kwargs.get("train")
        items = {u.args[1]: u for u in node.users if u.target is operator.getitem}
        out = items.get(0)
        if train is False or out is None or not out.users or \
                not isinstance(out.meta.get("val"), torch.Tensor) or \
                out.meta["val"].dtype != torch.float32:
            continue
        scale = 1.0 / (1.0 - p) if p < 1 else 0.0
        val = out.meta["val"]
        with graph.inserting_after(out):
            mask = items.get(1) or graph.call_function(operator.getitem, (node, 1))
        if 1 not in items:
            mask.meta.update(node.meta, val=node.meta["val"][1])
        with graph.inserting_after(mask):
            as_float = graph.call_function(aten._to_copy.default, (mask,),
                                           {"dtype": torch.float32})
        with graph.inserting_after(as_float):
            kept = graph.call_function(aten.mul.Tensor, (x, as_float))
        with graph.inserting_after(kept):
            scaled = graph.call_function(aten.mul.Tensor, (kept, scale))
        for new in (as_float, kept, scaled):
            new.meta.update({k: v for k, v in out.meta.items() if k != "val"})
            # A tensor of its own (eager_peak tells values apart by storage).
            mode = getattr(val, "fake_mode", None)
            if mode is None:
                new.meta["val"] = val
            else:
                with mode:
                    new.meta["val"] = torch.empty_like(val)
        out.replace_all_uses_with(scaled)


def _fallback(joint_module, joint_inputs, num_fwd_outputs, static, reason):
    from torch._functorch.partitioners import default_partition
    warnings.warn(f"remat_torch.partition: {reason}; using AOTAutograd's default "
                  "partition for this graph", stacklevel=3)
    return default_partition(joint_module, joint_inputs, num_fwd_outputs=num_fwd_outputs,
                             static_lifetime_input_indices=static)


def _node_flops(torch, node):
    """The FLOPs PyTorch's flop counter gives a node's op (matmuls and
    convolutions; 0 for the ops it does not count), run on its fake values."""
    if node.op != "call_function" or not hasattr(node.target, "overloadpacket"):
        return 0
    from torch.utils.flop_counter import FlopCounterMode
    vals = [t for t in _tensor_vals(node.meta.get("val"))]
    if not vals or not hasattr(vals[0], "fake_mode"):
        return 0
    args = torch.fx.node.map_arg(node.args, lambda a: a.meta.get("val"))
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda a: a.meta.get("val"))
    try:
        with vals[0].fake_mode, FlopCounterMode(display=False) as counter:
            node.target(*args, **kwargs)
    except Exception:
        return 0
    return counter.get_total_flops()


def _refine_for_eager(torch, graph, bwd, saved, modules, close, build, num_fwd_outputs,
                      pinned, budget, scratch, peer=None):
    """remat's plan minimizes the peak of remat's own executor, where a
    pointwise op's result kept beside its input can cost nothing (the two
    fuse, or share a buffer); run op by op, each value is a tensor of its
    own, and each recomputed op is a kernel of its own that takes time.
    The plan is refined on eager_peak, the peak of that execution, and on
    the measured time of the ops the backward recomputes
    (KernelScratch.seconds), in two descents of the same moves: for a saved
    value, recompute it from its inputs (saved instead), or from what is
    saved already.

    1. The lowest peak: from remat's plan, for each saved value, the
       largest first, the first move that lowers (peak, saved bytes),
       until none does. Its peak is L.
    2. The cheapest plan at the budget: H is the peak of the plan that
       recomputes nothing but views (free to recompute), the target
       T = L + budget x (H - L), as PyTorch's activation_memory_budget
       goes from the least memory (0) to its default partition (1); or
       `peer`, the peak of PyTorch's own partition at the budget, where
       that is lower and reachable. From that plan, the move that buys the
       most peak per second of recomputation (found lazily: a move's rate
       in an earlier round bounds its rate now), until the peak is at most
       the target.
    The result is the faster of the two plans at or below the target (the
    first always is). The recomputed matmul and convolution FLOPs (PyTorch's flop
    counter) may grow to max(the plan's, (1 - budget) x the forward's).
    budget None (a policy other than budget): the first descent alone, with
    no FLOPs added.
    Returns the saved set, its modules, the values the chosen descent
    moved and a dict: lowest (L) and lowest_seconds (its recomputation),
    highest (H, None at budget 0), peer, target, and the chosen plan's peak
    and seconds."""
    flops = {}

    def node_flops(node):
        if node.name not in flops:
            flops[node.name] = _node_flops(torch, node)
        return flops[node.name]

    forward = {n.name: n for n in graph.nodes if n.op == "call_function" and n not in bwd}

    def recomputed(bw):
        return [forward[n.name] for n in bw.graph.nodes
                if n.op == "call_function" and n.name in forward]

    def storages(node):
        return {t.untyped_storage()._cdata: t.untyped_storage().nbytes()
                for t in _tensor_vals(node.meta.get("val"))}

    def saved_bytes(nodes):
        held = {}
        for n in nodes:
            held.update(storages(n))
        return sum(held.values())

    order = {n: i for i, n in enumerate(graph.nodes)}
    share = 1.0 - (1.0 if budget is None else float(budget))
    allowance = max(sum(map(node_flops, recomputed(modules[1]))),
                    share * sum(map(node_flops, forward.values())))
    evaluated = {}

    def evaluate(trial):
        """(peak, saved bytes, recompute seconds) of a saved set, None
        where it recomputes more FLOPs than the allowance (the modules are
        built again for the plan chosen, not kept for every trial)."""
        key = frozenset(trial)
        if key not in evaluated:
            built = build(trial)
            again = recomputed(built[1])
            evaluated[key] = None if sum(map(node_flops, again)) > allowance else (
                eager_peak(*built, num_fwd_outputs, scratch=scratch), saved_bytes(trial),
                sum(map(scratch.seconds, again)))
        return evaluated[key]

    def moves(saved):
        """The saved sets one move away, the largest value first (the
        graph's order breaks ties, so that a step gets the same plan in
        every process), with the value moved."""
        for node in sorted(saved, key=lambda n: (-saved_bytes([n]), order[n])):
            if node.op != "call_function" or node in pinned:
                continue
            # The node's saved views go with it (they would keep it).
            aliases = {n for n in saved if storages(n).keys() & storages(node).keys()}
            inputs = {a for a in node.all_input_nodes if a.op != "placeholder"}
            for kind, trial in enumerate((close((saved - aliases) | inputs),
                                          close(saved - aliases))):
                if not trial & aliases:
                    yield (node, kind), trial

    # 1. The lowest peak. Lexicographic: the peak, then the saved bytes
    # (changes that each leave the peak where it is can lower it together).
    # A plan is its saved set and evaluate()'s cost.
    lowest = (saved, evaluate(saved))
    lowest_moved = []
    changed = True
    while changed:
        changed = False
        for (node, _), trial in moves(lowest[0]):
            cost = evaluate(trial)
            if cost is not None and cost[:2] < lowest[1][:2]:
                lowest = (trial, cost)
                lowest_moved.append(node)
                changed = True
                break
    low_peak = lowest[1][0]

    # 2. The cheapest plan at the budget, from the plan that saves every
    # forward value the backward reads, a view's base in its place.
    def is_view(node):
        return node.op == "call_function" and node.target is not operator.getitem and \
            storages(node).keys() and storages(node).keys() <= {
                k for a in node.all_input_nodes for k in storages(a)}

    info = dict(lowest=low_peak, lowest_seconds=lowest[1][2], target=low_peak,
                highest=None, peer=None)
    chosen, chosen_moved = lowest, lowest_moved
    if budget:
        everything = set()
        pending = [a for n in graph.nodes if n in bwd for a in n.all_input_nodes
                   if a not in bwd]
        while pending:
            node = pending.pop()
            if node in everything:
                continue
            if is_view(node):
                pending.extend(node.all_input_nodes)
            else:
                everything.add(node)
        current = close(everything)
        cost = evaluate(current)
        if cost is not None:
            target = low_peak + float(budget) * max(0, cost[0] - low_peak)
            if peer is not None and low_peak <= peer < target:
                target = peer
            info.update(highest=cost[0], target=target, peer=peer)
            moved = []
            # Lazy greedy: a move's rate from an earlier round bounds what
            # it buys now (it seldom grows), so a round tries the moves in
            # the order of their last rates and stops at one whose last
            # rate is below the best of this round.
            rates = {}
            while cost[0] > target:
                best = None
                ordered = sorted(moves(current),
                                 key=lambda m: -rates.get(m[0], float("inf")))
                for key, trial in ordered:
                    if best is not None and rates.get(key, float("inf")) <= best[0]:
                        break
                    c = evaluate(trial)
                    rates[key] = float("-inf") if c is None or c[0] >= cost[0] else \
                        (cost[0] - c[0]) / max(c[2] - cost[2], 1e-7)
                    if rates[key] > float("-inf") and (best is None or rates[key] > best[0]):
                        best = (rates[key], key[0], trial, c)
                if best is None:
                    break
                _, node, current, cost = best
                moved.append(node)
            if cost[0] <= target and cost[2] < chosen[1][2]:
                chosen, chosen_moved = (current, cost), moved
    info.update(peak=chosen[1][0], seconds=chosen[1][2])
    return chosen[0], build(chosen[0]), chosen_moved, info


def _peer_peak(torch, joint_module, joint_inputs, num_fwd_outputs, static, budget,
               scratch):
    """eager_peak of PyTorch's own partition of the joint graph (AOTAutograd's
    min-cut at activation_memory_budget `budget`), or None where it fails.
    Below budget 1 that partition may recompute dropout, which draws new
    masks; its peak still bounds remat's, so that remat's plan is never the
    one of the two that holds more."""
    import copy
    from torch._functorch import config
    from torch._functorch import partitioners as P
    try:
        module = copy.deepcopy(joint_module)
        with config.patch(activation_memory_budget=float(budget)):
            fw, bw = P.min_cut_rematerialization_partition(
                module, joint_inputs, num_fwd_outputs=num_fwd_outputs,
                static_lifetime_input_indices=static)
    except Exception:
        return None
    return eager_peak(fw, bw, num_fwd_outputs, scratch=scratch)


def partition(joint_module, joint_inputs, *, num_fwd_outputs, policy="budget",
              budget=0.5, remat_opt=None, static_lifetime_input_indices=None,
              compiler=None, debug=None, objective=None, **unused):
    """AOTAutograd partition function: (forward GraphModule, backward
    GraphModule) with the forward values remat's plan keeps saved.

    policy: budget (with `budget` on PyTorch's activation_memory_budget
    scale: 0 the smallest peak remat reaches, 1 no recomputation),
    selective, sqrt, sequential, checkpoint (the model's
    torch.utils.checkpoint regions) or none (save everything the backward
    reads). remat_opt: the remat-opt executable (default: find_remat_opt()).
    objective: None (remat's plan as it is) or "eager" (the graphs run op by
    op, PyTorch's aot_eager: the plan is refined on eager_peak, see
    _refine_for_eager). debug: a list; each call appends a dict of the
    step's MLIR, remat-opt's output, the saved nodes' names, the unmapped
    ops, the names of the forward nodes the backward recomputes, the
    backward GraphModule, the ops lowered through their decompositions, the
    nodes the eager refinement recomputes and the graphs' eager_peak."""
    import torch
    from torch._functorch import partitioners as P
    from torch.utils.checkpoint import CheckpointPolicy

    mark_options(policy, budget)  # a bad policy is the caller's error
    if objective not in (None, "eager"):
        raise ValueError(f"remat_torch: unknown objective {objective!r} (None or 'eager')")
    remat_opt = remat_opt or find_remat_opt()
    joint_module.graph.eliminate_dead_code()
    joint_module.recompile()
    graph = joint_module.graph
    static = static_lifetime_input_indices or []
    scratch = KernelScratch(torch)
    peer = None
    if objective == "eager" and policy == "budget" and float(budget) > 0:
        peer = _peer_peak(torch, joint_module, joint_inputs, num_fwd_outputs,
                          static_lifetime_input_indices, budget, scratch)

    if any(P.is_sym_node(n) for n in graph.nodes if n.op != "output"):
        return _fallback(joint_module, joint_inputs, num_fwd_outputs,
                         static_lifetime_input_indices, "the graph has symbolic sizes")
    if P.has_recomputable_ops(joint_module):
        joint_module = P.cleanup_recompute_tags(joint_module, is_default_partition=False)
        graph = joint_module.graph
    P.force_save_collectives(joint_module)
    P.force_save_effectful_ops(joint_module)
    P.force_save_bw_mutation_src(joint_module)
    _split_dropouts(torch, graph)
    joint_module.recompile()
    node_info = P.classify_nodes(joint_module, static, num_fwd_outputs)

    low = _Lowering(joint_module, num_fwd_outputs, policy == "checkpoint")
    low.lower()
    mlir = low.text()
    # Only what the backward depends on matters to the plan (not, say,
    # batch norm's running statistics, a forward output).
    relevant = _live_nodes([n for n in low.bwd_outs if isinstance(n, torch.fx.Node)])
    unmapped = {}
    for node, what in low.unmapped.items():
        if node in relevant:
            unmapped[what] = unmapped.get(what, 0) + 1
    if unmapped:
        names = ", ".join(f"{op} (x{n})" if n > 1 else op
                          for op, n in sorted(unmapped.items()))
        warnings.warn(f"remat_torch.partition: remat does not map {names}; their "
                      "values are saved, not recomputed", stacklevel=2)
    if mlir is None:
        return _fallback(joint_module, joint_inputs, num_fwd_outputs,
                         static_lifetime_input_indices,
                         "no gradient of the graph is computed by ops remat maps")
    try:
        out = _run_remat_opt(mlir, policy, budget, remat_opt)
    except (RuntimeError, OSError) as err:
        return _fallback(joint_module, joint_inputs, num_fwd_outputs,
                         static_lifetime_input_indices, str(err))
    ops, args = saved_values(out, len(low.step_args))

    bwd = low.bwd
    saved = set()
    for tag in ops:
        owner = low.owner.get("%" + tag)
        if owner is None:
            continue
        node, index, is_result = owner
        if index is not None:
            items = [u for u in node.users
                     if u.target is operator.getitem and u.args[1] == index]
            saved.update(items)
        elif is_result:
            saved.add(node)
        else:
            # An intermediate of the node's expansion (layer norm's centred
            # input, ...): FX saves whole values, so the node's own.
            items = [u for u in node.users if u.target is operator.getitem]
            saved.update(items or [node])
    for i in args:
        _, node, index = low.step_args[i]
        if node.op == "placeholder":
            continue  # the closure saves the primal inputs the backward needs
        if index is not None:
            saved.update(u for u in node.users
                         if u.target is operator.getitem and u.args[1] == index)
        else:
            saved.add(node)
    saved.update(low.pinned_bwd_inputs)
    saved.update(n for n in graph.nodes if n not in bwd and n.op != "output"
                 and n.meta.get("recompute") == CheckpointPolicy.MUST_SAVE)
    pinned_nodes = {n for _, n, _ in low.args if n.op != "placeholder"}
    pinned_nodes.update(n for n in graph.nodes if n.op == "call_function" and
                        n not in low.env and n not in bwd)
    mutated = _mutated_inputs(graph, num_fwd_outputs)
    order = {n: i for i, n in enumerate(graph.nodes)}

    def close(nodes):
        nodes = _closure(graph, bwd, nodes, pinned_nodes, mutated)
        # The tuple of a multi-output node is never saved: its items are.
        return {n for n in nodes if not (n.op == "call_function" and n.users and all(
            u.target is operator.getitem for u in n.users)) and n not in bwd}

    def build(nodes):
        fw, bw = P._extract_fwd_bwd_modules(
            joint_module, sorted(nodes, key=order.__getitem__), saved_sym_nodes=[],
            num_fwd_outputs=num_fwd_outputs,
            static_lifetime_input_nodes=node_info.static_lifetime_input_nodes)
        # The backward's copies of recomputed forward nodes come first in
        # the joint graph's order; as min-cut does, each moves to just
        # before its first use, as autograd's engine would run it, and
        # getitems rise to their tuple so that the unused items die at once.
        bw = P.reordering_to_mimic_autograd_engine(bw)
        fw = P.raise_getitems(fw)
        bw = P.raise_getitems(bw)
        for module in (fw, bw):
            module.graph.eliminate_dead_code()
            module.recompile()
        return fw, bw

    saved = close(saved)
    fw_module, bw_module = build(saved)
    refined, refinement = [], None
    if objective == "eager":
        saved, (fw_module, bw_module), refined, refinement = _refine_for_eager(
            torch, graph, bwd, saved, (fw_module, bw_module), close, build,
            num_fwd_outputs, pinned_nodes, budget if policy == "budget" else None,
            scratch, peer)
    saved_list = sorted(saved, key=order.__getitem__)
    if debug is not None:
        forward = {n.name for n in fw_module.graph.nodes if n.op == "call_function"}
        debug.append(dict(
            mlir=mlir, planned=out, saved=[n.name for n in saved_list], unmapped=unmapped,
            recomputed=[n.name for n in bw_module.graph.nodes
                        if n.op == "call_function" and n.name in forward],
            backward=bw_module, decomposed=sorted(low.decomposed),
            refined=[n.name for n in refined], refinement=refinement,
            eager_peak=eager_peak(fw_module, bw_module, num_fwd_outputs,
                                  scratch=scratch)))
    return fw_module, bw_module
