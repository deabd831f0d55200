"""torch.roll and the integer and float remainders, each with its
backward: roll along one and two dimensions, by positive and negative
shifts (its core ATen decomposition indexes with (start + arange) fmod
size, index_select along an inner dimension; the backward, an index_add,
comes decomposed as an index_put); fmod and remainder of float32 tensors
by a Python number and by a tensor (negative operands: fmod takes the
dividend's sign, remainder the divisor's), of int64 tensors by both; and
division rounding toward zero and down."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 5, 6))
        self.d = nn.Parameter(torch.rand(5, 6) + 0.5)
        self.drop = nn.Dropout(p)

    def forward(self, x, k):
        h = self.drop(x * self.w)
        h = torch.roll(h, shifts=(-2, 3), dims=(1, 2)) + torch.roll(h, 1, 2) * 0.5
        h = h + torch.fmod(h * 3, 1.25) + torch.remainder(h * 3, -1.25)
        h = h + torch.fmod(h, self.d) * 0.5 + torch.remainder(h, -self.d) * 0.25
        ints = torch.fmod(k, 3) * 10 + torch.remainder(k, 4) + torch.remainder(k, -k.abs() - 1)
        h = h + ints.float() + torch.div(k, 3, rounding_mode="floor")
        h = h + torch.div(h, self.d, rounding_mode="trunc") * 0.1 + torch.div(k, 4, rounding_mode="trunc")
        return (h * h).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 5, 6), torch.arange(-15, 15).reshape(5, 6))
