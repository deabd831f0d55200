"""Strided convolutions, whose input gradients take one stride-1
convolution per phase of the stride: 1x1 with stride 2, 3x3 with stride 2
and padding 1 (ResNet's), a grouped 3x2 kernel with strides (2, 3) and
padding (2, 1) (a phase with no filter taps), 5x5 with stride 3, and 2x2
with stride 2 and no padding."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.a = nn.Conv2d(3, 6, 3, stride=2, padding=1, bias=False)
        self.b = nn.Conv2d(6, 8, 1, stride=2, bias=False)
        self.c = nn.Conv2d(8, 6, (3, 2), stride=(2, 3), padding=(2, 1), groups=2,
                           bias=False)
        self.d = nn.Conv2d(6, 4, 5, stride=3, padding=2, bias=False)
        self.e = nn.Conv2d(4, 4, 2, stride=2, bias=False)

    def features(self, x):
        h = torch.tanh(self.a(x))
        h = torch.nn.functional.dropout(torch.tanh(self.b(h)), self.p, self.training)
        h = torch.tanh(self.c(h))
        return self.e(torch.tanh(self.d(h)))

    def forward(self, x, target):
        return 0.5 * ((self.features(x) - target) ** 2).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    net = Net(dropout)
    x = torch.randn(2, 3, 40, 37)
    with torch.no_grad():
        t = torch.randn_like(net.eval().features(x))
    net.train()
    return net, (x, t)
