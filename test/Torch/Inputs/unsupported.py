import torch
import torch.nn as nn


class CumMax(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        return torch.cummax(y, dim=1).values.square().mean()


def model():
    torch.manual_seed(0)
    return CumMax(), (torch.randn(4, 8),)
