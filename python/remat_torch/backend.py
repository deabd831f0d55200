"""torch.compile with remat's partition: `remat_torch.compile(model)` and the
registered backend `torch.compile(model, backend="remat")`.

AOTAutograd traces the joint graph, `remat_torch.partition` chooses what the
backward recomputes, and the kernels come from Inductor (backend="inductor",
through its `custom_partitioner_fn`, after its joint-graph passes) or run
as the ATen graphs themselves (backend="aot_eager", the core ATen
decompositions the exporter maps). DDP and FSDP see an ordinary compiled
module.
"""

import functools

from . import partitioner as _partition

BACKENDS = ("inductor", "aot_eager")


def _check(policy, budget, backend):
    _partition.mark_options(policy, budget)
    if backend not in BACKENDS and not callable(backend):
        raise ValueError(f"remat_torch: unknown backend {backend!r} (one of "
                         f"{', '.join(BACKENDS)}, or a compiler fn(gm, example_inputs))")


def _partitioner_class():
    import torch._inductor.custom_graph_pass as cgp

    class RematPartitioner(cgp.CustomPartitionerFn):
        """Inductor's custom_partitioner_fn: remat_torch.partition after
        Inductor's joint-graph passes."""

        def __init__(self, policy, budget, remat_opt, debug):
            self.policy, self.budget = policy, budget
            self.remat_opt, self.debug = remat_opt, debug

        def __call__(self, gm, joint_inputs, **kw):
            kw.pop("compiler", None)
            return _partition.partition(gm, joint_inputs, policy=self.policy,
                                        budget=self.budget, remat_opt=self.remat_opt,
                                        debug=self.debug, **kw)

        def __reduce__(self):
            # Inductor pickles its configuration into cache keys.
            return (_make_partitioner, (self.policy, self.budget, self.remat_opt, None))

        def uuid(self):
            # No key: compile_fn turns Inductor's FX graph cache off (a None
            # here does not).
            return None

    return RematPartitioner


def _make_partitioner(policy, budget, remat_opt, debug):
    global RematPartitioner
    if "RematPartitioner" not in globals():
        RematPartitioner = _partitioner_class()
    return RematPartitioner(policy, budget, remat_opt, debug)


def make_backend(policy="budget", budget=0.5, backend="inductor", remat_opt=None,
                 debug=None, objective="auto"):
    """A torch.compile backend fn(gm, example_inputs) that partitions with
    remat_torch.partition. objective "auto": "eager" for backend="aot_eager"
    (the plan is refined on PyTorch's op-by-op execution of it), None
    (remat's plan as it is) otherwise."""
    _check(policy, budget, backend)
    if objective not in ("auto", "eager", None):
        raise ValueError(f"remat_torch: unknown objective {objective!r} "
                         "('auto', 'eager' or None)")
    if objective == "eager" and backend == "inductor":
        raise ValueError("remat_torch: objective 'eager' models the graphs run op by "
                         "op; Inductor fuses them (use backend='aot_eager')")
    if objective == "auto":
        objective = "eager" if backend == "aot_eager" else None
    remat_opt = remat_opt or _partition.find_remat_opt()
    part = functools.partial(_partition.partition, policy=policy, budget=budget,
                             remat_opt=remat_opt, debug=debug, objective=objective)

    def compile_fn(gm, example_inputs):
        if backend == "inductor":
            from torch._inductor.compile_fx import compile_fx
            # Inductor's FX graph cache, and AOTAutograd's cache of whole
            # compiles with it, key a partitioner by its uuid, None for all
            # of them: a graph compiled before, under any plan, would be
            # handed back without partitioning it again.
            return compile_fx(gm, example_inputs, config_patches={
                "custom_partitioner_fn": _make_partitioner(policy, budget, remat_opt,
                                                           debug),
                "fx_graph_cache": False})
        import torch
        from torch._decomp import core_aten_decompositions
        from torch._dynamo.backends.common import aot_autograd
        from torch._dynamo.backends.debugging import boxed_nop
        from torch._functorch.aot_autograd import make_boxed_func

        def inner(g, ex):
            # PyTorch's own aot_eager compiler: its graphs take their inputs
            # as a list they clear, so a saved activation is freed at its
            # last use in the backward, not held until the backward returns.
            return boxed_nop(g, ex) if backend == "aot_eager" else \
                make_boxed_func(backend(g, ex))

        # aot_eager runs PyTorch's own ATen kernels, as min-cut's graphs do
        # (layer norm and its backward in one kernel each, not decomposed
        # into ops that each allocate); the partition lowers such ops
        # through their decompositions in remat's IR only. None is applied
        # to the graph: CPU flash attention's forward decomposed beside its
        # real backward kernel gives that kernel an output it reads wrongly
        # (ViT's gradients were off once the class token was not zero).
        decompositions = core_aten_decompositions() if backend != "aot_eager" else {}
        return aot_autograd(fw_compiler=inner, bw_compiler=inner, partition_fn=part,
                            decompositions=decompositions)(gm, example_inputs)

    return compile_fn


def compile(model, *, policy="budget", budget=0.5, backend="inductor", remat_opt=None,
            debug=None, objective="auto", **compile_kwargs):
    """torch.compile(model) with remat choosing what the backward recomputes.

    policy: budget, selective, sqrt, sequential, checkpoint (the model's
    torch.utils.checkpoint regions) or none; budget: for policy=budget, on
    the scale of PyTorch's activation_memory_budget (0: the smallest peak
    remat reaches, 1: recompute nothing). backend: "inductor", "aot_eager"
    or a compiler fn(gm, example_inputs) for the forward and backward
    graphs. debug: a list that receives what remat_torch.partition
    reports of each graph. objective: "auto" ("eager" with
    backend="aot_eager": the plan refined on the peak of PyTorch running
    the graphs op by op), "eager" or None (see remat_torch.partition).
    Other keyword arguments go to torch.compile (dynamic defaults to False:
    remat plans static shapes)."""
    import torch
    compile_kwargs.setdefault("dynamic", False)
    return torch.compile(model, backend=make_backend(policy, budget, backend, remat_opt,
                                                          debug, objective),
                         **compile_kwargs)


def remat_backend(gm, example_inputs, options=None):
    """The backend registered as "remat": torch.compile(model,
    backend="remat", options={"policy": ..., "budget": ..., "backend": ...})."""
    options = dict(options or {})
    unknown = set(options) - {"policy", "budget", "backend", "remat_opt", "debug",
                              "objective"}
    if unknown:
        raise ValueError(f"remat_torch: unknown option(s) {', '.join(sorted(unknown))} "
                         "(policy, budget, backend, remat_opt, objective)")
    return make_backend(**options)(gm, example_inputs)


def register():
    """Registers remat_backend as torch.compile's backend "remat" (once)."""
    from torch._dynamo.backends.registry import _BACKENDS, _COMPILER_FNS, register_backend
    # An installed package's entry point (python/pyproject.toml) registers
    # it when torch.compile first looks the name up.
    if "remat" not in _COMPILER_FNS and _BACKENDS.get("remat") is None:
        register_backend(remat_backend, name="remat")
