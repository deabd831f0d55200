"""sort, argsort and topk with their backward (scatter.src of the gradient
at the indices) and gather's (scatter_add): ViT-MAE's random masking
(argsort of noise, the argsort of that to restore the order, gathers of
the kept patches, with a repeated index, and of the mask), a descending
sort of activations along the channels, a stable sort along the batch,
topk of the smallest along a dimension, and an integer argsort. With
dropout the noise is torch.rand (remat.rng_uniform, recomputed
bit-identically); without, a fixed input, so the step can be compared
with PyTorch's."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.embed = nn.Linear(6, 8)
        self.head = nn.Linear(8, 6)

    def masked(self, patches, noise):
        n, length, _ = patches.shape
        keep = length // 4
        x = torch.tanh(self.embed(patches))                     # [2, 12, 8]
        if self.p > 0:
            noise = torch.rand(n, length)
        ids_shuffle = torch.argsort(noise, dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)          # an argsort of int64
        ids_keep = ids_shuffle[:, :keep * 3]
        kept = torch.gather(x, 1, ids_keep.unsqueeze(-1).repeat(1, 1, 8))
        mask = torch.ones(n, length)
        mask[:, :keep * 3] = 0
        mask = torch.gather(mask, 1, ids_restore)
        return kept, mask

    def forward(self, patches, noise):
        kept, mask = checkpoint(self.masked, patches, noise, use_reentrant=False)
        ranked, _ = torch.sort(kept, dim=2, descending=True)    # [2, 9, 8]
        stable, order = torch.sort(kept, dim=0, stable=True)
        low, where = torch.topk(ranked, 3, dim=1, largest=False)
        y = self.head(ranked * torch.linspace(1, 2, 8) + stable)
        return ((y * y).mean() + low.square().mean() + (mask * patches.mean(-1)).mean()
                + (where.float() * low).mean() + order[0].float().mean())


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 12, 6), torch.rand(2, 12))


class Ties(nn.Module):
    """Sorts of a row with ties, NaN and signed zeros, whose indices are the
    weight's gradient: PyTorch's order (NaN after every number ascending,
    first descending; ties in index order). topk's among equal values is
    PyTorch's kernel's choice, not a stable sort's, so its row has none."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4, 9))

    def forward(self, x):
        up = torch.sort(x, stable=True).indices
        down = torch.sort(x, descending=True, stable=True).indices
        top = torch.topk(torch.where(x == x, x, 5.0) + torch.arange(9) * 0.01, 4).indices
        ids = torch.stack([up, down, torch.argsort(up), torch.cat([top, top, top[:1]])])
        return (self.w * ids.float()).sum()


def ties(dropout=0.0):
    nan = float("nan")
    return Ties(), (torch.tensor([1.0, nan, -0.0, 2.0, 0.0, 1.0, nan, -3.0, 2.0]),)
