import torch
import torch.nn as nn


class Strided(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)[:, :4]
        return y.as_strided((4, 2), (8, 1)).square().mean()


def model():
    torch.manual_seed(0)
    return Strided(), (torch.randn(4, 8),)
