"""Exports a PyTorch model's training step to remat's IR contract.

The step is traced by torch.compile (Dynamo) into AOTAutograd's joint graph,
forward and backward together with the tangent of the loss as an input, in
core ATen ops (torch._decomp.core_aten_decompositions: the backward formulas
of layer norm, softmax, GELU, ... become elementwise ops and reductions).
AOTAutograd tags the nodes of torch.utils.checkpoint regions
(use_reentrant=False) with node.meta["recompute"] (a CheckpointPolicy) and
node.meta["ac_graph_id"] (one id per checkpoint call); each id becomes a
`remat.segment`, and MUST_SAVE / PREFER_SAVE of a selective-checkpoint policy
becomes `remat.policy = "save"`. node.meta["partitioner_tag"] says whether a
node is forward or backward; backward nodes go into `remat.backward`.
"""

import inspect
import operator
import os
import re
import traceback

from . import emit as E


class ExportError(Exception):
    pass


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def model_line(node):
    """`file:line in fn: code` of the user's source that made the node."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', trace)
    if not frames:
        return "<no source line recorded>"
    # The innermost frame outside torch itself.
    user = [f for f in frames if f"{os.sep}torch{os.sep}" not in f[0]] or frames
    path, line, fn, code = user[-1]
    return f"{path}:{line} in {fn}: {code.strip()}"


def trace_error(err):
    """What a user can act on when torch.compile cannot trace the step: the
    model line it stopped at (the innermost frame outside torch that the
    error or its traceback names), its first line, and what to try."""
    import traceback as tb
    text = str(err)

    def outside(frames):
        return [f for f in frames if f"{os.sep}torch{os.sep}" not in f[0]
                and f"{os.sep}remat_torch{os.sep}" not in f[0]]
    # The innermost frame of the user code Dynamo was tracing (inside a
    # library's module, the line that stops it: a logging call in
    # transformers), else the outermost of the traceback's.
    user = outside(re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', text))[-1:]
    user += outside([(f.filename, str(f.lineno), f.name, f.line or "")
                     for f in tb.extract_tb(err.__traceback__)])
    where = (f" at {user[0][0]}:{user[0][1]} in {user[0][2]} ({user[0][3].strip()})"
             if user else "")
    first = next((l.strip() for l in text.splitlines() if l.strip()), type(err).__name__)
    # An exception the model raised while traced ("Observed exception"):
    # which one, and that the path traced may be one eager does not take
    # (transformers' code under is_torchdynamo_compiling()).
    raised = re.search(r"raised exception (.+)", text)
    if raised and "Observed exception" in first:
        first += (f" ({raised.group(1).strip()}, raised by the model while traced: run it "
                  f"in eager to see whether it raises there too; code that checks "
                  f"torch.compiler.is_compiling() may take another path under "
                  f"torch.compile)")
    # Shapes or trip counts that depend on tensor values (a loop over
    # nonzero's result, as transformers' eager mixtures of experts loop over
    # the experts their router picked): PyTorch's own failure under
    # torch.compile, which suggests torch._check; no annotation makes one
    # static graph of it.
    dependent = re.search(r"[^.\n:]*data-dependent[^.(\n]*", text)
    if dependent:
        first = (f"{dependent.group(0).strip()} (the model's shapes or control flow depend on tensor values, "
                 f"as a mixture of experts' loop over the experts its router picked; "
                 f"PyTorch cannot trace it into one graph of static shapes, which "
                 f"remat compiles)")
    return (f"torch.compile could not trace the training step{where}: "
            f"{type(err).__name__}: {first}. The exporter needs one graph "
            f"(fullgraph=True): take what breaks it out of the forward (Python side "
            f"effects such as print or logging, .item() or .tolist(), control flow on "
            f"tensor values), or turn off the model option that adds it (a KV cache: "
            f"use_cache=False); or train the model through torch.compile(model, "
            f"backend=\"remat\"), which compiles the graphs between such breaks and "
            f"leaves the code that makes them to PyTorch")


def install_output_capturing_hooks(model):
    """transformers (5.x) installs a model's output-capturing hooks on the
    first forward that records any of its outputs (Wav2Vec2Model's does on
    every call), under a threading lock torch.compile cannot trace
    ("Unsupported context manager").
    Installed here, before tracing, on every transformers model in `model`,
    the forward finds them installed and takes no lock. Nothing without
    transformers or that helper."""
    import sys
    capturing = sys.modules.get("transformers.utils.output_capturing")
    install = getattr(capturing, "maybe_install_capturing_hooks", None)
    if install is None:
        return
    from transformers import PreTrainedModel
    for module in model.modules():
        if isinstance(module, PreTrainedModel):
            install(module)


def trace_joint(model, inputs):
    """Returns (joint GraphModule, num_fwd_outputs, names of the joint
    graph's primal inputs in order, the flat tensors in that order, the
    parameter names, the positions of the model's own outputs among the
    joint graph's forward outputs). The joint graph's forward outputs are
    the updated values of mutated inputs (batch norm's running statistics,
    ...), then Dynamo's graph's: the model's outputs and the tensors the
    model stores on itself while traced (Wav2Vec2-Conformer's cached rotary
    embedding), which Dynamo returns to store them after the graph runs.
    The model's are those that require grad (its loss)."""
    import torch
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.partitioners import default_partition
    from torch.func import functional_call

    install_output_capturing_hooks(model)
    params = {k: v.detach().clone().requires_grad_(v.requires_grad)
              for k, v in model.named_parameters()}
    buffers = {k: v.detach().clone() for k, v in model.named_buffers()}
    arg_names = [n for n in inspect.signature(model.forward).parameters][:len(inputs)]
    named = ([(k, v) for k, v in params.items()] + [(k, v) for k, v in buffers.items()]
             + list(zip(arg_names, inputs)))
    flat = [v for _, v in named]
    np_, nb = len(params), len(buffers)

    def step(*flat):
        p = dict(zip(params, flat[:np_]))
        b = dict(zip(buffers, flat[np_:np_ + nb]))
        return functional_call(model, (p, b), tuple(flat[np_ + nb:]))

    captured = {}

    def partition(gm, joint_inputs, **kw):
        captured["joint"] = gm
        captured["num_fwd_outputs"] = kw["num_fwd_outputs"]
        return default_partition(gm, joint_inputs, **kw)

    # detach stays an op (the exporter maps it as the identity): decomposed,
    # it is an alias, and a scan's forward combine graph that returns one as
    # an activation for the backward fails torch's own check that a scan
    # body aliases none of its inputs.
    decompositions = {op: fn for op, fn in core_aten_decompositions().items()
                      if op is not torch.ops.aten.detach.default}
    aot = aot_autograd(fw_compiler=lambda gm, ex: gm, bw_compiler=lambda gm, ex: gm,
                       partition_fn=partition, decompositions=decompositions)

    def backend(gm, example_inputs):
        captured["inputs"] = list(example_inputs)
        out = next(n for n in gm.graph.nodes if n.op == "output")
        results = out.args[0] if isinstance(out.args[0], (list, tuple)) else [out.args[0]]
        captured["results"] = [isinstance(r, torch.fx.Node) and
                               getattr(r.meta.get("example_value"), "requires_grad", False)
                               for r in results]
        return aot(gm, example_inputs)

    torch._dynamo.reset()
    compiled = torch.compile(step, backend=backend, fullgraph=True, dynamic=False)
    try:
        loss = compiled(*flat)
    except ExportError:
        raise
    except Exception as err:  # Dynamo's or AOTAutograd's own failure
        raise ExportError(trace_error(err)) from None
    if "joint" not in captured:
        raise ExportError("AOTAutograd built no joint graph: does the loss depend on a "
                          "parameter that requires grad?")
    # Dynamo's graph inputs are the step's arguments it uses, in some order,
    # and the tensors the model holds as plain attributes (neither
    # parameters nor buffers: VideoMAE's sinusoidal position table), which
    # Dynamo lifts to inputs too: name them by identity with the tensors
    # passed, or with the module attribute.
    held = [(f"{m}.{a}" if m else a, v) for m, module in model.named_modules()
            for a, v in vars(module).items()
            if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter)]
    names = []
    for t in captured["inputs"]:
        match = [n for n, v in named + held if v is t] or \
                [n for n, v in named if v.data_ptr() == t.data_ptr() and v.shape == t.shape]
        if not match:
            raise ExportError("cannot match a graph input to a parameter, buffer or input")
        names.append(match[0])
    tensors = [dict(named + held)[n] for n in names]
    del loss
    first = captured["num_fwd_outputs"] - len(captured["results"])
    user_outputs = [first + i for i, grad in enumerate(captured["results"]) if grad]
    return (captured["joint"], captured["num_fwd_outputs"], names, tensors, set(params),
            user_outputs)


def VIEW_OPS(torch):
    aten = torch.ops.aten
    return (aten.t.default, aten.transpose.int, aten.permute.default, aten.view.default,
            aten._unsafe_view.default, aten.reshape.default, aten.expand.default,
            aten.alias.default, aten.detach.default, aten.squeeze.dim,
            aten.squeeze.dims, aten.squeeze.default, aten.unsqueeze.default)


def _view_copies(torch):
    """VIEW_OPS and their ATen `_copy` forms, which a scan's functionalized
    combine graph holds instead."""
    views = set(VIEW_OPS(torch))
    for op in VIEW_OPS(torch):
        copy = getattr(torch.ops.aten, f"{op.overloadpacket.__name__}_copy", None)
        overload = getattr(copy, op._overloadname, None) if copy else None
        if overload is not None:
            views.add(overload)
    return views


class _SlotView:
    """A scan's stacked output that is a view of its xs slice (AOTAutograd
    stacks each iteration's transposed weight for the backward): not
    stacked, as a forward view is not saved outside loops; a scan that
    reads a slot of it rebuilds the view from that slot of the xs."""

    def __init__(self, source, chain, shape):
        self.source, self.chain, self.shape = source, chain, tuple(shape)

    def read(self, e, map_node, at):
        env = {self.chain[0].args[0]: e.read_slot(self.source, at)}
        for b in self.chain:
            env[b] = map_node(b, env.__getitem__)
        return env[self.chain[-1]]


def _dtype_of(node):
    """The element type PyTorch recorded for a node's (tensor) result."""
    val = node.meta.get("val")
    if not hasattr(val, "dtype"):
        return None
    try:
        return E.mlir_dtype(val.dtype)
    except E.UnsupportedOp:
        return None


def _shape_of(node):
    val = node.meta.get("val")
    return tuple(val.shape) if hasattr(val, "shape") else None


def _live_nodes(roots):
    """The nodes `roots` depend on, themselves included."""
    live, stack = set(), [r for r in roots if r is not None]
    while stack:
        n = stack.pop()
        if n in live:
            continue
        live.add(n)
        stack.extend(n.all_input_nodes)
    return live


def _tag_backward(graph):
    """Tags as backward the nodes a custom autograd.Function's backward
    (BLOOM's GELU) brings into the joint graph: AOTAutograd leaves them
    untagged. Every node that reads the loss's tangent, directly or through
    other nodes, is backward (a forward op cannot read a backward value),
    and so is an untagged node that only backward nodes read (the
    derivative the backward computes from a saved input is computed in the
    backward, as PyTorch does, not saved from the forward)."""
    backward = set()
    for node in graph.nodes:
        if node.op == "placeholder":
            if node.name.startswith("tangents"):
                backward.add(node)
            continue
        if node.op == "output":
            continue
        if node.meta.get("partitioner_tag") == "is_backward" or \
                any(a in backward for a in node.all_input_nodes):
            backward.add(node)
    for node in reversed(graph.nodes):
        if node.op == "call_function" and node.meta.get("partitioner_tag") is None and \
                node.users and all(u in backward for u in node.users):
            backward.add(node)
    for node in backward:
        node.meta["partitioner_tag"] = "is_backward"


def _scan_flips(graph):
    """AOTAutograd runs a scan's backward as a scan over the forward's
    stacks flipped along dimension 0 (`aten.flip`) and flips its stacked
    results back. The flips are folded into the scans' slot indices, so the
    backward loop reads slot n - 1 - i of the forward's stacks, as
    docs/Loops.md states the contract, and no reversed copy is made.
    Returns (flip -> its source, for a flip that only scans read as xs;
    flip -> the scan output it reverses, for a flip that is that output's
    only reader; the (scan, output index) pairs written in reverse)."""
    import torch
    scan, flip = torch.ops.higher_order.scan, torch.ops.aten.flip.default
    folded, unflipped, reversed_ys = {}, {}, set()
    for n in graph.nodes:
        if n.op != "call_function" or n.target is not flip:
            continue
        src, dims = n.args[0], n.args[1]
        rank = n.meta["val"].dim()
        if rank == 0 or sorted({d % rank for d in dims}) != [0]:
            continue
        users = list(n.users)
        if users and all(u.op == "call_function" and u.target is scan and
                         n in u.args[2] and n not in u.args[1] and n not in u.args[3]
                         for u in users):
            folded[n] = src
        elif isinstance(src, torch.fx.Node) and src.target is operator.getitem and \
                src.args[0].op == "call_function" and src.args[0].target is scan and \
                src.args[1] >= len(src.args[0].args[1]) and len(src.users) == 1:
            unflipped[n] = src
            reversed_ys.add((src.args[0], src.args[1]))
    return folded, unflipped, reversed_ys


def _constant(e, joint, node):
    """A tensor the graph holds as an attribute (a torch.tensor([...])
    literal in the model) as a dense constant."""
    import functools
    value = functools.reduce(getattr, node.target.split("."), joint)
    try:
        dtype = E.mlir_dtype(value.dtype)
    except E.UnsupportedOp as err:
        raise ExportError(f"constant {node.target} has an unsupported {err}, at "
                          f"{model_line(node)}") from None
    if value.numel() == 0:
        return E.EmptyTensor(value.shape, dtype)
    e.in_backward = node.meta.get("partitioner_tag") == "is_backward"
    e.segment = None
    return e.constant(value.tolist(), dtype) if value.dim() else \
        e.splat(value.item(), [], dtype)


def _reads_empty(args):
    """Whether a mapped node's arguments hold an E.EmptyTensor."""
    if isinstance(args, E.EmptyTensor):
        return True
    if isinstance(args, dict):
        args = list(args.values())
    return isinstance(args, (list, tuple)) and any(_reads_empty(a) for a in args)


def _attribute(e, module, node):
    """A get_attr node: a scan's combine graph (a GraphModule), else a
    tensor literal as a constant."""
    import functools
    import torch
    value = functools.reduce(getattr, node.target.split("."), module)
    if isinstance(value, torch.nn.Module):
        return value
    return _constant(e, module, node)


def _emit_scan(e, state, map_node, combine, init, xs, additional, **kw):
    """torch.ops.higher_order.scan as an `scf.for` over the length n of its
    xs (docs/Loops.md): its carries are iter_args, each xs is read at slot i
    (`tensor.extract_slice`), each stacked output written at slot i
    (`tensor.insert_slice`) of a tensor the loop carries, its additional
    inputs are captured, and the combine graph's nodes are mapped one by one
    as the loop body. A flipped xs or output (the backward's scan) is read
    or written at slot n - 1 - i. Returns the scan's outputs: the final
    carries, then the stacks (None for one no live node reads)."""
    import torch
    node = e.node
    if kw.get("mutated_arg_indices"):
        raise E.UnsupportedOp("a scan whose combine function mutates its inputs")
    if set(kw) - {"mutated_arg_indices"}:
        raise E.UnsupportedOp(f"a scan with arguments {sorted(kw)}")
    if not isinstance(combine, torch.fx.GraphModule):
        raise E.UnsupportedOp("a scan whose combine function is not a graph")
    init, xs, additional = list(init), list(xs), list(additional)
    for what, values in (("init", init), ("xs", xs), ("additional input", additional)):
        for v in values:
            v = v.value if isinstance(v, E.Reversed) else v
            if not isinstance(v, E.Value) and not (what == "xs" and isinstance(v, _SlotView)):
                raise E.UnsupportedOp(f"a scan {what} that is not a tensor ({v!r})")
        if what != "xs" and any(isinstance(v, E.Reversed) for v in values):
            raise E.UnsupportedOp(f"a reversed scan {what}")
    if not xs:
        raise E.UnsupportedOp("a scan without xs (its length is that of its xs)")
    sources = [x.value if isinstance(x, E.Reversed) else x for x in xs]
    lengths = {len(x.shape) and x.shape[0] for x in sources}
    if len(lengths) != 1 or 0 in lengths:
        raise E.UnsupportedOp(f"a scan over xs of lengths {sorted(lengths)} (all xs need "
                              "one nonzero length along dimension 0)")
    n = lengths.pop()
    graph = combine.graph
    placeholders = [b for b in graph.nodes if b.op == "placeholder"]
    if len(placeholders) != len(init) + len(xs) + len(additional):
        raise E.UnsupportedOp(f"a combine graph of {len(placeholders)} inputs for "
                              f"{len(init)} carries, {len(xs)} xs and {len(additional)} "
                              "additional inputs")
    outputs = list(next(b for b in graph.nodes if b.op == "output").args[0])
    ys = outputs[len(init):]
    # The stacked outputs live nodes read, and the combine graph's nodes
    # they and the carries need.
    live = state["live"]
    read = sorted({u.args[1] for u in node.users
                   if u in live and u.target is operator.getitem})
    stacked = [k - len(init) for k in read if k >= len(init)]
    # A stacked view of an xs slice that only scans read, through flips
    # folded into their slot index, is rebuilt there instead.
    xs_placeholders = placeholders[len(init):len(init) + len(xs)]
    views = _view_copies(torch)
    slot_views = {}
    for j in stacked:
        chain, b = [], ys[j]
        while isinstance(b, torch.fx.Node) and b.op == "call_function" and \
                b.target in views:
            chain.append(b)
            b = b.args[0]
        readers = [u for g in node.users if g in live and g.args[1] == len(init) + j
                   for u in g.users if u in live]
        if chain and b in xs_placeholders and \
                isinstance(xs[xs_placeholders.index(b)], E.Value) and \
                readers and all(u in state["folded"] for u in readers):
            slot_views[j] = _SlotView(xs[xs_placeholders.index(b)], chain[::-1],
                                      node.meta["val"][len(init) + j].shape)
    stacked = [j for j in stacked if j not in slot_views]
    body_live = _live_nodes(outputs[:len(init)] + [ys[j] for j in stacked])
    vals = node.meta["val"]

    c0, c1, cn = e.index_constant(0), e.index_constant(1), e.index_constant(n)
    reverse_ys = {j for j in stacked if (node, len(init) + j) in state["reversed"]}
    last = e.index_constant(n - 1) \
        if reverse_ys or any(isinstance(x, E.Reversed) for x in xs) else None
    stack_inits = []
    for j in stacked:
        val = vals[len(init) + j]
        stack_inits.append(e.empty(tuple(val.shape), E.mlir_dtype(val.dtype)))
    iv = e.fresh("i")
    carries = [E.Value(e.fresh("carry"), v.shape, v.dtype) for v in init]
    stacks = [E.Value(e.fresh("stack"), v.shape, v.dtype) for v in stack_inits]

    saved = e.in_backward, e.segment, dict(state)
    e.regions.append([])
    e.segment = None  # marks go on the loop, never on an op in its body
    try:
        rev = None
        if last is not None:
            rev = e.fresh("rev")
            e.emit(f"  {rev} = arith.subi {last}, {iv}{e.ATTRS} : index", rev)
        env = dict(zip(placeholders, carries))
        for p, x in zip(placeholders[len(init):], xs):
            source, at = (x.value, rev) if isinstance(x, E.Reversed) else (x, iv)
            env[p] = source.read(e, map_node, at) if isinstance(source, _SlotView) \
                else e.read_slot(source, at)
        env.update(zip(placeholders[len(init) + len(xs):], additional))
        folded, unflipped, reversed_inner = _scan_flips(graph)
        state.update(live=body_live, reversed=reversed_inner, folded=folded)
        for b in graph.nodes:
            if b.op in ("placeholder", "output") or b not in body_live:
                continue
            if b.op == "get_attr":
                env[b] = _attribute(e, combine, b)
                continue
            if b.op != "call_function":
                raise ExportError(f"unsupported graph node {b.op} {b.target} in a scan's "
                                  f"combine graph, at {model_line(b)}")
            if b in folded:
                env[b] = E.Reversed(env[folded[b]])
            elif b in unflipped:
                env[b] = env[unflipped[b]]
            else:
                try:
                    env[b] = map_node(b, env.__getitem__)
                except ExportError as err:
                    # The combine graph's nodes record the scan's source
                    # line, not the combine function's.
                    raise ExportError(f"{err} (in the combine function of the scan, "
                                      f"node {node.name})") from None
        new_carries = [env[o] for o in outputs[:len(init)]]
        for i, (old, new) in enumerate(zip(init, new_carries)):
            if not isinstance(new, E.Value) or new.type != old.type:
                what = new.type if isinstance(new, E.Value) else repr(new)
                raise E.UnsupportedOp(f"a scan whose carry #{i} changes from {old.type} "
                                      f"to {what}")
        written = []
        for j, stack in zip(stacked, stacks):
            y = env[ys[j]]
            if not isinstance(y, E.Value):
                raise E.UnsupportedOp(f"a scan output #{len(init) + j} that is not a "
                                      f"tensor ({y!r})")
            written.append(e.write_slot(y, stack, rev if j in reverse_ys else iv))
        yielded = new_carries + written
        if yielded:
            e.emit(f"  scf.yield {', '.join(v.name for v in yielded)} : "
                   f"{', '.join(v.type for v in yielded)}")
    finally:
        body = e.regions.pop()
        e.in_backward, e.segment = saved[0], saved[1]
        state.clear()
        state.update(saved[2])

    results = [E.Value(e.fresh("scan"), v.shape, v.dtype) for v in carries + stacks]
    if not results:
        raise E.UnsupportedOp("a scan none of whose results is used")
    text = "\n".join("  " + e.render_line(line).replace("\n", "\n  ") for line in body)
    args = ", ".join(f"{a.name} = {v.name}" for a, v in
                     zip(carries + stacks, list(init) + stack_inits))
    e.emit(f"  {', '.join(r.name for r in results)} = scf.for {iv} = {c0} to {cn} "
           f"step {c1} iter_args({args}) -> ({', '.join(r.type for r in results)}) {{\n"
           f"{text}\n  }}{e.ATTRS}", results[0].name)
    out = results[:len(init)] + [None] * (len(outputs) - len(init))
    for j, r in zip(stacked, results[len(init):]):
        out[len(init) + j] = r
    for j, view in slot_views.items():
        out[len(init) + j] = view
    return out


def to_mlir(joint, num_fwd_outputs, names, param_names, name="step",
            description="", user_outputs=None):
    """Maps the joint graph to the MLIR text of one training step. Returns
    (text, argument names, output names, segments, the indices in `names`
    of the primal inputs that are arguments).

    The step's results are the model's outputs (the forward outputs at
    `user_outputs`, all by default; the others are updated values of mutated
    inputs, such as batch norm's running statistics, and tensors the model
    stores on itself, which the step does not return) and the parameters'
    gradients. Only the nodes they depend on are mapped,
    and only the inputs they read are arguments."""
    import torch
    from torch.utils.checkpoint import CheckpointPolicy

    _tag_backward(joint.graph)
    table = E.ops()
    e = E.Emitter()
    env = {}
    args = []          # (Value, attr)
    outs = list(next(n for n in joint.graph.nodes if n.op == "output").args[0])
    if user_outputs is None:
        user_outputs = range(num_fwd_outputs)
    user_outs = [outs[i] for i in user_outputs]
    grad_outs = [(p, g) for p, g in zip(names, outs[num_fwd_outputs:])
                 if g is not None and p in param_names]
    live = _live_nodes(user_outs + [g for _, g in grad_outs])
    placeholders = [n for n in joint.graph.nodes if n.op == "placeholder"]
    primal_i = tangent_i = 0
    arg_names = []
    arg_primals = []   # the index in `names` of each argument (None: a tangent)
    for node in placeholders:
        val = node.meta["val"]
        if node.name.startswith("tangents"):
            name_ = f"tangent{tangent_i}"
            tangent_i += 1
        else:
            name_ = _sanitize(names[primal_i])
            primal_i += 1
            if node not in live:
                continue
        try:
            dtype = E.mlir_dtype(val.dtype)
        except E.UnsupportedOp as err:
            raise ExportError(f"input '{name_}' of the step has an unsupported {err}") \
                from None
        v = E.Value(f"%{name_}", val.shape, dtype)
        env[node] = v
        args.append(v)
        arg_names.append(name_)
        arg_primals.append(None if name_.startswith("tangent") else primal_i - 1)

    # A forward view (t, transpose, view, expand, ...) that the backward
    # reads is re-emitted in the backward from its source: in PyTorch a view
    # costs no memory, and a copy saved across the step would be an
    # activation PyTorch does not have (the transpose of every weight).
    views = {aten_op for aten_op in VIEW_OPS(torch)}
    backward_copies = {}

    def backward_view(n):
        if n.op != "call_function" or n.target not in views or \
                n.meta.get("partitioner_tag") == "is_backward":
            return env[n]
        if n in backward_copies:
            return backward_copies[n]
        if n not in env:  # never materialized in the forward
            return forward_view(n, in_backward=True)
        if n not in backward_copies:
            a = torch.fx.node.map_arg(n.args, backward_view)
            k = torch.fx.node.map_arg(n.kwargs, backward_view)
            backward_copies[n] = empty_result(n) or table[n.target](e, *a, **k)
        return backward_copies[n]

    pending = set()  # forward views emitted only when a forward op uses them

    def segment_of(n):
        if n.meta.get("recompute") is not None and "ac_graph_id" in n.meta:
            return seg_ids.setdefault(n.meta["ac_graph_id"], len(seg_ids))
        return None

    def forward_view(n, in_backward=False):
        if n in env:
            return env[n]
        if n not in pending:
            return env[n]
        lookup = backward_view if in_backward else forward_view
        a = torch.fx.node.map_arg(n.args, lookup)
        k = torch.fx.node.map_arg(n.kwargs, lookup)
        empty = empty_result(n)
        if empty is not None:
            return empty
        e.result_dtype = _dtype_of(n)
        saved = e.in_backward, e.segment
        e.in_backward, e.segment = in_backward, (None if in_backward else segment_of(n))
        try:
            v = table[n.target](e, *a, **k)
        finally:
            e.in_backward, e.segment = saved
        if in_backward:
            backward_copies[n] = v
        else:
            env[n] = v
        return v

    def empty_result(n):
        """An E.EmptyTensor for a node whose result has no elements (nothing
        is emitted for it), else None."""
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor) and val.numel() == 0:
            return E.EmptyTensor(val.shape, E.mlir_dtype(val.dtype))
        return None

    def map_node(node, lookup):
        """Maps one call_function node (of the joint graph or of a scan's
        combine graph) with its arguments read through `lookup`."""
        if node.target is scan_op:
            fn = emit_scan
        else:
            fn = table.get(node.target)
        if fn is None:
            raise ExportError(f"unsupported ATen op {node.target} (node {node.name}) at "
                              f"{model_line(node)}")
        a = torch.fx.node.map_arg(node.args, lookup)
        k = torch.fx.node.map_arg(node.kwargs, lookup)
        empty = empty_result(node)
        if empty is not None:
            return empty
        if not getattr(fn, "reads_empty", False) and _reads_empty((a, k)):
            raise ExportError(f"ATen op {node.target} (node {node.name}) reads a tensor of "
                              f"no elements, which remat does not hold (only torch.cat and "
                              f"slice_scatter may read one), at {model_line(node)}")
        try:
            e.result_dtype = _dtype_of(node)
            e.node = node
            result = fn(e, *a, **k)
        except ExportError:
            raise
        except E.UnsupportedOp as err:
            raise ExportError(f"unsupported form of ATen op {node.target} (node {node.name}):"
                              f" {err}, at {model_line(node)}") from None
        except Exception as err:
            raise ExportError(f"cannot map ATen op {node.target} (node {node.name}) at "
                              f"{model_line(node)}: {type(err).__name__}: {err}\n"
                              f"{traceback.format_exc()}") from None
        shape = _shape_of(node)
        if isinstance(result, E.Value) and shape is not None and result.shape != shape:
            raise ExportError(f"internal: {node.target} (node {node.name}) gave shape "
                              f"{result.shape}, torch says {shape}")
        dtype = _dtype_of(node)
        if isinstance(result, E.Value) and dtype and result.dtype != dtype:
            raise ExportError(f"internal: {node.target} (node {node.name}) gave element "
                              f"type {result.dtype}, torch says {dtype}")
        return result

    def emit_scan(e, combine, init, xs, additional, **kw):
        return _emit_scan(e, scan_state, map_node, combine, init, xs, additional, **kw)

    seg_ids = {}
    save = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
    scan_op = torch.ops.higher_order.scan
    folded, unflipped, reversed_ys = _scan_flips(joint.graph)
    scan_state = {"live": live, "reversed": reversed_ys, "folded": folded}
    for node in joint.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            continue
        if node not in live:
            continue  # feeds only a result the step does not return
        if node.op == "get_attr":
            env[node] = _attribute(e, joint, node)
            continue
        if node.op != "call_function":
            raise ExportError(f"unsupported graph node {node.op} {node.target} at "
                              f"{model_line(node)}")
        e.in_backward = node.meta.get("partitioner_tag") == "is_backward"
        policy = node.meta.get("recompute")
        e.segment = None if e.in_backward else segment_of(node)
        if not e.in_backward and node.target in views:
            pending.add(node)
            continue
        lookup = backward_view if e.in_backward else forward_view
        if node in folded:
            env[node] = E.Reversed(lookup(folded[node]))
            continue
        if node in unflipped:
            env[node] = lookup(unflipped[node])
            continue
        result = map_node(node, lookup)
        env[node] = result
        if e.segment is not None and policy in save and node.target is not \
                operator.getitem:
            for r in (result if isinstance(result, (list, tuple)) else [result]):
                if isinstance(r, E.Value):
                    e.saved_names.add(r.name)

    fwd_outs = [forward_view(n) for n in user_outs]
    # (the gradient of a model input is not part of the step)
    grads = [(pname, backward_view(g)) for pname, g in grad_outs]
    if not grads:
        raise ExportError("the step has no parameter gradients")

    # An input the mapped ops do not read (the running statistics that only
    # batch norm's unmapped updates read) is no argument.
    used = set()
    for text, *_ in e.forward + e.backward:
        used.update(re.findall(r"%[A-Za-z0-9_]+", text))
    used.update(v.name for v in fwd_outs)
    used.update(g.name for _, g in grads)
    keep = [i for i, (v, p) in enumerate(zip(args, arg_primals))
            if p is None or v.name in used]
    args = [args[i] for i in keep]
    arg_names = [arg_names[i] for i in keep]
    kept_primals = [arg_primals[i] for i in keep if arg_primals[i] is not None]

    # A gradient that is a forward value or an argument still goes through
    # the backward region's yield.
    seed = ""
    if e.random_ops:
        seed = ", %seed: i64 {remat.rng_seed}"
        arg_names.append("seed")
    arg_text = ", ".join(f"{v.name}: {v.type}" for v in args) + seed
    result_types = [v.type for v in fwd_outs] + [g.type for _, g in grads]
    grad_types = ", ".join(g.type for _, g in grads)
    lines = [f"// {l}".rstrip() for l in description.strip().splitlines()]
    lines.append(f"func.func @{name}({arg_text})")
    lines.append(f"    -> ({', '.join(result_types)}) {{")
    lines.extend(e.render_line(l) for l in e.forward)
    count = len(grads)
    lines.append(f"  %grads{':' + str(count) if count > 1 else ''} = remat.backward {{")
    lines.extend("  " + e.render_line(l).replace("\n", "\n  ") for l in e.backward)
    lines.append(f"    remat.yield {', '.join(g.name for _, g in grads)} : {grad_types}")
    lines.append(f"  }} : {grad_types}")
    results = [v.name for v in fwd_outs] + (
        ["%grads"] if count == 1 else [f"%grads#{i}" for i in range(count)])
    lines.append(f"  return {', '.join(results)} : {', '.join(result_types)}")
    lines.append("}")
    out_names = [f"out{i}" for i in range(len(fwd_outs))] + [p for p, _ in grads]
    return "\n".join(lines) + "\n", arg_names, out_names, len(seg_ids), kept_primals
