"""Integer arithmetic with the element types PyTorch gives it: T5's
relative-position buckets (abs, minimum, where, the log of the positions
converted to float, truncated back to int64), sign of integers and floats,
a boolean mask times a Python int (int64), and an int32 tensor plus an int64
zero-dimensional tensor (int32: a zero-dimensional tensor of the same
category does not widen), the buckets then indexing an embedding."""
import math

import torch
import torch.nn as nn


def buckets(relative, bidirectional, num_buckets=8, max_distance=16):
    """transformers' T5Attention._relative_position_bucket."""
    out = 0
    if bidirectional:
        num_buckets //= 2
        out += (relative > 0).to(torch.long) * num_buckets
        relative = torch.abs(relative)
    else:
        relative = -torch.min(relative, torch.zeros_like(relative))
    max_exact = num_buckets // 2
    is_small = relative < max_exact
    large = max_exact + (torch.log(relative.float() / max_exact)
                         / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return out + torch.where(is_small, relative, large)


class Net(nn.Module):
    def __init__(self, p, seq=7):
        super().__init__()
        self.bias = nn.Embedding(8, 2)
        self.w = nn.Parameter(torch.randn(seq, seq))
        self.drop = nn.Dropout(p)
        self.seq = seq

    def forward(self, x, offsets):
        pos = torch.arange(self.seq)
        relative = pos[None, :] - pos[:, None]
        h = self.bias(buckets(relative, True)).sum(-1) + self.bias(buckets(relative, False))[..., 0]
        shifted = offsets + torch.tensor(3, dtype=torch.int64)      # int32 + int64 0-dim
        h = h + (shifted.sign() * torch.maximum(shifted, -shifted)).float()[:, None]
        h = h + (x > 0) * 2 + torch.sign(x) * self.w                   # bool * 2: int64
        return (self.drop(h) * self.w).sum()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(7, 7), torch.tensor([-5, 0, 2, -1, 4, 0, -3],
                                                          dtype=torch.int32))
