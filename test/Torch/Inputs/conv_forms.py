"""Convolution and batch-norm forms beside the zoo's ResNet block: no padding,
channel counts that differ, a 3x2 kernel with padding (2, 1), a bias, batch norm
without running statistics (track_running_stats=False)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.c1 = nn.Conv2d(3, 5, 3, padding=0, bias=False)  # bn follows
        self.bn = nn.BatchNorm2d(5, track_running_stats=False)
        self.c2 = nn.Conv2d(5, 4, (3, 2), padding=(2, 1), bias=True)

    def forward(self, x, target):
        h = F.dropout(torch.relu(self.bn(self.c1(x))), self.p, self.training)
        y = self.c2(h)
        return 0.5 * ((y - target) ** 2).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    net = Net(dropout)
    x = torch.randn(2, 3, 7, 6)
    with torch.no_grad():
        t = torch.randn_like(net.c2(net.c1(x)))
    return net, (x, t)
