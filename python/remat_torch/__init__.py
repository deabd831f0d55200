"""PyTorch front end of remat: exports AOTAutograd joint graphs to remat IR,
and plans what the backward recomputes inside torch.compile:
`remat_torch.compile(model)`, `torch.compile(model, backend="remat")` and
the AOTAutograd partition function `remat_torch.partition`."""

from .backend import compile, make_backend, register, remat_backend  # noqa: F401
from .partitioner import RematOptNotFound, find_remat_opt, partition  # noqa: F401

try:
    import torch  # noqa: F401
except ImportError:  # the exporter's helpers need no torch to import
    pass
else:
    register()
