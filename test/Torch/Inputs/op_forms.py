"""One small training step through the ATen ops and forms the exporter maps
beyond the zoo's blocks: integer token ids and labels as inputs, embedding,
arange, boolean masks (ne, logical_not, masked_fill, where), strided,
dilated and depthwise convolutions, max, average and adaptive average
pooling, ReLU6, SiLU, sigmoid, exact and tanh GELU, clamp, select, squeeze,
log_softmax and cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, p, vocab=11, width=16, classes=5):
        super().__init__()
        self.p = p
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.grouped = nn.Conv2d(8, 12, (3, 1), stride=(1, 2), groups=4)
        self.tokens = nn.Embedding(vocab, width, padding_idx=0)
        self.positions = nn.Embedding(8, width)
        self.norm = nn.LayerNorm(width)
        self.gate = nn.Linear(width, width)
        self.head = nn.Linear(12 * 2 * 2 + 8 * 2 * 2 + width, classes)

    def forward(self, x, ids, labels):
        h = F.relu6(self.bn(self.stem(x)))                      # [2, 8, 6, 6]
        h = F.silu(self.depthwise(h))
        pooled = F.max_pool2d(h, 3, stride=2, padding=1)         # [2, 8, 3, 3]
        avg = F.avg_pool2d(h, 3, stride=2, padding=1, count_include_pad=False)
        g = torch.sigmoid(self.grouped(pooled + avg))            # [2, 12, 1, 2]
        g = F.adaptive_avg_pool2d(g, (2, 2))
        a = F.adaptive_avg_pool2d(pooled, (2, 2))                # 3 -> 2: overlapping
        t = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        t = F.gelu(self.norm(t))
        t = F.gelu(self.gate(t), approximate="tanh")
        t = F.dropout(t, self.p, self.training)
        pad = ids == 0
        t = t.masked_fill(pad.unsqueeze(-1), 0.0)
        count = torch.logical_not(pad).sum(1, keepdim=True).clamp_min(1)
        t = t.sum(1) / count                                     # int64 -> float
        feats = torch.cat([g.flatten(1), a.flatten(1), t], dim=1)
        logits = self.head(feats)
        logits = torch.where(logits > 0, logits, 0.1 * logits).clamp(-5.0, 5.0)
        first = F.log_softmax(logits, dim=1).select(1, 0).unsqueeze(1).squeeze(1)
        return F.cross_entropy(logits, labels) - 0.1 * first.mean()


def model(dropout=0.1):
    torch.manual_seed(0)
    net = Net(dropout)
    x = torch.randn(2, 3, 12, 12)
    ids = torch.tensor([[3, 7, 1, 0, 0], [5, 2, 9, 10, 4]])
    labels = torch.tensor([4, 1])
    return net, (x, ids, labels)
