"""remat-torch-export: writes a PyTorch model's training step as remat IR.

    remat-torch-export MODULE.py:FACTORY -o DIR [--dropout P] [--no-checkpoint]
                       [--seed N] [--float64] [--reference [--no-reference64]]

FACTORY() returns (model, inputs) with model(*inputs) the scalar loss (see
remat_torch/zoo.py; `remat_torch.zoo:mlp` names a zoo model). Writes
DIR/step.mlir, the inputs DIR/in-NN-NAME.npy in argument order (parameters,
buffers, model inputs, the loss tangent 1.0, the dropout seed), and
DIR/manifest.json: the remat-run --inputs list, the output names (loss, then
one gradient per parameter) and the number of checkpoint segments. With
--reference, also DIR/ref-NN-NAME.npy (and ref64-NN-NAME.npy, the same in
float64): PyTorch eager's loss and gradients on
the same inputs (with dropout they differ from remat's, whose generator is
Philox), and in the manifest's noise64 how far float32 rounding moves each
output from float64 (its largest absolute change over Monte Carlo runs). An op the exporter cannot map is an error naming the ATen op and the
model's source line; the exit status is then 1.

With --float64 the step itself is float64: the model's floating-point
parameters, buffers and inputs are converted (model.double()) before
tracing, so every float32 op of the step is float64 and the tangent is a
float64 1.0 (a float32 one for a loss the model itself computes in float32,
as Mixtral's router casts its logits); --reference then writes PyTorch eager's float64 loss and
gradients as ref-NN-NAME.npy (the float64 step's own reference: no
ref64 files, no noise64), and the manifest says "float64": true.
"""

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys


def load_factory(spec):
    module, _, fn = spec.rpartition(":")
    if not module or not fn:
        raise SystemExit(f"remat-torch-export: expected MODULE.py:FACTORY, got {spec!r}")
    if module.endswith(".py") or os.sep in module:
        name = os.path.splitext(os.path.basename(module))[0]
        s = importlib.util.spec_from_file_location(name, module)
        if s is None:
            raise SystemExit(f"remat-torch-export: cannot load {module}")
        mod = importlib.util.module_from_spec(s)
        sys.modules[name] = mod
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(module)
    if not hasattr(mod, fn):
        raise SystemExit(f"remat-torch-export: {module} has no {fn}")
    return getattr(mod, fn)


def call_factory(factory, dropout=None, checkpoint=None):
    kw = {}
    params = inspect.signature(factory).parameters
    if dropout is not None:
        if "dropout" not in params:
            raise SystemExit("remat-torch-export: the factory takes no `dropout`")
        kw["dropout"] = dropout
    if checkpoint is not None:
        if "checkpoint" not in params:
            raise SystemExit("remat-torch-export: the factory takes no `checkpoint`")
        kw["checkpoint"] = checkpoint
    return factory(**kw)


def _reference64(model, inputs, out_names, samples=4):
    """PyTorch eager's loss and gradients in float64, on a copy of the
    model: what the float32 references approximate. Where a gradient is ill
    conditioned (a max-pooling window whose maximum is a near tie, a batch
    norm over two values) float32 eager is itself far from it, and a checker
    can tell rounding from a wrong program. With them, per output, how far
    float32 rounding alone moves it: the largest distance from float64 over
    `samples` float64 runs in which every op's result is multiplied by
    1 + d, d uniform in [-2^-24, 2^-24] (Monte Carlo arithmetic at float32's
    unit roundoff). None when the model cannot be copied or run in
    float64, or not under the perturbing dispatch mode (torch's scan traces
    its combine function under it and fails)."""
    import copy
    import numpy as np
    import torch
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    unit_roundoff = 2.0 ** -24

    class Round(TorchDispatchMode):
        """Perturbs each float64 result of an op that returns new tensors."""

        def __init__(self, generator):
            super().__init__()
            self.generator = generator

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            schema = func._schema
            if schema.is_mutable or any(r.alias_info for r in schema.returns):
                return out

            def perturb(t):
                # A fake tensor is the tracing of a scan's combine function,
                # not a value: its ops are perturbed when the scan runs them.
                if not isinstance(t, torch.Tensor) or t.dtype != torch.float64 \
                        or t.numel() == 0 or isinstance(t, FakeTensor):
                    return t
                d = torch.rand(t.shape, dtype=t.dtype, generator=self.generator)
                return t * (1 + unit_roundoff * (2 * d - 1))
            return tree_map(perturb, out)

    def run(model64, inputs64, generator=None):
        params = dict(model64.named_parameters())
        for p in params.values():
            p.grad = None
        if generator is None:
            loss = model64(*inputs64)
            loss.backward()
        else:
            with Round(generator):
                loss = model64(*inputs64)
                loss.backward()
        return [loss.detach().numpy()] + [params[n].grad.numpy() for n in out_names[1:]]

    try:
        model64, inputs64 = to_float64(copy.deepcopy(model), inputs)
        refs = run(model64, inputs64)
        noise = [0.0] * len(refs)
        for sample in range(samples):
            rounded = run(model64, inputs64, torch.Generator().manual_seed(sample))
            noise = [max(n, float(np.max(np.abs(r - ref)))) if ref.size else 0.0
                     for n, r, ref in zip(noise, rounded, refs)]
        return refs, noise
    except (RuntimeError, TypeError, AttributeError, AssertionError, copy.Error) as err:
        print(f"remat-torch-export: no float64 reference: {err}", file=sys.stderr)
        return None


def to_float64(model, inputs):
    """The model and inputs of a float64 step: floating-point parameters,
    buffers and inputs converted (integer and boolean ones kept), as
    _reference64 runs PyTorch eager in float64. torch's default dtype stays
    float32, as there: a tensor the forward creates without a dtype is
    float32 in both, and so is an integer tensor's true division."""
    model = model.double()
    return model, [t.double() if t.is_floating_point() else t for t in inputs]


def export(model, inputs, out_dir, seed=1234, reference=False, description="",
           reference64=True, float64=False):
    import numpy as np
    import torch
    from .export import to_mlir, trace_joint

    if float64:
        model, inputs = to_float64(model, inputs)
        reference64 = False
    model.train()
    joint, nfwd, names, tensors, param_names, user_outputs = trace_joint(model, inputs)
    text, arg_names, out_names, segments, kept = to_mlir(
        joint, nfwd, names, param_names, description=description,
        user_outputs=user_outputs)
    tensors = [tensors[i] for i in kept]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "step.mlir"), "w") as f:
        f.write(text)
    arrays = [t.detach().numpy() for t in tensors]  # float32 or 64, int64, bool
    # Each tangent is a 1 of its output's type: float64 in a float64 step,
    # unless the model computes that output in float32 itself.
    arrays += [np.ones(tuple(n.meta["val"].shape),
                       np.float64 if n.meta["val"].dtype == torch.float64 else np.float32)
               for n in joint.graph.nodes
               if n.op == "placeholder" and n.name.startswith("tangents")]
    if "seed" in arg_names:
        arrays.append(np.array(seed, np.int64))
    paths = []
    for i, (n, a) in enumerate(zip(arg_names, arrays)):
        p = os.path.join(out_dir, f"in-{i:02d}-{n}.npy")
        np.save(p, a)
        paths.append(p)
    manifest = {"inputs": paths, "arguments": arg_names, "outputs": out_names,
                "segments": segments, "float64": float64}
    if reference:
        params = dict(model.named_parameters())
        for p in params.values():
            p.grad = None
        loss = model(*inputs)
        loss.backward()
        refs = [loss.detach().numpy()] + [params[n].grad.numpy() for n in out_names[1:]]
        manifest["reference"] = []
        for i, (n, r) in enumerate(zip(out_names, refs)):
            p = os.path.join(out_dir, f"ref-{i:02d}-{n}.npy")
            np.save(p, r.astype(np.float64 if float64 else np.float32))
            manifest["reference"].append(p)
        if reference64:
            write_reference64(model, inputs, out_dir, manifest)
    _write_manifest(out_dir, manifest)
    return manifest


def _write_manifest(out_dir, manifest):
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def write_reference64(model, inputs, out_dir, manifest):
    """Adds the float64 reference (_reference64) of an export of `model` on
    `inputs` to its manifest: ref64-NN-NAME.npy, the manifest's reference64
    and noise64. Returns False, the manifest unchanged, when PyTorch cannot
    run the model in float64."""
    import numpy as np
    reference64 = _reference64(model, inputs, manifest["outputs"])
    if reference64 is None:
        return False
    refs64, manifest["noise64"] = reference64
    manifest["reference64"] = []
    for i, (n, r) in enumerate(zip(manifest["outputs"], refs64)):
        p = os.path.join(out_dir, f"ref64-{i:02d}-{n}.npy")
        np.save(p, r)
        manifest["reference64"].append(p)
    return True


def _make_parser():
    parser = argparse.ArgumentParser(prog="remat-torch-export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="MODULE.py:FACTORY or package.module:FACTORY")
    parser.add_argument("-o", "--output-dir", required=True)
    parser.add_argument("--dropout", type=float, help="passed to the factory")
    parser.add_argument("--no-checkpoint", action="store_true",
                        help="factory(checkpoint=False): no torch.utils.checkpoint")
    parser.add_argument("--seed", type=int, default=1234, help="the step's dropout seed")
    parser.add_argument("--float64", action="store_true",
                        help="export the step in float64 (model.double(), float "
                             "inputs in float64): the comparison with PyTorch's "
                             "float64 eager that float32 rounding cannot decide")
    parser.add_argument("--reference", action="store_true",
                        help="also write PyTorch eager's loss and gradients")
    parser.add_argument("--no-reference64", action="store_true",
                        help="with --reference, skip the float64 reference and its "
                             "Monte Carlo noise (a mixed-precision step's checker "
                             "compares with PyTorch's float32 step instead)")
    return parser


def main(argv=None):
    args = _make_parser().parse_args(argv)
    status, _ = _export_args(args)
    return status


def _export_args(args):
    """Runs the export `args` ask for: (exit status, (model, inputs, the
    manifest) on success)."""
    from .export import ExportError
    factory = load_factory(args.model)
    model, inputs = call_factory(factory, args.dropout,
                                 False if args.no_checkpoint else None)
    try:
        m = export(model, inputs, args.output_dir, args.seed, args.reference,
                   description=f"{args.model}: exported by remat-torch-export "
                               "(AOTAutograd joint graph, core ATen ops)",
                   reference64=not args.no_reference64, float64=args.float64)
    except ExportError as err:
        print(f"remat-torch-export: error: {err}", file=sys.stderr)
        return 1, None
    print(f"remat-torch-export: wrote {args.output_dir}/step.mlir: "
          f"{len(m['arguments'])} arguments, {len(m['outputs'])} outputs, "
          f"{m['segments']} checkpoint segments", file=sys.stderr)
    return 0, (model, inputs, m)


def export_manifest(spec, out_dir, *extra, deferred_reference64=False):
    """`remat-torch-export SPEC -o OUT_DIR EXTRA...` in this process (a
    checker's exports then share one import of PyTorch, 3-4 s each in a
    process of its own): the manifest it wrote, or RuntimeError with the
    exporter's messages.

    With deferred_reference64 (and --reference), the float64 reference is
    not computed with the export (five float64 runs of the
    model, as long as the rest of the export on a convolutional network):
    (the manifest, a function that adds it to the manifest and returns
    whether it could), for a checker that needs it only where float32 is
    farther from PyTorch than its tolerance; None instead of the function
    for a --float64 export, whose reference is its own."""
    import contextlib
    import io
    log = io.StringIO()
    args = _make_parser().parse_args(
        [spec, "-o", out_dir, *extra] + (["--no-reference64"] if deferred_reference64 else []))
    with contextlib.redirect_stderr(log):
        status, exported = _export_args(args)
    if status:
        raise RuntimeError(f"remat-torch-export {spec} failed\n{log.getvalue()}")
    model, inputs, manifest = exported
    if not deferred_reference64:
        return manifest
    if args.float64:
        return manifest, None

    def reference64():
        if "reference64" in manifest:
            return True
        with contextlib.redirect_stderr(log):
            added = write_reference64(model, inputs, out_dir, manifest)
        if added:
            _write_manifest(out_dir, manifest)
        return added
    return manifest, reference64


if __name__ == "__main__":
    sys.exit(main())
