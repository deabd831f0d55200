"""A custom torch.autograd.Function, as BLOOM's GELU (GeLUFunction: the
forward saves its input, the backward computes the tanh-approximation's
derivative from it and multiplies the incoming gradient). AOTAutograd
leaves the backward's nodes without the partitioner's backward tag."""
import torch
import torch.nn as nn


class TanhGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        t = torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))
        ff = 0.5 * x * ((1 - t * t) * (0.79788456 + 0.1070322243 * x * x)) + 0.5 * (1 + t)
        return ff * g


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 4)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.down(self.drop(TanhGelu.apply(self.up(x)))).square().mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(3, 8),)
