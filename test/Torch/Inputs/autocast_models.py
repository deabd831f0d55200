"""Mixed-precision training steps: an MLP, a 2-layer GPT-2 (transformers)
and a ResNet-18 (its layout at base width 8), each with its forward under
torch.autocast("cpu", dtype) as people train in mixed precision: parameters
in float32, matmuls and convolutions in bfloat16 (or float16), the ops
autocast keeps in float32 (softmax, norms' statistics, the loss) in float32.
Each factory takes `dtype` (None: the same model in float32, what the 2-byte
step's peak is compared with). The sizes keep activations, not parameters,
most of a step's memory (as at real sizes), small enough for CI."""
import functools
from contextlib import nullcontext

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def _autocast(dtype):
    return torch.autocast("cpu", dtype=dtype) if dtype is not None else nullcontext()


class AutocastClassifier(nn.Module):
    """model(x, labels) under autocast: the step's inputs keep their names."""

    def __init__(self, model, dtype):
        super().__init__()
        self.model, self.dtype = model, dtype

    def forward(self, x, labels):
        with _autocast(self.dtype):
            return self.model(x, labels)


class AutocastLM(nn.Module):
    def __init__(self, model, dtype):
        super().__init__()
        self.model, self.dtype = model, dtype

    def forward(self, input_ids, attention_mask, labels):
        with _autocast(self.dtype):
            return self.model(input_ids, attention_mask, labels)


class MLP(nn.Module):
    """tanh and GELU hidden layers with dropout, the first two a checkpoint."""

    def __init__(self, p, widths=(32, 128, 128, 128, 10)):
        super().__init__()
        self.p = p
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))

    def block(self, h):
        h = F.dropout(torch.tanh(self.layers[0](h)), self.p, self.training)
        return F.dropout(F.gelu(self.layers[1](h)), self.p, self.training)

    def forward(self, x, labels):
        h = checkpoint(self.block, x, use_reentrant=False)
        h = F.dropout(F.gelu(self.layers[2](h)), self.p, self.training)
        return F.cross_entropy(self.layers[3](h), labels)


def mlp(dropout=0.1, dtype=torch.bfloat16, batch=128):
    torch.manual_seed(0)
    return (AutocastClassifier(MLP(dropout), dtype),
            (torch.randn(batch, 32), torch.randint(0, 10, (batch,))))


def gpt2(dropout=0.1, dtype=torch.bfloat16, batch=4, seq=64):
    """transformers' GPT-2, 2 layers of width 32, each layer a checkpoint."""
    from remat_torch import zoo
    model, inputs = zoo.gpt2(dropout=dropout, checkpoint=True, batch=batch, seq=seq,
                             vocab=96, width=32, layers=2)
    return AutocastLM(model, dtype), inputs


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """ResNet-18's layout (7x7 stride-2 stem, max pool, four stages of two
    basic blocks, average pool, dropout, linear head) at base width
    `width`, each stage a checkpoint."""

    def __init__(self, p, width=8, classes=10):
        super().__init__()
        self.p = p
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], width
        for i, c in enumerate([width, 2 * width, 4 * width, 8 * width]):
            stages.append(nn.Sequential(BasicBlock(cin, c, 1 if i == 0 else 2),
                                        BasicBlock(c, c, 1)))
            cin = c
        self.stages = nn.ModuleList(stages)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x, labels):
        h = self.stem(x)
        for stage in self.stages:
            h = checkpoint(stage, h, use_reentrant=False)
        h = F.dropout(F.adaptive_avg_pool2d(h, 1).flatten(1), self.p, self.training)
        return F.cross_entropy(self.fc(h), labels)


def resnet18(dropout=0.1, dtype=torch.bfloat16, batch=16, size=64):
    torch.manual_seed(0)
    return (AutocastClassifier(ResNet18(dropout), dtype),
            (torch.randn(batch, 3, size, size), torch.randint(0, 10, (batch,))))


mlp_f32 = functools.partial(mlp, dtype=None)
gpt2_f32 = functools.partial(gpt2, dtype=None)
resnet18_f32 = functools.partial(resnet18, dtype=None)
mlp_f16 = functools.partial(mlp, dtype=torch.float16)
