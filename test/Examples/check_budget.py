"""Runs one example under -remat-mark's budget policy at three budgets, 25%,
50% and 75% of the way from the smallest peak the planner reaches to the
unmarked peak, and checks on the real code: outputs bit-identical to the
unmarked run, and the allocator's measured peak <= B + slack, where the
slack is the static model's error on the unmarked run of the same example
(measured peak minus -remat-report's static peak; docs/Policies.md).

Usage: check_budget.py REMAT_OPT REMAT_RUN EXAMPLE.mlir WORKDIR
"""
import json
import os
import subprocess
import sys

remat_opt, remat_run, example, workdir = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
name = os.path.splitext(os.path.basename(example))[0]

base = os.path.join(workdir, f"{name}-base.mlir")
subprocess.run([remat_opt, example, "-remat-thread-rng", "-o", base],
               check=True)


def report(path):
    """-remat-report's JSON of the one function in `path`."""
    out = subprocess.run([remat_opt, path, "-remat-report=format=json", "-o", os.devnull],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["functions"][0]


def run(step, tag):
    """Runs `step` on the example's random inputs; returns its --stats line
    and the bytes of its outputs."""
    outdir = os.path.join(workdir, f"{name}-{tag}-out")
    r = subprocess.run([remat_run, step, "--random-inputs", "11", "--stats",
                        "--outputs", outdir], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{name}: remat-run {step} failed\n{r.stdout}{r.stderr}")
    stats = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][0])
    outputs = []
    for i in range(len(os.listdir(outdir))):
        with open(os.path.join(outdir, f"out{i}.npy"), "rb") as f:
            outputs.append(f.read())
    return stats, outputs


# The unmarked run, once: its outputs are the reference, and the model's
# error on it (measured peak minus -remat-report's static peak) the slack.
high = report(base)["totals"]["static_peak_bytes"]
base_stats, base_outputs = run(base, "base")
slack = max(0, base_stats["peak_bytes"] - high)

for fraction in (0.25, 0.5, 0.75):
    tag = f"budget{int(fraction * 100)}"
    out = os.path.join(workdir, f"{name}-{tag}.mlir")
    subprocess.run([remat_opt, base, f"-remat-mark=policy=budget budget-between={fraction}",
                    "-remat-checkpoint", "-remat-verify", "-cse", "-canonicalize",
                    "-o", out], check=True, capture_output=True)
    budget = report(out)["plan"]["budget"]
    stats, outputs = run(out, tag)
    # .npy files byte for byte: header (dtype, shape) and data.
    identical = outputs == base_outputs
    measured = stats["peak_bytes"]
    ok = measured <= budget + slack
    print(f"{name} budget {int(fraction * 100)}%: B={budget} measured={measured} "
          f"slack={slack} {'within' if ok else 'OVER'}, {len(outputs)} outputs "
          f"{'bit-identical' if identical else 'DIFFER'}")
    if not identical:
        sys.exit(f"{name}: outputs differ from the unmarked run")
    if not ok:
        sys.exit(f"{name}: measured peak {measured} over budget {budget} + {slack}")
