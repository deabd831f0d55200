"""Tensors of no elements and argmax, as transformers' models make them:
a key cache that starts as `torch.tensor([])` and is joined to the keys
with torch.cat (the cache every attention layer makes when `use_cache` is
on, GPT2ForSequenceClassification's default), the empty part of a head a
full rotary embedding leaves alone (x[..., 8:] of an 8-wide head, joined
back with cat; its gradient a slice_scatter of nothing), a reshape and a
product of that empty part, and the index of the last token that is not
padding (argmax of position times mask, integers) read by a gather, as
sequence classifiers pool; argmin along a dimension and over all
elements (the first one where tied); histc, as a mixture of experts'
load-balancing loss counts the tokens its router sends each expert, and
of values falling on edges and outside; all with dropout."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8) * 0.3)
        self.head = nn.Parameter(torch.randn(8, 3) * 0.3)
        self.drop = nn.Dropout(p)

    def forward(self, x, ids):
        cache = torch.tensor([], dtype=x.dtype)
        k = torch.cat([cache, self.drop(x @ self.w)], dim=-2)
        rot, rest = k[..., :8], k[..., 8:]
        rest = rest.reshape(2, 5, 2, 0) * 2.0
        h = torch.cat([torch.tanh(rot), rest.reshape(2, 5, 0)], dim=-1)
        last = (torch.arange(5) * (ids != 0)).argmax(-1)
        pooled = h[torch.arange(2), last] @ self.head
        first_low = h.argmin(dim=1, keepdim=True).float()
        lowest = h.argmin().float()
        # tokens per expert, as a mixture of experts' load-balancing loss
        # counts them (histc of the router's picks as floats; values on the
        # edges, the last bin closed, one below min and one above max)
        picks = (h @ self.head).argmax(-1).float()
        counts = torch.histc(torch.cat([picks.flatten(), torch.tensor([-1.0, 1.5, 2.0, 9.0])]),
                             bins=3, min=0, max=2)
        # Mixtral's form: expert indices on the interior edges of 4 bins
        # over [0, 4], each in the bin it opens
        counts = counts + torch.histc(picks.flatten() + 1, bins=4, min=0, max=4)[1:]
        spread = torch.histc(h.detach(), bins=5, min=-0.5, max=0.75)
        share = (nn.functional.softmax(h @ self.head, -1).mean((0, 1)) * counts).sum()
        return pooled.pow(2).mean() + (first_low * h.mean(1, keepdim=True)).mean() + \
            lowest * h.sum() * 1e-3 + share * 0.1 + (spread * h.mean()).sum() * 0.01


def model(dropout=0.1):
    torch.manual_seed(0)
    ids = torch.tensor([[5, 7, 9, 0, 0], [3, 0, 4, 8, 2]])
    return Net(dropout), (torch.randn(2, 5, 8), ids)


class SumsNothing(nn.Module):
    """The sum of an empty slice (0.0): remat holds no tensor of no
    elements, so the exporter rejects its reader."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        h = x @ self.w
        return h.mean() + h[:, 4:].sum()


def reads_empty():
    torch.manual_seed(0)
    return SumsNothing(), (torch.randn(3, 4),)
