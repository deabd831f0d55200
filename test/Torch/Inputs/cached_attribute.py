"""A model that caches a tensor it computes on itself in its forward
(Wav2Vec2-Conformer's rotary embedding: cached_rotary_positional_embedding,
from a buffer): torch.compile returns the cached tensor from its graph
beside the loss, to store it after the graph runs."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.inv_freq = nn.Buffer(torch.arange(3, dtype=torch.float32) / 3)
        self.cached = None
        self.drop = nn.Dropout(p)

    def forward(self, x):
        if self.cached is None:
            freqs = torch.arange(4, dtype=torch.float32)[:, None] * self.inv_freq
            angles = torch.cat([freqs, freqs], dim=-1)
            self.cached = torch.stack([angles.cos(), angles.sin()])
        cos, sin = self.cached
        h = self.lin(x)
        h = h * cos + torch.cat([-h[..., 3:], h[..., :3]], dim=-1) * sin
        return self.drop(h).square().mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 4, 6),)
