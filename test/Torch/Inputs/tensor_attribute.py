"""A model that holds a tensor as a plain attribute, neither parameter nor
buffer (VideoMAE's sinusoidal position table), read as VideoMAE reads it
(detached, type_as, copied): torch.compile lifts it to a graph input,
which the exporter names by the attribute and passes as an input."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.table = torch.randn(4, 6)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        h = self.lin(x) + self.table.detach().type_as(x).to(device=x.device, copy=True)
        return self.drop(h).square().mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 4, 6),)
