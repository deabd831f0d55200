"""1-D convolutions in the forms wav2vec2's feature encoder and positional
convolution use them, each with its backward (a 2-D convolution of height
1): a strided one without bias on the raw signal, then group norm and
GELU; a strided, dilated one with bias; a grouped one padded by half its
even kernel, its weight normalized along the kernel (wav2vec2's positional
embedding, which drops its last output; weight norm's backward is
_weight_norm_interface_backward)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.first = nn.Conv1d(1, 6, 10, stride=5, bias=False)
        self.norm = nn.GroupNorm(6, 6)
        self.second = nn.Conv1d(6, 8, 3, stride=2, dilation=2)
        self.positional = nn.utils.parametrizations.weight_norm(
            nn.Conv1d(8, 8, 4, padding=2, groups=2), name="weight", dim=2)
        self.drop = nn.Dropout(p)

    def forward(self, signal):
        h = F.gelu(self.norm(self.first(signal[:, None])))
        h = self.drop(F.gelu(self.second(h)))
        h = h + F.gelu(self.positional(h)[:, :, :-1])
        return (h * h).mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 120),)
