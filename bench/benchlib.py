"""What bench/cpu_step and bench/peers share: the machine's sgemm rate as
remat-run achieves it, the roofline a matmul- or convolution-heavy step can
approach."""
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
