"""max.dim and min.dim (values and the first index holding them), amin,
and the rounding ops, each with its backward: max and min along either
end of float32 tensors, with keepdim and without, their values' gradient
(the gradient put back at the index); max.dim of int64 block ids (LongT5's
transient-global attention: torch.max(ids, dim=-1).values); a tie whose
first index PyTorch returns; floor, ceil, trunc and round (half to even)
of float32, whose gradient is zero, floor of int64 (the identity)."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 5))
        self.drop = nn.Dropout(p)

    def forward(self, x, ids):
        h = self.drop(x * self.w)
        hi, at = torch.max(h, dim=-1)
        lo, at0 = torch.min(h, dim=0, keepdim=True)
        tie = torch.max(torch.tensor([[1.0, 3.0, 3.0, 2.0]]), dim=1).indices
        top = torch.max(ids, dim=-1).values
        bottom, _ = torch.min(ids, dim=0)
        r = torch.floor(h * 2) + torch.ceil(h * 3) + torch.trunc(h * 5) + torch.round(h * 4)
        s = h * 3 + r * 0.25 + torch.amin(h, dim=1, keepdim=True)
        ints = (at.sum() + at0.sum() + tie.sum() + top.sum() + bottom.sum()
                + torch.floor(ids).sum()).float()
        return (s * s).mean() + hi.sum() - (lo * lo).sum() + ints * 1e-3


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(3, 5),
                          torch.tensor([[0, 4, 2, 4], [1, 1, 0, -3], [7, 7, 7, 2]]))
