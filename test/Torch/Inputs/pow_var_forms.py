"""Powers with a tensor exponent and variances, each with its backward:
pow.Tensor_Tensor of two float32 tensors (both gradients: the exponent's is
x ** y * log x), of a zero-dimensional float32 tensor to int64 powers
(ALiBi's slopes in BLOOM and Falcon: base ** arange, float32 as torch's
promotion says), pow.Scalar (a number to tensor powers), var with the
unbiased default and with correction 0 (ViT-MAE's normalized pixel
targets), and var_mean."""
import math

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.rand(4, 6) + 0.5)
        self.y = nn.Parameter(torch.randn(4, 6) * 0.5)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        base = torch.tensor(2 ** (-(2 ** -(math.log2(6) - 3))), dtype=torch.float32)
        slopes = torch.pow(base, torch.arange(1, 7, dtype=torch.int64))
        h = self.drop(x * self.w).abs() + 0.5
        h = torch.pow(h, self.y) * slopes + torch.pow(1.5, self.y)
        v = h.var(dim=-1, keepdim=True)
        v0 = torch.var(h, dim=0, correction=0)
        var, mean = torch.var_mean(h, dim=1)
        h = (h - h.mean(dim=-1, keepdim=True)) / (v + 1e-6) ** 0.5
        return (h * h).mean() + v0.sum() + (var * mean).sum()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(4, 6),)
