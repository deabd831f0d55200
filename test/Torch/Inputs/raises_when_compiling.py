"""A model that, like transformers' LongT5 encoder called without an
attention mask, builds a default only outside torch.compile
(`not is_torchdynamo_compiling()`): traced, it reads .shape of None."""
import torch
import torch.nn as nn


class DefaultMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, mask=None):
        if mask is None and not torch.compiler.is_compiling():
            mask = torch.ones(x.shape[0], 4)
        width = mask.shape[-1]
        return (self.lin(x) * mask[:, :width]).square().mean()


def model():
    torch.manual_seed(0)
    return DefaultMask(), (torch.randn(2, 4),)
