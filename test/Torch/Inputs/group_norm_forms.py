"""Group norm in the forms models use it, each with its backward (the core
ATen decomposition of native_group_norm_backward, which reads the
forward's mean and rstd): two groups of an NCHW activation (PoolFormer's
GroupNorm1 is one group), one group per channel of an [N, C, L] signal
(wav2vec2's first feature-encoder layer), and one without affine
parameters."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(4, 1, 1))
        self.pair = nn.GroupNorm(2, 4)
        self.one = nn.GroupNorm(1, 4, affine=False)
        self.per_channel = nn.GroupNorm(6, 6)
        self.mix = nn.Parameter(torch.randn(6, 4))
        self.drop = nn.Dropout(p)
        with torch.no_grad():
            for norm in (self.pair, self.per_channel):
                norm.weight.normal_()
                norm.bias.normal_()

    def forward(self, x, s):
        h = self.pair(x * self.scale)
        h = self.drop(h) + self.one(h * h)
        signal = self.per_channel(s + self.mix @ h.mean(-1))
        return (signal * signal).mean() + h.pow(2).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 4, 5, 3), torch.randn(2, 6, 5))
