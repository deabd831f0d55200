"""Differential testing of remat's passes on random training steps.

For each seed, remat-gen writes a random step (with segment marks); for each
policy (the marks as written, and -remat-mark's sequential, sqrt, selective
and budget policies) the step goes through

    remat-opt -remat-thread-rng [mark] -remat-checkpoint -remat-verify -cse -canonicalize

and `remat-run --compare` runs it against the unmarked step (the same step
after -remat-thread-rng only) on the same random inputs: every output must
be bit-identical, and -remat-report's static peak of both steps must be the
allocator's measured peak to the byte (at least that peak where the report
leaves buffers to the allocator, those allocated in loop bodies, which it
counts as live at once). With --loops, remat-gen also generates scans
(scf.for loops over stacked layers, reverse loops in the backward), and a
sixth policy, loops, runs -remat-checkpoint-loops (every sqrt(n)-th carry
saved, the blocks recomputed in the backward) before the pipeline. A tool that crashes, rejects a
generated step, a static peak that is not the measured one, or a run
whose outputs differ is a failure: the seed, the policy, the commands and a
minimized reproducer (the shortest prefix of the seed's forward nodes,
`remat-gen --max-nodes K`, that still fails) are printed.

Usage: difftest.py --bin DIR [--seeds A:B] [--sizes tiny,small] [--jobs 2]
                   [--workdir DIR] [--max-failures N] [--loops]
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

POLICIES = ["annotations", "sequential", "sqrt", "selective", "budget"]
LOOP_POLICIES = POLICIES + ["loops"]


class Tools:
    def __init__(self, bin_dir):
        self.gen = os.path.join(bin_dir, "remat-gen")
        self.opt = os.path.join(bin_dir, "remat-opt")
        self.run = os.path.join(bin_dir, "remat-run")


def run(cmd, timeout=300):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", f"timed out after {timeout} s"


def crashed(rc):
    return rc == "timeout" or rc < 0 or rc >= 128


def mark_option(policy, seed):
    """The -remat-mark option of a policy, or None for the annotations."""
    if policy == "annotations":
        return None
    if policy == "sequential":
        return f"-remat-mark=policy=sequential segments={1 + seed % 4}"
    if policy == "sqrt":
        return "-remat-mark=policy=sqrt"
    if policy == "loops":
        return "-remat-checkpoint-loops"
    if policy == "selective":
        return "-remat-mark=policy=selective save-ops=linalg.matmul"
    # budget: halfway between the smallest reachable and the unmarked peak.
    return "-remat-mark=policy=budget budget-between=0.5"


def check(tools, seed, size, policy, work, max_nodes=None, loops=False):
    """Runs one case; returns None or (kind, message, commands)."""
    tag = f"s{seed}-{size}-{policy}" + (f"-k{max_nodes}" if max_nodes else "")
    step = os.path.join(work, f"{tag}.mlir")
    base = os.path.join(work, f"{tag}-base.mlir")
    out = os.path.join(work, f"{tag}-out.mlir")
    gen = [tools.gen, "--seed", str(seed), "--size", size, "-o", step]
    if max_nodes:
        gen[1:1] = ["--max-nodes", str(max_nodes)]
    if loops:
        gen[1:1] = ["--loops"]
    cmds = [gen]
    rc, _, err = run(gen)
    if rc != 0:
        return ("crash" if crashed(rc) else "generator", err, cmds)
    thread = [tools.opt, step, "-remat-thread-rng", "-o", base]
    cmds.append(thread)
    rc, _, err = run(thread)
    if rc != 0:
        return ("crash" if crashed(rc) else "rejected", err, cmds)
    mark = mark_option(policy, seed)
    pipeline = [tools.opt, base] + ([mark] if mark else []) + [
        "-remat-checkpoint", "-remat-verify", "-cse", "-canonicalize", "-o", out]
    cmds.append(pipeline)
    rc, _, err = run(pipeline)
    if rc != 0:
        return ("crash" if crashed(rc) else "rejected", err, cmds)
    compare = [tools.run, base, "--random-inputs", str(seed % 1000 + 1),
               "--stats", "--compare", out]
    cmds.append(compare)
    rc, stdout, err = run(compare)
    if rc != 0:
        return ("crash" if crashed(rc) else "mismatch", stdout + err, cmds)
    outputs = [l for l in stdout.splitlines() if l.startswith("out")]
    if not outputs or not all(l.endswith("bit-identical") for l in outputs):
        return ("mismatch", stdout, cmds)
    # The static peak -remat-report predicts is the allocator's, to the byte.
    measured = [json.loads(l)["peak_bytes"] for l in stdout.splitlines()
                if l.startswith("{")]
    for path, peak in zip((base, out), measured):
        report = [tools.opt, path, "-remat-report=format=json", "-o",
                  os.devnull]
        cmds.append(report)
        rc, stdout, err = run(report)
        if rc != 0:
            return ("crash" if crashed(rc) else "rejected", err, cmds)
        static = json.loads(stdout)["functions"][0]["totals"]
        exact = (static["unplanned_buffers"] == 0
                 and static["carried_bytes"] == 0)
        if (static["static_peak_bytes"] != peak if exact
                else static["static_peak_bytes"] < peak):
            return ("peak", f"{path}: static peak {static['static_peak_bytes']}"
                    f" bytes, measured {peak} bytes", cmds)
    for path in (step, base, out):
        os.remove(path)
    return None


def minimize(tools, seed, size, policy, work, kind, loops):
    """The smallest --max-nodes prefix that fails the same way, or None."""
    for k in range(1, 65):
        failure = check(tools, seed, size, policy, work, max_nodes=k,
                        loops=loops)
        if failure and failure[0] == kind:
            return k, failure
        if failure is None:
            continue
    return None


def quote(cmd):
    return " ".join(a if re.fullmatch(r"[\w./=:,+-]+", a) else repr(a)
                    for a in cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="directory of remat-gen, "
                    "remat-opt and remat-run")
    ap.add_argument("--seeds", default="0:60", help="A:B, seeds A..B-1")
    ap.add_argument("--sizes", default="tiny", help="comma-separated, cycled "
                    "over the seeds")
    ap.add_argument("--policies", help="comma-separated (default: all of "
                    "them, loops only with --loops)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--workdir", default="difftest-work")
    ap.add_argument("--max-failures", type=int, default=5,
                    help="stop after this many failures")
    ap.add_argument("--loops", action="store_true",
                    help="remat-gen --loops: steps with scans")
    args = ap.parse_args()

    tools = Tools(args.bin)
    lo, hi = (int(x) for x in args.seeds.split(":"))
    sizes = args.sizes.split(",")
    policies = (args.policies.split(",") if args.policies else
                LOOP_POLICIES if args.loops else POLICIES)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    cases = [(seed, sizes[seed % len(sizes)], p)
             for seed in range(lo, hi) for p in policies]

    start = time.time()
    failures = []
    done = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(check, tools, s, z, p, args.workdir,
                               loops=args.loops): (s, z, p)
                   for s, z, p in cases}
        try:
            for fut in concurrent.futures.as_completed(futures):
                done += 1
                if done % 1000 == 0:
                    print(f"difftest: {done}/{len(cases)} cases, "
                          f"{len(failures)} failures, "
                          f"{time.time() - start:.0f} s", file=sys.stderr,
                          flush=True)
                failure = fut.result()
                if failure:
                    failures.append((futures[fut], failure))
                    if len(failures) >= args.max_failures:
                        break
        except KeyboardInterrupt:
            print("difftest: interrupted; the summary counts the cases done",
                  file=sys.stderr)
        for f in futures:
            f.cancel()
    elapsed = time.time() - start

    counts = {}
    for (seed, size, policy), (kind, message, cmds) in sorted(failures):
        counts[kind] = counts.get(kind, 0) + 1
        print(f"FAIL seed={seed} size={size} policy={policy}: {kind}")
        for cmd in cmds:
            print("  $ " + quote(cmd))
        print("  " + "\n  ".join(message.strip().splitlines()[-20:]))
        small = minimize(tools, seed, size, policy, args.workdir, kind,
                         args.loops)
        if small:
            k, (_, msg, small_cmds) = small
            print(f"  minimized: remat-gen --seed {seed} --size {size} "
                  f"--max-nodes {k}{' --loops' if args.loops else ''} fails "
                  "the same way:")
            for cmd in small_cmds:
                print("  $ " + quote(cmd))
            with open(small_cmds[0][-1]) as f:
                print("  " + "\n  ".join(f.read().splitlines()))
    crashes = counts.get("crash", 0)
    mismatches = counts.get("mismatch", 0)
    print(f"difftest: {done} cases ({hi - lo} seeds x {len(policies)} policies, "
          f"sizes {','.join(sizes)}{', loops' if args.loops else ''}), "
          f"{len(failures)} failures "
          f"({mismatches} mismatches, {crashes} crashes"
          + "".join(f", {n} {k}" for k, n in sorted(counts.items())
                    if k not in ("crash", "mismatch"))
          + f"), {elapsed:.1f} s")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
