"""cumsum in the forms models use it: float32 along the last and the
first dimension of a parameter-dependent activation (its backward a
reversed cumsum: flip, cumsum, flip), int64 position ids from an int64
attention mask (OPT's), a boolean's cumsum (int64, GPT-2's packed-sequence
detection), and an int32 one with dtype=float32."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 7))
        self.table = nn.Parameter(torch.randn(9, 7))
        self.drop = nn.Dropout(p)

    def forward(self, x, mask):
        pos = mask.cumsum(-1) - 1                                 # int64 [3, 7]
        restarts = (pos.diff(dim=-1) != 1).cumsum(-1)             # bool -> int64
        h = self.drop(torch.cumsum(x * self.w, dim=1))
        h = h + torch.cumsum(self.w.unsqueeze(0).expand(2, 3, 7), 0)[1]
        h = h * self.table[pos.clamp(min=0)].sum(-1) + restarts.sum(-1, keepdim=True)
        h = h + torch.cumsum(mask.int(), 1, dtype=torch.float32) * 0.01
        return (h * h).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    mask = torch.ones(3, 7, dtype=torch.long)
    mask[1, 5:] = 0
    return Net(dropout), (torch.randn(3, 7), mask)
