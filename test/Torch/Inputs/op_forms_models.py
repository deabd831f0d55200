"""One small training step through the ATen ops and forms that the
transformers, torchvision and timm models of the zoo add to op_forms.py's:
a causal and padding attention mask built from arange, le, index.Tensor
(adjacent, separated and None-kept indices, a negative index) and
bitwise_and; advanced indexing of an activation with several index tensors
(its backward an index_put that accumulates); the attention guard for fully masked rows (eq, logical_not,
any.dim); rotary-style halves (slices, whose backward is slice_scatter);
strided slices (Swin's patch merging);
RMSNorm (pow, mean, rsqrt); F.pad of int64 labels and of an activation
(constant_pad_nd); stochastic depth (empty, bernoulli.p); in-place dropout
(empty_permuted, bernoulli.p, copy); and an as_strided view."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, p, vocab=11, width=8, seq=6):
        super().__init__()
        self.p = p
        self.tokens = nn.Embedding(vocab, width)
        self.query = nn.Linear(width, width)
        self.scale = nn.Parameter(torch.ones(width))
        self.head = nn.Linear(width, vocab)
        self.register_buffer("table", torch.arange(2 * seq * 3).reshape(2, seq, 3) % 4 == 0)

    def forward(self, ids, mask, labels):
        b, t = ids.shape
        h = self.tokens(ids)                                        # [2, 6, 8]
        # RMSNorm (Llama's): x * rsqrt(mean(x ** 2) + eps) * scale
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.scale
        # advanced indexing of an activation with several index tensors,
        # adjacent (a repeated and a negative index) and separated: the
        # backward is index_put that accumulates
        rows = h[torch.arange(b)[:, None], torch.tensor([0, 2, 2, -1])]  # [2, 4, 8]
        cols = h[torch.tensor([1, 0]), :, torch.tensor([3, -1])]        # [2, 6]
        h = h + rows.mean(1, keepdim=True) + cols[:, :, None] * 0.25
        # rotary-style halves: the slices' backward is slice_scatter
        half = h.shape[-1] // 2
        h = h + torch.cat([-h[..., half:], h[..., :half]], dim=-1) * 0.5
        # strided slices (Swin's patch merging): even and odd channels
        h = h + torch.cat([h[..., 0::2], h[..., 1::2]], dim=-1) * 0.125
        # causal and padding mask (transformers' masking_utils)
        pos = torch.arange(t)
        causal = pos[None, :] <= pos[:, None]                       # [6, 6]
        pad = mask.bool()[torch.arange(b)[:, None, None], pos[None, None, :]]
        keep = torch.full((), True) & causal[None] & pad            # [2, 6, 6]
        keep = keep & ~self.table[torch.tensor([0, -1]), :, torch.tensor([1, 1])][:, None, :]
        scores = self.query(h) @ h.transpose(1, 2)
        scores = scores.masked_fill(~keep, float("-inf"))
        # a fully masked row's softmax is NaN: the guard zeroes it
        guard = torch.logical_not(scores == float("-inf")).any(-1, keepdim=True)
        probs = torch.where(guard, scores.softmax(-1), torch.zeros_like(scores))
        h = h + probs @ h
        # stochastic depth (torchvision's and timm's: a Bernoulli per sample)
        survival = 1.0 - self.p
        noise = h.new_empty((b, 1, 1)).bernoulli_(survival) / survival
        h = h + h * noise
        # in-place dropout (torchvision's classifier)
        h = F.dropout(h, self.p, self.training, inplace=True)
        # F.pad of an activation, then of the labels (the shifted causal LM
        # labels' ignore_index)
        h = F.pad(h, (0, 0, 1, 0))[:, :t]
        g = h * 0.5
        h = h + g.as_strided((b, t, 1), (t * h.shape[-1], h.shape[-1], 1))
        logits = self.head(h)
        shifted = F.pad(labels, (0, 1), value=-100)[:, 1:]
        first = ids[:, -1:].squeeze(1).float().mean()
        return F.cross_entropy(logits.flatten(0, 1), shifted.flatten(), ignore_index=-100) \
            + 0.01 * first


def model(dropout=0.1):
    torch.manual_seed(0)
    net = Net(dropout)
    ids = torch.tensor([[3, 7, 1, 2, 9, 4], [5, 2, 9, 10, 4, 0]])
    # the second sequence padded on the left: its first query sees no key
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1]])
    labels = torch.tensor([[3, 7, 1, 2, 9, 4], [-100, 2, 9, 10, 4, 0]])
    return net, (ids, mask, labels)
