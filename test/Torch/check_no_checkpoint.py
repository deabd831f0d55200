"""Checks that a zoo model's own checkpointing (transformers'
activation_checkpointing_enable, timm's set_grad_checkpointing, ...) changes
no value: the step exported with the factory's checkpoint=False has no
segments, and with dropout on it gives loss and gradients bit-identical to
the checkpointed export's, both without rematerialization.

Usage: check_no_checkpoint.py REMAT_OPT REMAT_RUN FACTORY WORKDIR
Prints one line; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys

remat_opt, remat_run, factory, workdir = sys.argv[1:5]
name = factory.rpartition(":")[2]


def export(out, *extra):
    subprocess.run([sys.executable, "-m", "remat_torch", factory, "-o", out, *extra],
                   check=True, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    step = os.path.join(out, "threaded.mlir")
    subprocess.run([remat_opt, os.path.join(out, "step.mlir"), "-remat-thread-rng",
                    "-o", step], check=True)
    return manifest, step


with_ckpt, step = export(os.path.join(workdir, f"{name}-checkpoint"))
plain, plain_step = export(os.path.join(workdir, f"{name}-no-checkpoint"), "--no-checkpoint")
if plain["arguments"] != with_ckpt["arguments"]:
    print(f"{name}: FAIL: the exports' arguments differ")
    sys.exit(1)
r = subprocess.run([remat_run, step, "--opt-level", "0", "--inputs",
                    ",".join(with_ckpt["inputs"]), "--compare", plain_step],
                   capture_output=True, text=True)
outs = [l for l in r.stdout.splitlines() if l.startswith("out")]
if r.returncode != 0 or not outs or not all(l.endswith("bit-identical") for l in outs):
    print(f"{name}: FAIL: differs without checkpointing\n{r.stdout}{r.stderr}")
    sys.exit(1)
print(f"{name} without checkpointing: {len(outs)} outputs bit-identical, "
      f"{plain['segments']} segments (checkpointed: {with_ckpt['segments']})")
