"""Imports remat_torch from SITE (a `pip install --target SITE ./python`)
instead of the source tree, and trains one step through
torch.compile(model, backend="remat"), which the installed package's
entry point registers without an import of remat_torch.

    check_install.py SITE REMAT_OPT
"""

import os
import sys

site = os.path.abspath(sys.argv[1])
os.environ["REMAT_OPT"] = sys.argv[2]
source = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path = [site] + [p for p in sys.path if os.path.abspath(p or ".") != source]

import torch  # noqa: E402

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
compiled = torch.compile(model, backend="remat",
                         options={"policy": "sqrt", "backend": "aot_eager"})
compiled(torch.randn(3, 4)).sum().backward()
import remat_torch  # noqa: E402

where = os.path.relpath(remat_torch.__file__, site)
print(f"trained one step; remat_torch from SITE/{where}; "
      f"gradient {tuple(model[0].weight.grad.shape)}")
