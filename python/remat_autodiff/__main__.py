"""python3 -m remat_autodiff MODEL [--scale full|tiny] [--dtype f32|f64]:
prints the MLIR of one example step."""
import argparse

from .models import MODELS

parser = argparse.ArgumentParser(prog="remat_autodiff")
parser.add_argument("model", choices=sorted(MODELS))
parser.add_argument("--scale", choices=["full", "tiny"], default="full")
parser.add_argument("--dtype", choices=["f32", "f64"], default="f32")
args = parser.parse_args()
print(MODELS[args.model](args.scale, args.dtype), end="")
