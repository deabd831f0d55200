"""Trains a model with remat_torch.compile and checks it against PyTorch.

    check_partition.py train MODULE:FACTORY POLICY [--budget B] [--steps N]
                       [--checkpoint] [--backend NAME] [--remat-opt PATH]
        dropout 0: 20 (N) SGD steps of remat_torch.compile(model) and of the
        uncompiled eager model from the same parameters; every step's loss
        and the final parameters and buffers within 1e-5 (max |a - b| /
        max(1, |b|)). --size KEY=N passes a size to the factory.
        Prints the worst difference and the number of forward values the
        backward recomputes (at least one: the plan is not "save all"), and
        whether each is computed late, after the backward's first use of a
        tangent unless that use needs it.
    check_partition.py amp MODULE:FACTORY POLICY [--budget B] [--steps N] ...
        a float16 autocast model (the factory's dtype=torch.float16) trained
        through torch.compile(model, backend="remat") with
        torch.amp.GradScaler, from a scale of 2^24 (the first steps' float16
        gradients overflow and are skipped), and eagerly with its own
        scaler: the same steps skipped (the same scale at every step), every
        step's loss and the final parameters within 2^-8 (four float16
        ulps) of eager's (max |a - b| / max(1, |b|)): the compiled graphs
        run Inductor's kernels (--backend), which round some float16
        intermediates eager rounds, or keep them in float32.
    check_partition.py dropout MODULE:FACTORY POLICY [--budget B] ...
        dropout on: the same steps under POLICY, under policy=none (nothing
        recomputed) and under AOTAutograd's default partition from the same
        generator state; losses and gradients bit-identical, every dropout
        mask saved, no dropout drawn again.
    check_partition.py unmapped MODULE:FACTORY
        a model with an op remat does not map: trains with the losses of
        eager, with exactly one warning, which is printed.
    check_partition.py broken MODULE:FACTORY --remat-opt FAILING
        remat-opt fails: one warning, the default partition, eager's losses.
    check_partition.py missing
        remat_torch.compile without remat-opt anywhere: the error.
    check_partition.py peak MODULE:FACTORY POLICY [--budget B] [--dropout P] ...
        op by op (aot_eager): the partition's eager_peak of its
        graphs against the peak PyTorch's allocator reaches in one step
        (profiler), within max(1 KiB, 0.1%); and the step's measured peak
        with the plan refined on it against remat's plan unrefined
        (objective None) at budget 0; above 0, the refined plan's
        eager_peak against the budget's target, and its recomputation's
        measured time against the lowest-peak plan's.

Several checks run in one process with '+' between them.
"""

import argparse
import copy
import gc
import importlib
import importlib.util
import os
import sys
import warnings

import torch

import remat_torch
from remat_torch.partitioner import RematOptNotFound


def load(spec, sizes, **kw):
    module, _, fn = spec.rpartition(":")
    if module.endswith(".py"):
        s = importlib.util.spec_from_file_location(os.path.basename(module)[:-3], module)
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    factory = getattr(mod, fn)
    import inspect
    params = inspect.signature(factory).parameters
    kw = {k: v for k, v in kw.items() if k in params}
    for item in sizes:
        key, _, value = item.partition("=")
        kw[key] = int(value)
    return factory(**kw)


def train(model, inputs, steps, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = model(*inputs)
        loss.backward()
        losses.append(loss.detach().clone())
        grads.append([p.grad.detach().clone() for p in model.parameters()])
        opt.step()
    return losses, grads


def rel(a, b):
    """max |a - b| / max(1, max |b|), equal values (infinities: the causal
    mask) differing by 0."""
    a, b = a.double(), b.double()
    diff = torch.where(a == b, 0.0, (a - b).abs())
    finite = b[b.isfinite()]
    scale = max(1.0, finite.abs().max().item() if finite.numel() else 1.0)
    return diff.max().item() / scale if diff.numel() else 0.0


def early_recomputation(debug):
    """The recomputed forward nodes that the backward graph runs before its
    first node reading a tangent without that node needing them: copies
    left in the joint graph's order would live through the backward's
    first ops instead of being computed just before they are read."""
    graph = debug["backward"].graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    first = min((u for n in graph.nodes if n.op == "placeholder" and
                 "tangents" in n.name for u in n.users), key=order.__getitem__,
                default=None)
    if first is None:
        return []
    needed, stack = set(), [first]
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(n.all_input_nodes)
    recomputed = set(debug["recomputed"])
    return [n.name for n in graph.nodes if n.name in recomputed and
            order[n] < order[first] and n not in needed]


def cmd_train(args):
    model, inputs = load(args.model, args.size, dropout=0.0,
                         checkpoint=args.checkpoint)
    eager = copy.deepcopy(model)
    debug = []
    compiled = remat_torch.compile(model, policy=args.policy, budget=args.budget,
                                   backend=args.backend, debug=debug)
    losses, _ = train(compiled, inputs, args.steps)
    ref, _ = train(eager, inputs, args.steps)
    worst = max(rel(a, b) for a, b in zip(losses, ref))
    # Parameters and buffers (batch norm's running statistics).
    worst_p = max(rel(p, q) for p, q in zip(model.state_dict().values(),
                                            eager.state_dict().values()))
    name = args.model.rpartition(":")[2]
    recomputed = sum(len(d["recomputed"]) for d in debug)
    early = [n for d in debug for n in early_recomputation(d)]
    ok = worst <= 1e-5 and worst_p <= 1e-5 and recomputed > 0 and len(debug) == 1 \
        and not early
    print(f"{name} {args.policy}: {args.steps} steps, losses "
          f"{'within' if worst <= 1e-5 else 'NOT within'} 1e-5 of eager (worst "
          f"{worst:.1e}), parameters {'within' if worst_p <= 1e-5 else 'NOT within'} "
          f"1e-5 (worst {worst_p:.1e}), {len(debug)} graph(s), "
          f"{'recomputes' if recomputed else 'recomputes NOTHING'}"
          f"{', late' if not early else ', EARLY: ' + ', '.join(early)}")
    decomposed = sorted({op for d in debug for op in d["decomposed"]})
    if decomposed:
        print(f"{name} {args.policy}: lowered through their decompositions: "
              f"{', '.join(decomposed)}")
    if not ok:
        for d in debug:
            print("saved:", d["saved"], "recomputed:", d["recomputed"])
        sys.exit(1)


def default_partition_backend():
    """AOTAutograd's default partition of the ATen graphs remat_torch's
    aot_eager backend partitions (not decomposed)."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.backends.debugging import boxed_nop
    from torch._functorch.partitioners import default_partition
    return aot_autograd(fw_compiler=boxed_nop, bw_compiler=boxed_nop,
                        partition_fn=default_partition)


def cmd_dropout(args):
    runs = []
    for policy in (args.policy, "none", None):
        model, inputs = load(args.model, args.size, dropout=0.1,
                             checkpoint=args.checkpoint)
        debug = []
        if policy is None:  # PyTorch's default partition of the same ATen graphs
            compiled = torch.compile(model, backend=default_partition_backend(),
                                     dynamic=False)
        else:
            compiled = remat_torch.compile(model, policy=policy, budget=args.budget,
                                           backend=args.backend, debug=debug)
        torch.manual_seed(1234)
        runs.append((train(compiled, inputs, args.steps), debug))

    def same(a, b):
        (losses, grads), (ref_losses, ref_grads) = a, b
        return all(torch.equal(x, y) for x, y in zip(losses, ref_losses)) and all(
            torch.equal(g, h) for gs, hs in zip(grads, ref_grads) for g, h in zip(gs, hs))

    (ours, debug), (none, _), (torch_run, _) = runs
    d = debug[0]
    masks = d["mlir"].count("%pin_native_dropout")  # dropouts enter as saved values
    recomputed_dropout = [n for n in d["recomputed"] if "native_dropout" in n]
    name = args.model.rpartition(":")[2]
    ok = same(ours, none) and same(ours, torch_run)
    print(f"{name} {args.policy} dropout: {args.steps} steps "
          f"{'bit-identical' if ok else 'DIFFER'} to policy=none and to the default "
          f"partition, {len(d['recomputed'])} values recomputed, "
          f"{len(recomputed_dropout)} dropouts recomputed")
    if not ok or recomputed_dropout or not d["recomputed"] or not masks:
        sys.exit(1)


def train_scaled(model, inputs, steps, lr=0.05):
    """SGD steps with a GradScaler: the losses and the scale of each step."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24)
    losses, scales = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = model(*inputs)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.detach().clone())
        scales.append(scaler.get_scale())
    return losses, scales


def cmd_amp(args):
    model, inputs = load(args.model, args.size, dropout=0.0, dtype=torch.float16)
    if getattr(model, "dtype", None) != torch.float16:
        sys.exit(f"{args.model} made no float16 autocast model (its `dtype`)")
    eager = copy.deepcopy(model)
    debug = []
    compiled = torch.compile(model, backend="remat", dynamic=False, options={
        "policy": args.policy, "budget": args.budget, "backend": args.backend,
        "debug": debug})
    losses, scales = train_scaled(compiled, inputs, args.steps)
    ref, ref_scales = train_scaled(eager, inputs, args.steps)
    tolerance = 2.0 ** -8
    worst = max(rel(a, b) for a, b in zip(losses, ref))
    worst_p = max(rel(p, q) for p, q in zip(model.state_dict().values(),
                                            eager.state_dict().values()))
    skipped = sum(1 for a, b in zip(scales, scales[1:]) if b < a)
    recomputed = sum(len(d["recomputed"]) for d in debug)
    ok = scales == ref_scales and skipped > 0 and worst <= tolerance and \
        worst_p <= tolerance and recomputed > 0
    name = args.model.rpartition(":")[2]
    print(f"{name} {args.policy} {args.backend} grad scaler: {args.steps} steps, "
          f"{skipped} skipped {'as eager' if scales == ref_scales else 'UNLIKE eager'} "
          f"(scale {scales[-1]:g}), losses {'within' if worst <= tolerance else 'NOT within'} "
          f"2^-8 of eager (worst {worst:.1e}), parameters "
          f"{'within' if worst_p <= tolerance else 'NOT within'} 2^-8 (worst {worst_p:.1e}), "
          f"{'recomputes' if recomputed else 'recomputes NOTHING'}")
    if not ok:
        print("scales:", scales, "eager:", ref_scales)
        sys.exit(1)


def train_against_eager(compiled, eager, inputs, steps):
    """Trains both models; prints remat_torch's warnings. Returns them and
    the worst relative gap of the compiled model's losses to eager's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses, _ = train(compiled, inputs, steps)
    ref, _ = train(eager, inputs, steps)
    ours = [w for w in caught if "remat_torch" in str(w.message)]
    for w in ours:
        print(f"warning: {w.message}")
    return ours, max(rel(a, b) for a, b in zip(losses, ref))


def cmd_unmapped(args):
    model, inputs = load(args.model, args.size)
    eager = copy.deepcopy(model)
    debug = []
    compiled = remat_torch.compile(model, policy="budget", budget=0.0,
                                   backend=args.backend, debug=debug)
    ours, worst = train_against_eager(compiled, eager, inputs, args.steps)
    print(f"{len(ours)} warning(s); losses {'within' if worst <= 1e-5 else 'NOT within'} "
          f"1e-5 of eager; saved: {', '.join(debug[0]['saved'])}")
    if worst > 1e-5:
        sys.exit(1)


def cmd_broken(args):
    """remat-opt fails (here: `false`): the graph falls back to AOTAutograd's
    default partition with one warning, and the model trains."""
    model, inputs = load(args.model, args.size, dropout=0.0)
    eager = copy.deepcopy(model)
    compiled = remat_torch.compile(model, policy="sqrt", backend=args.backend,
                                   remat_opt=args.remat_opt)
    ours, worst = train_against_eager(compiled, eager, inputs, args.steps)
    print(f"{len(ours)} warning(s); losses {'within' if worst <= 1e-5 else 'NOT within'} "
          f"1e-5 of eager")
    if worst > 1e-5:
        sys.exit(1)


def cmd_missing(args):
    os.environ["REMAT_OPT"] = "/nonexistent/remat-opt"
    os.environ["REMAT_BUILD_DIR"] = "/nonexistent/build"
    os.environ["PATH"] = "/nonexistent/bin"
    # A source tree's own build/ would be found: pretend there is none.
    import remat_torch.partitioner as P
    P.__file__ = "/nonexistent/python/remat_torch/partitioner.py"
    try:
        remat_torch.compile(torch.nn.Linear(2, 2))
    except RematOptNotFound as err:
        print(err)
        return
    sys.exit("no error")


def measured_peak(compiled, model, inputs):
    """The peak bytes PyTorch's CPU allocator holds during one step above
    its level before it (profiler memory events), after a warm-up step."""
    from remat_torch.partitioner import profiled_peak

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(*inputs).backward()
    step()
    # The warm-up's gradients and the garbage of earlier checks are freed
    # now, not during the step (their frees would lower its level).
    for p in model.parameters():
        p.grad = None
    gc.collect()
    return profiled_peak(step)


def cmd_peak(args):
    name = args.model.rpartition(":")[2]
    peaks = {}
    for objective in ("eager", None):
        model, inputs = load(args.model, args.size, dropout=args.dropout,
                             checkpoint=False)
        debug = []
        torch._dynamo.reset()
        compiled = remat_torch.compile(model, policy=args.policy, budget=args.budget,
                                       backend="aot_eager", debug=debug,
                                       objective=objective)
        peaks[objective] = measured_peak(compiled, model, inputs)
        if objective == "eager":
            predicted, refined = debug[0]["eager_peak"], debug[0]["refined"]
            info = debug[0]["refinement"]
    tolerance = max(1024, peaks["eager"] // 1000)
    close = len(debug) == 1 and abs(peaks["eager"] - predicted) <= tolerance
    if info["highest"] is None:
        # The lowest peak (budget 0, or a policy other than budget): at or
        # below remat's plan unrefined, measured.
        lower = peaks["eager"] <= peaks[None]
        verdict = (f"refined plan {peaks['eager']} bytes {'<=' if lower else '>'} remat's "
                   f"plan {peaks[None]}")
    else:
        # A budget above 0: at or below the budget's target, and no slower
        # (measured kernels) than the lowest-peak plan.
        lower = predicted <= info["target"] and info["seconds"] <= info["lowest_seconds"]
        peer = "none" if info["peer"] is None else f"{info['peer']}"
        verdict = (f"refined plan {predicted} bytes {'<=' if lower else '>'} its target "
                   f"{info['target']:.0f} (lowest {info['lowest']}, nothing recomputed "
                   f"{info['highest']}, PyTorch's partition {peer}), recomputing "
                   f"{'no longer' if lower else 'LONGER'} than the lowest plan")
    print(f"{name} {args.policy} {args.budget:g}: eager peak {predicted} bytes, "
          f"measured {peaks['eager']} ({'within' if close else 'NOT within'} "
          f"max(1 KiB, 0.1%)); {verdict}, {len(refined)} value(s) moved by the "
          f"refinement")
    if not (close and lower):
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["train", "amp", "dropout", "unmapped", "broken",
                                        "missing", "peak"])
    ap.add_argument("model", nargs="?")
    ap.add_argument("policy", nargs="?", default="budget")
    ap.add_argument("--budget", type=float, default=0.5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--dropout", type=float, default=0.0, help="peak: the model's dropout")
    ap.add_argument("--backend", default="aot_eager")
    ap.add_argument("--size", action="append", default=[],
                    help="KEY=N: a size argument of the factory (batch=8)")
    ap.add_argument("--remat-opt", help="the remat-opt under test (REMAT_OPT)")
    # One process runs every check of a test file ('+' between them): torch
    # imports once. Tests share the machine's cores: one thread each.
    torch.set_num_threads(1)
    argv, checks = sys.argv[1:], [[]]
    for word in argv:
        if word == "+":
            checks.append([])
        else:
            checks[-1].append(word)
    for check in checks:
        args = ap.parse_intermixed_args(check)
        if args.remat_opt:
            os.environ["REMAT_OPT"] = args.remat_opt
        torch.manual_seed(0)
        {"train": cmd_train, "amp": cmd_amp, "dropout": cmd_dropout, "unmapped": cmd_unmapped,
         "broken": cmd_broken, "missing": cmd_missing, "peak": cmd_peak}[args.command](args)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
