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


# The static peak of the unmarked run, for the model's error below.
high = report(base)["totals"]["static_peak_bytes"]

slack = None
for fraction in (0.25, 0.5, 0.75):
    out = os.path.join(workdir, f"{name}-budget{int(fraction * 100)}.mlir")
    subprocess.run([remat_opt, base, f"-remat-mark=policy=budget budget-between={fraction}",
                    "-remat-checkpoint", "-remat-verify", "-cse", "-canonicalize",
                    "-o", out], check=True, capture_output=True)
    budget = report(out)["plan"]["budget"]
    run = subprocess.run([remat_run, base, "--random-inputs", "11", "--stats",
                          "--compare", out], capture_output=True, text=True)
    lines = run.stdout.splitlines()
    stats = [json.loads(l) for l in lines if l.startswith("{")]
    outputs = [l for l in lines if l.startswith("out")]
    identical = run.returncode == 0 and all(l.endswith("bit-identical")
                                            for l in outputs)
    if slack is None:
        # The model's error on the unmarked run: the measured peak of the
        # base program minus its static peak.
        slack = max(0, stats[0]["peak_bytes"] - high)
    measured = stats[1]["peak_bytes"]
    ok = measured <= budget + slack
    print(f"{name} budget {int(fraction * 100)}%: B={budget} measured={measured} "
          f"slack={slack} {'within' if ok else 'OVER'}, {len(outputs)} outputs "
          f"{'bit-identical' if identical else 'DIFFER'}")
    if not identical:
        sys.exit(f"{name}: outputs differ\n{run.stdout}{run.stderr}")
    if not ok:
        sys.exit(f"{name}: measured peak {measured} over budget {budget} + {slack}")
