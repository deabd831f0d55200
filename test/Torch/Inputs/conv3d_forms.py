"""3-D convolutions over NCDHW, each with its backward (a sum over the
kernel depth of 2-D convolutions with the output depth folded into the
batch): strided, padded and dilated differently along each dimension,
with bias; grouped, padded and dilated in depth without bias; a
max_pool3d between them, the whole a checkpoint."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.first = nn.Conv3d(2, 4, (3, 3, 2), stride=(2, 1, 2), padding=(1, 1, 0),
                               dilation=(1, 2, 1))
        self.second = nn.Conv3d(4, 6, 3, padding=(2, 1, 1), dilation=(2, 1, 1), groups=2,
                                bias=False)
        self.drop = nn.Dropout(p)

    def block(self, volume):
        h = F.gelu(self.first(volume))                           # [2, 4, 4, 6, 4]
        h = self.drop(F.max_pool3d(h, 2, stride=1))             # [2, 4, 3, 5, 3]
        return torch.tanh(self.second(h))                       # [2, 6, 3, 5, 3]

    def forward(self, volume):
        h = checkpoint(self.block, volume, use_reentrant=False)
        return (h * h).mean() + h.mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 2, 7, 8, 8),)
