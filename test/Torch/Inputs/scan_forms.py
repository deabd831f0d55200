"""Scan forms for the exporter (test/Torch/zoo-scan.test): a scan with
reverse=True whose stacked outputs the loss reads, dropout and a captured
parameter in its body; a scan over dimension 1 of its xs; and DropoutRows,
whose gradient shows each iteration's dropout mask. The scan over
dimension 1 runs another scan in its combine function (torch 2.15's
torch.compile cannot trace a step with dropout in such an inner body).
"""
import torch
import torch.nn.functional as F
from torch._higher_order_ops.scan import scan


class Forms(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        torch.manual_seed(0)
        self.p = p
        self.W = torch.nn.Parameter(torch.randn(6, 8, 8) / 8 ** 0.5)
        self.V = torch.nn.Parameter(torch.randn(8, 5, 8) / 8 ** 0.5)
        self.scale = torch.nn.Parameter(1 + 0.1 * torch.randn(8))
        self.register_buffer("B", torch.randn(3, 5, 8))

    def forward(self, x, target):
        def layer(h, w):
            h = F.dropout(torch.tanh(h @ w) * self.scale, self.p, self.training)
            return h, h.sum(0)
        h, ys = scan(layer, x, self.W, reverse=True)

        def inner(c, b):
            return c * torch.cos(b) + torch.sin(b), ()

        def mix(h, vb):
            v, b = vb
            return torch.sigmoid(scan(inner, h, b)[0] @ v), ()
        h, _ = scan(mix, h, (self.V, self.B), dim=1)
        return ((h - target) ** 2).mean() + ys.square().mean()


def model(dropout=0.1):
    return Forms(dropout), (torch.randn(4, 8), torch.randn(4, 8))


class DropoutRows(torch.nn.Module):
    """Iteration i adds dropout(ones) * W[i] to the carry: the gradient of
    W[i] is iteration i's mask times 1 / (1 - p), so the rows of W's
    gradient differ only if every iteration draws its own numbers."""

    def __init__(self, p, layers=8, width=64):
        super().__init__()
        self.p = p
        self.W = torch.nn.Parameter(torch.ones(layers, width))

    def forward(self, x):
        def layer(total, w):
            return total + (F.dropout(x, self.p, self.training) * w).sum(), ()
        total, _ = scan(layer, torch.zeros(()), self.W)
        return total


def dropout_rows(dropout=0.5):
    return DropoutRows(dropout), (torch.ones(64),)

