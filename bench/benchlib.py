"""What the benches share: the machine's sgemm rate as remat-run achieves
it, the roofline a matmul- or convolution-heavy step can approach
(bench/cpu_step, bench/peers); and PyTorch's side of a comparison, its
gradients and its own planner (bench/peers, bench/pareto --real), which
import torch only when called."""
import json
import os
import subprocess

SGEMM_SIZE = 1024


def sgemm_rate(run, work, repeat, threads):
    """GFLOP/s of one SGEMM_SIZE^3 f32 matmul step run by remat-run (the
    runtime's cblas_sgemm) on `threads` threads, the median of `repeat`."""
    n = SGEMM_SIZE
    t = f"tensor<{n}x{n}xf32>"
    path = os.path.join(work, "sgemm.mlir")
    with open(path, "w") as f:
        f.write(f"""func.func @step(%a: {t}, %b: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %z = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %c = linalg.matmul ins(%a, %b : {t}, {t}) outs(%z : {t}) -> {t}
  return %c : {t}
}}
""")
    out = subprocess.run([run, path, "--random-inputs", "1", "--stats", "--repeat",
                          str(repeat), "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    ms = json.loads(out.splitlines()[-1])["wall_ms"]
    return 2 * n ** 3 / (ms * 1e6)


def grads(model, inputs, fn=None):
    """The parameters' gradients after one step from a fixed seed (the same
    dropout masks wherever the forward draws them as the reference does)."""
    import torch
    params = list(model.parameters())
    for p in params:
        p.grad = None
    torch.manual_seed(1234)
    (model if fn is None else fn)(*inputs).backward()
    out = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    return out


def grad_error(got, ref):
    """The largest difference from the reference gradients, relative to the
    largest reference entry of each parameter."""
    return max(((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()
               for a, b in zip(got, ref))


def planner(model, budget, backend):
    """`model` under torch.compile with AOTAutograd's min-cut partitioner at
    activation_memory_budget `budget`: through Inductor (backend
    "inductor"), or graphs run op by op ("aot_eager": PyTorch's boxed
    compiler, a saved tensor freed at its last use in the backward)."""
    import torch
    import torch._functorch.config as fconfig
    from functorch.compile import min_cut_rematerialization_partition
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.backends.debugging import boxed_nop
    torch._dynamo.reset()
    if backend == "aot_eager":
        backend = aot_autograd(fw_compiler=boxed_nop, bw_compiler=boxed_nop,
                               partition_fn=min_cut_rematerialization_partition)
    fconfig.activation_memory_budget = budget
    return torch.compile(model, backend=backend)
