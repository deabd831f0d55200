"""Runs one example with and without rematerialization and checks the
promises of -remat-checkpoint on real code: every output (loss, gradients)
bit-identical, dropout included, in early-stop and reentrant mode, the
allocator's measured peak below the run without rematerialization, and
-remat-report's static peak of both runs equal to the measured one and its
arena within 1.05 times the bytes live at once.

Usage: check_example.py REMAT_OPT REMAT_RUN EXAMPLE.mlir WORKDIR
"""
import json
import os
import subprocess
import sys

remat_opt, remat_run, example, workdir = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
name = os.path.splitext(os.path.basename(example))[0]


def opt(out, *passes):
    path = os.path.join(workdir, f"{name}-{out}.mlir")
    subprocess.run([remat_opt, example, "-remat-thread-rng", *passes,
                    "-o", path], check=True)
    return path


base = opt("base")
variants = {
    "early-stop": opt("remat", "-remat-checkpoint", "-remat-verify", "-cse",
                      "-canonicalize"),
    "reentrant": opt("reentrant", "-remat-checkpoint=early-stop=false",
                     "-remat-verify", "-cse", "-canonicalize"),
}
for mode, path in variants.items():
    run = subprocess.run([remat_run, base, "--random-inputs", "11", "--stats",
                          "--compare", path], capture_output=True, text=True)
    sys.stdout.write(run.stderr)
    lines = run.stdout.splitlines()
    stats = [json.loads(l) for l in lines if l.startswith("{")]
    outputs = [l for l in lines if l.startswith("out")]
    identical = all(l.endswith("bit-identical") for l in outputs)
    saved = 1 - stats[1]["peak_bytes"] / stats[0]["peak_bytes"]
    print(f"{name} {mode}: {len(outputs)} outputs "
          f"{'bit-identical' if identical else 'DIFFER'}, peak "
          f"{stats[0]['peak_bytes']} -> {stats[1]['peak_bytes']} bytes "
          f"({saved:.0%} less)")
    if run.returncode != 0 or not identical:
        sys.exit(f"{name} {mode}: outputs differ\n{run.stdout}")
    # The static peak is the allocator's, to the byte (the memory plan).
    for step, measured in ((base, stats[0]), (path, stats[1])):
        report = json.loads(subprocess.run(
            [remat_opt, step, "-remat-report=format=json", "-o", os.devnull],
            check=True, capture_output=True, text=True).stdout)
        totals = report["functions"][0]["totals"]
        static = totals["static_peak_bytes"]
        if static != measured["peak_bytes"]:
            sys.exit(f"{name} {mode}: static peak {static} bytes, measured "
                     f"{measured['peak_bytes']} bytes")
        # The arena within 5% of the most bytes live at once (issue 17).
        if totals["arena_bytes"] > 1.05 * totals["arena_max_live_bytes"]:
            sys.exit(f"{name} {mode}: arena {totals['arena_bytes']} bytes for "
                     f"{totals['arena_max_live_bytes']} live at once")
    if stats[1]["peak_bytes"] >= stats[0]["peak_bytes"]:
        sys.exit(f"{name} {mode}: rematerialization did not lower the peak")
