"""log1p with its backward: softplus (Mamba's time steps: its
decomposition is log1p(exp(beta * x)) / beta below the threshold, x above
it), log1p of values far below float32's unit roundoff (where log(1 + x)
rounds 1 + x to 1 and loses them: scaled up into the loss so that the
check sees them) and of an int64 tensor (computed in float32)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 6) * 4)
        self.drop = nn.Dropout(p)

    def forward(self, x, counts):
        h = self.drop(x * self.w)
        soft = F.softplus(h) + F.softplus(h, beta=2.0, threshold=5.0)
        tiny = torch.log1p(self.w * 1e-9) * 1e9
        return soft.mean() + tiny.sum() + (torch.log1p(counts) * h).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(4, 6), torch.randint(0, 9, (4, 6)))
