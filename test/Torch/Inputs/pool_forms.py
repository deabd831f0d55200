"""1-D and 3-D pooling, each with its backward: PyTorch exports max_pool1d,
avg_pool1d and adaptive_avg_pool1d as their 2-D forms on an input of
height 1 (padded, strided, dilated, ceil_mode, count_include_pad=False);
max_pool3d, avg_pool3d and adaptive_avg_pool3d stay 3-D ops
(max_pool3d_with_indices, avg_pool3d, _adaptive_avg_pool3d and their
backward ops). Each family is a torch.utils.checkpoint, so its pooling is
recomputed in the backward; the volume's pooling reaches a parameter
through a per-channel scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, padding=1)
        self.proj = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.linspace(0.5, 2.0, 4).reshape(4, 1, 1, 1))
        self.drop = nn.Dropout(p)

    def forward(self, signal, volume):
        x = checkpoint(self.one_d, signal, use_reentrant=False)
        y = checkpoint(self.three_d, volume, use_reentrant=False)
        e, f, g = y
        y = e.mean(dim=(2, 3, 4)) + f.mean(dim=(2, 3, 4)) + g.mean(dim=(2, 3, 4))
        y = self.proj(x.mean(dim=2) + y)
        return (y * y).mean() + (e * e).mean() + (f * g.sum()).mean()

    def one_d(self, signal):
        h = torch.tanh(self.conv(signal))                      # [2, 4, 17]
        a = F.max_pool1d(h, 3, stride=2, padding=1, dilation=1)  # [2, 4, 9]
        b = F.max_pool1d(h, 2, stride=2, ceil_mode=True)       # [2, 4, 9]
        c = F.avg_pool1d(h, 3, stride=2, padding=1, count_include_pad=False)  # [2, 4, 9]
        d = F.adaptive_avg_pool1d(h, 9)                        # [2, 4, 9]
        return self.drop(a * b + c - d)

    def three_d(self, volume):
        v = torch.tanh(volume * self.scale)                    # [2, 4, 5, 6, 7]
        e = F.max_pool3d(v, (2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0))
        f = F.avg_pool3d(v, 3, stride=2, padding=1, ceil_mode=True,
                         count_include_pad=False)
        g = F.adaptive_avg_pool3d(v * v, (2, 3, 4))
        return e, f, g


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 3, 17), torch.randn(2, 4, 5, 6, 7))
