"""bench/compile_time --real: remat's compile time at real size next to
torch.compile's (Inductor), per phase. See bench/compile_time's docstring for
what each column measures; this module does the work.

Run by bench/compile_time (the system python, remat's binaries); it runs
itself as `PY compile_time_real.py --inductor-worker MODEL CKPT` in the
PyTorch venv for each Inductor measurement (one fresh process each).
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ("gpt2_small", "resnet50")
LABEL = {"gpt2_small": "GPT-2 small 4x512", "resnet50": "ResNet-50 32x224"}


# -- Inductor: runs in the PyTorch venv, one process per measurement ---------------

def inductor_worker(model, checkpoint):
    """Prints one JSON line: first step, later steps (s), Inductor's cache
    counters; or {"error": reason}. Never raises."""
    try:
        sys.path.insert(0, os.path.join(root, "python"))
        import torch
        import torch._dynamo
        from torch._dynamo.utils import counters
        torch.set_num_threads(os.cpu_count())
        # An error inside the compile must not fall back to eager: that
        # would time eager PyTorch as "Inductor".
        torch._dynamo.config.suppress_errors = False
        from remat_torch import zoo
        net, inputs = zoo.REAL_SIZE[model](checkpoint=checkpoint)
        compiled = torch.compile(net)  # backend "inductor", mode default
        times = []
        for _ in range(3):
            net.zero_grad(set_to_none=True)
            start = time.perf_counter()
            loss = compiled(*inputs)
            loss.backward()
            times.append(time.perf_counter() - start)
        if not torch.isfinite(loss).item():
            raise RuntimeError(f"loss {loss.item()}")
        # torch's own account of its compile: Dynamo's frame compiles and
        # the lazy backward compile, wall time (torch._dynamo.utils).
        spent = torch._dynamo.utils.calculate_time_spent()
        ind = counters["inductor"]
        aot = counters["aot_autograd"]
        print(json.dumps({
            "first": times[0], "later": times[1:],
            "fx_hit": ind.get("fxgraph_cache_hit", 0),
            "fx_miss": ind.get("fxgraph_cache_miss", 0),
            "aot_hit": aot.get("autograd_cache_hit", 0),
            "graph_breaks": sum(counters["graph_break"].values()),
            "torch_compile": spent.get("total_wall_time"),
            "torch_fw": spent.get("entire_frame_compile"),
            "torch_bw": spent.get("entire_backward_compile"),
            "torch": torch.__version__}), flush=True)
    except BaseException as e:  # report, never crash the bench
        text = f"{type(e).__name__}: {e}"
        m = re.search(r"undefined symbol: \w+", text)
        reason = m.group(0) if m else text.strip().splitlines()[0] if text.strip() else type(e).__name__
        print(json.dumps({"error": reason[:120]}), flush=True)


def inductor(py, model, checkpoint, cache_dir, timeout, log):
    """{"first": s, "step": s, ...} from one fresh process, or {"error": why}."""
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir,
               TORCHINDUCTOR_FX_GRAPH_CACHE="1",
               TORCHINDUCTOR_AUTOGRAD_CACHE="1")
    env.pop("TORCH_COMPILE_DISABLE", None)
    try:
        p = subprocess.run([py, os.path.abspath(__file__), "--inductor-worker",
                            model, "1" if checkpoint else "0"],
                           capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:g} s"}
    with open(log, "a") as f:
        f.write(p.stdout + p.stderr)
    result = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except ValueError:
                pass
    if result is None:
        tail = [l for l in p.stderr.splitlines() if l.strip()]
        why = f"exit {p.returncode}" + (f": {tail[-1][:100]}" if tail else "")
        return {"error": why}
    if "error" not in result:
        result["step"] = statistics.median(result["later"])
        result["compile"] = result["first"] - result["step"]
    return result


# -- remat ---------------------------------------------------------------------------

class Remat:
    def __init__(self, build, work, log):
        self.opt = os.path.join(build, "bin", "remat-opt")
        self.run_bin = os.path.join(build, "bin", "remat-run")
        self.work = work
        self.log = log
        self.env = dict(os.environ)
        if os.path.isdir("/usr/local/cuda/bin"):
            self.env["PATH"] = "/usr/local/cuda/bin:" + self.env.get("PATH", "")

    def call(self, cmd, timeout=None):
        """(wall s, stdout, stderr); retried once on a failure (the binaries
        may be rebuilt under us). Raises on a second failure."""
        for attempt in (0, 1):
            start = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True,
                               env=self.env, timeout=timeout)
            wall = time.perf_counter() - start
            with open(self.log, "a") as f:
                f.write(f"$ {' '.join(cmd)}\n[rc {p.returncode}, {wall:.2f} s]\n"
                        f"{p.stdout[-4000:]}{p.stderr[-20000:]}\n")
            if p.returncode == 0:
                return wall, p.stdout, p.stderr
            if attempt == 0:
                time.sleep(5)
        tail = [l for l in p.stderr.splitlines() if l.strip()]
        raise RuntimeError(f"{os.path.basename(cmd[0])} exit {p.returncode}"
                           + (f": {tail[-1][:100]}" if tail else ""))

    @staticmethod
    def stats(stdout):
        lines = [l for l in stdout.splitlines() if l.startswith("{")]
        return json.loads(lines[-1])

    def prepare(self, step, checkpoint, out):
        passes = ["-remat-thread-rng"] + (["-remat-checkpoint"] if checkpoint else [])
        self.call([self.opt, step, *passes, "-o", out])

    def cpu(self, ck):
        _, out, err = self.call([self.run_bin, ck, "--compile-only", "--stats",
                                 "--no-cache", "--timing"])
        s = self.stats(out)
        return {"total": s["compile_ms"] / 1e3,
                "parse": s["parse_ms"] / 1e3, "lower": s["lower_ms"] / 1e3,
                "host": s["host_compile_ms"] / 1e3, "load": s["load_ms"] / 1e3,
                "top": top_passes(err, 3)}

    def cached(self, ck, cache_dir):
        shutil.rmtree(cache_dir, ignore_errors=True)
        _, out1, _ = self.call([self.run_bin, ck, "--compile-only", "--stats",
                                "--cache-dir", cache_dir])
        _, out2, _ = self.call([self.run_bin, ck, "--compile-only", "--stats",
                                "--cache-dir", cache_dir])
        first, second = self.stats(out1), self.stats(out2)
        shutil.rmtree(cache_dir, ignore_errors=True)
        if second.get("cache") != "hit":
            return {"error": f"second run: cache {second.get('cache')}"}
        return {"total": second["compile_ms"] / 1e3,
                "miss": first["compile_ms"] / 1e3, "first_cache": first.get("cache")}

    def cuda(self, ck, chip):
        wall, _, err = self.call([self.opt, ck, f"-remat-lower-cuda=chip={chip}",
                                  "-o", os.devnull, "--mlir-timing"])
        phases = timing_tree(err)
        return {"total": wall,
                "cubins": phases.get("RematGpuModuleToBinaryPass"),
                "top": top_passes(err, 3)}

    def budget(self, step):
        wall, out, err = self.call([self.opt, step, "-remat-thread-rng",
                                    "-remat-mark=policy=budget budget-between=0",
                                    "-o", os.devnull])
        remark = next((l.split("remark: ", 1)[1] for l in err.splitlines()
                       if "remark: -remat-mark" in l), "(no remark)")
        return {"total": wall, "remark": remark}


TIMING_LINE = re.compile(
    r"^(\s+)(?:[\d.]+ \(\s*[\d.]+%\)\s+)?([\d.]+) \(\s*[\d.]+%\)\s+(\S.*?)\s*$", re.M)
NOT_PASSES = {"Total", "Rest", "parse", "lower", "host code", "load", "Output",
              "Parser"}


def timing_tree(text):
    """Name -> wall s of every entry of an MLIR timing report (the last one
    wins for repeated names, which the callers do not rely on)."""
    return {m.group(3): float(m.group(2)) for m in TIMING_LINE.finditer(text)}


def top_passes(text, n):
    """The n entries of a timing report with the most wall time, pipelines,
    analyses and the top-level phases left out: [(name, s)]."""
    entries = [(m.group(3), float(m.group(2))) for m in TIMING_LINE.finditer(text)]
    entries = [(name, s) for name, s in entries
               if name not in NOT_PASSES and "Pipeline" not in name
               and not name.startswith("(A)")]
    return sorted(entries, key=lambda e: -e[1])[:n]


# -- exports -------------------------------------------------------------------------

FACTORY = '''"""Written by bench/compile_time --real: zoo factories at other depths."""
from remat_torch import zoo


def gpt2_small_24(checkpoint=True, dropout=0.1):
    return zoo.gpt2_small(layers=24, checkpoint=checkpoint, dropout=dropout)
'''


def export(py, work, name, checkpoint, log):
    """work/NAME-C/step.mlir, exported unless already there (--work keeps
    them); the inputs' .npy files are deleted. Returns (path, ("exported" or
    "reused", the export's seconds or None))."""
    out = os.path.join(work, f"{name}-{int(checkpoint)}")
    step = os.path.join(out, "step.mlir")
    memo = os.path.join(out, "export-seconds")
    if os.path.exists(step):
        try:
            with open(memo) as f:
                return step, ("reused", float(f.read()))
        except (OSError, ValueError):
            return step, ("reused", None)
    if name.endswith("_24"):
        spec = os.path.join(work, "factories.py")
        with open(spec, "w") as f:
            f.write(FACTORY)
        spec += ":" + name
    else:
        spec = f"remat_torch.zoo:{name}"
    tmp = out + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [py, "-m", "remat_torch", spec, "-o", tmp]
    if not checkpoint:
        cmd.append("--no-checkpoint")
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=os.path.join(root, "python"),
                       capture_output=True, text=True)
    wall = time.perf_counter() - start
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n[rc {p.returncode}, {wall:.1f} s]\n"
                f"{p.stdout[-4000:]}{p.stderr[-4000:]}\n")
    if p.returncode != 0:
        tail = [l for l in p.stderr.splitlines() if l.strip()]
        raise RuntimeError(f"export of {name} failed (exit {p.returncode})"
                           + (f": {tail[-1][:100]}" if tail else ""))
    for f in os.listdir(tmp):
        if f.endswith(".npy"):
            os.unlink(os.path.join(tmp, f))
    with open(os.path.join(tmp, "export-seconds"), "w") as f:
        f.write(f"{wall:.1f}\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    return step, ("exported", wall)


# -- the bench -----------------------------------------------------------------------

def fmt(x, digits=1):
    return "n/a" if x is None else f"{x:.{digits}f}"


def inductor_cell(r):
    """First step minus the later steps' median; in parentheses torch's own
    account of its compile (Dynamo's timers), which the steps' noise does
    not move."""
    own = r.get("torch_compile")
    return f"{r['compile']:.1f} ({fmt(own)})"


def cell(result, render):
    if result is None:
        return "-"
    if "error" in result:
        return f"n/a ({result['error']})"
    return render(result)


def measure_row(remat, py, work, name, checkpoint, opts, log, notes):
    """Every remat column of one (model, checkpoint) row."""
    row = {}
    try:
        step, export_s = export(py, work, name, checkpoint, log)
    except Exception as e:  # a failed export fails the row, not the bench
        return {k: {"error": str(e)[:100]} for k in ("cpu", "cached", "cuda")}
    how, export_s = export_s
    notes.append(f"{name} checkpoint={int(checkpoint)}: "
                 + ("exported in " if how == "exported" else
                    "export reused from --work (it took ")
                 + f"{fmt(export_s, 0)} s" + ("" if how == "exported" else ")")
                 + " (torch.compile trace + ATen -> MLIR; in no column)")
    ck = os.path.join(work, f"{name}-{int(checkpoint)}", "ck.mlir")

    def attempt(key, fn):
        try:
            row[key] = fn()
        except Exception as e:
            row[key] = {"error": str(e)[:100]}
        print(f"  {name} checkpoint={int(checkpoint)} {key}: "
              f"{json.dumps(row[key])[:300]}", file=sys.stderr, flush=True)

    attempt("prepare", lambda: remat.prepare(step, checkpoint, ck) or {})
    if "error" in row["prepare"]:
        for key in ("cpu", "cached", "cuda"):
            row[key] = row["prepare"]
        return row
    attempt("cpu", lambda: best_of(opts.real_repeat, lambda: remat.cpu(ck)))
    if not getattr(opts, "no_cache_column", False):
        attempt("cached", lambda: best_of(opts.real_repeat, lambda: remat.cached(
            ck, os.path.join(work, "remat-cache"))))
    if not opts.no_cuda:
        attempt("cuda", lambda: best_of(opts.real_repeat,
                                        lambda: remat.cuda(ck, opts.chip)))
    if checkpoint and not opts.no_budget:
        attempt("budget", lambda: best_of(opts.real_repeat,
                                          lambda: remat.budget(step)))
    return row


def best_of(n, fn):
    best = None
    for _ in range(max(1, n)):
        r = fn()
        if "error" in r:
            return r
        if best is None or r["total"] < best["total"]:
            best = r
    return best


def main(args, build):
    models = [m for m in args.real.split(",") if m]
    for m in models:
        if m not in MODELS:
            sys.exit(f"bench/compile_time: --real takes {','.join(MODELS)}, not {m!r}")
    py = args.python or subprocess.run(
        [os.path.join(root, "scripts", "torch-venv")], check=True,
        capture_output=True, text=True).stdout.strip()
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(
        prefix="remat-compile-time-real-")
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "log.txt")
    remat = Remat(build, work, log)
    notes = []
    cores = os.cpu_count()
    print(f"machine: {cpu_name()}, {cores} cores, load average "
          f"{os.getloadavg()[0]:.1f} at start; work dir {work} (log: {log})",
          flush=True)
    started = time.perf_counter()

    rows = []
    for name in models:
        for checkpoint in (True, False):
            row = measure_row(remat, py, work, name, checkpoint, args, log, notes)
            if not args.no_inductor:
                cache_dir = os.path.join(work, f"inductor-cache-{name}-{int(checkpoint)}")
                shutil.rmtree(cache_dir, ignore_errors=True)
                ilog = os.path.join(work, f"inductor-{name}-{int(checkpoint)}.log")
                first = inductor(py, name, checkpoint, cache_dir,
                                 args.inductor_timeout, ilog)
                print(f"  {name} checkpoint={int(checkpoint)} inductor first: "
                      f"{json.dumps(first)}", file=sys.stderr, flush=True)
                cached = ({"error": "first compile failed"} if "error" in first
                          else inductor(py, name, checkpoint, cache_dir,
                                        args.inductor_timeout, ilog))
                print(f"  {name} checkpoint={int(checkpoint)} inductor cached: "
                      f"{json.dumps(cached)}", file=sys.stderr, flush=True)
                row["ind_first"], row["ind_cached"] = first, cached
                if not args.work:
                    shutil.rmtree(cache_dir, ignore_errors=True)
            rows.append((name, checkpoint, row))

    scaling = None
    if not args.no_scaling and "gpt2_small" in models:
        row24 = measure_row(remat, py, work, "gpt2_small_24", True,
                            _Only(args, cached=False, budget=False), log, notes)
        row12 = next(r for n, c, r in rows if n == "gpt2_small" and c)
        scaling = (row12, row24)

    print()
    print("| model | checkpoint | remat CPU s (parse/lower/host/load) | "
          "remat cached s | remat CUDA s (cubins) | budget planner s | "
          "Inductor first s | Inductor cached s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, checkpoint, row in rows:
        cpu = cell(row.get("cpu"), lambda r: (
            f"{r['total']:.1f} ({r['parse']:.2f}/{r['lower']:.1f}/"
            f"{r['host']:.1f}/{r['load']:.2f})"))
        cached = cell(row.get("cached"), lambda r: f"{r['total']:.2f}")
        cuda = cell(row.get("cuda"), lambda r: f"{r['total']:.1f} ({fmt(r['cubins'])})")
        budget = cell(row.get("budget"), lambda r: f"{r['total']:.1f}")
        if not checkpoint and row.get("budget") is None and not args.no_budget:
            budget = "= yes row"
        ind_first = cell(row.get("ind_first"), inductor_cell)
        ind_cached = cell(row.get("ind_cached"), inductor_cell)
        print(f"| {LABEL[name]} | {'yes' if checkpoint else 'no'} | {cpu} | "
              f"{cached} | {cuda} | {budget} | {ind_first} | {ind_cached} |")
    if scaling:
        r12, r24 = scaling

        def ratio(key):
            a, b = r12.get(key), r24.get(key)
            if not a or not b or "error" in a or "error" in b:
                why = (b or {}).get("error") or (a or {}).get("error") or "not measured"
                return f"n/a ({why})"
            return f"{b['total']:.1f} s / {a['total']:.1f} s = {b['total'] / a['total']:.2f}x"
        print(f"\nGPT-2 small 24 layers vs 12 (checkpointed, 4x512): "
              f"remat CPU {ratio('cpu')}; CUDA lowering {ratio('cuda')}")

    print("\ndetails:")
    for name, checkpoint, row in rows + ([("gpt2_small_24", True, scaling[1])]
                                         if scaling else []):
        tag = f"  {name} checkpoint={'yes' if checkpoint else 'no'}:"
        r = row.get("cpu")
        if r and "error" not in r:
            print(f"{tag} CPU top entries: " + ", ".join(
                f"{n} {s:.1f}" for n, s in r["top"]))
        r = row.get("cached")
        if r and "error" not in r:
            print(f"{tag} cache miss (compile + write) {r['miss']:.1f} s, "
                  f"hit {r['total']:.2f} s")
        r = row.get("cuda")
        if r and "error" not in r:
            print(f"{tag} CUDA top passes: " + ", ".join(
                f"{n} {s:.1f}" for n, s in r["top"]))
        r = row.get("budget")
        if r and "error" not in r:
            print(f"{tag} budget remark: {r['remark']}")
        for key, what in (("ind_first", "Inductor first"), ("ind_cached", "Inductor cached")):
            r = row.get(key)
            if r and "error" not in r:
                print(f"{tag} {what}: first step {r['first']:.1f} s, later steps "
                      + "/".join(f"{t:.1f}" for t in r["later"])
                      + f" s; torch's own compile time {fmt(r.get('torch_compile'))} s "
                      f"(forward frames {fmt(r.get('torch_fw'))}, backward "
                      f"{fmt(r.get('torch_bw'))}); "
                      f"FX graph cache hit/miss {r['fx_hit']}/{r['fx_miss']}, "
                      f"AOT autograd cache hits {r['aot_hit']}, "
                      f"graph breaks {r['graph_breaks']}")
    for note in notes:
        print(f"  {note}")
    print(f"  load average {os.getloadavg()[0]:.1f} at the end; "
          f"bench took {(time.perf_counter() - started) / 60:.1f} min")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


class _Only:
    """args with some columns turned off (the 24-layer row)."""
    def __init__(self, args, cached, budget):
        self._args = args
        self.no_cache_column = not cached
        self.no_budget = not budget

    def __getattr__(self, name):
        return getattr(self._args, name)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            return m.group(1).strip() if m else "unknown CPU"
    except OSError:
        return "unknown CPU"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--inductor-worker":
        inductor_worker(sys.argv[2], sys.argv[3] == "1")
    else:
        sys.exit("run bench/compile_time --real instead")
