"""A mixture of experts as transformers' Switch Transformers (and Mixtral's
eager experts) computes it: a loop over the experts its router picked
(nonzero of the routing mask), each on the tokens routed to it (where), its
results added back with index_add_. The loop's trip count and each
expert's batch depend on the router's values."""
import torch
import torch.nn as nn


class ExpertLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 3)
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        picked = nn.functional.one_hot(self.router(x).argmax(-1), 3)
        out = torch.zeros_like(x)
        hit = picked.sum(0).nonzero()
        for expert in hit:
            (tokens,) = torch.where(picked[:, expert[0]])
            out.index_add_(0, tokens, self.experts[expert[0]](x[tokens]))
        return out.square().mean()


def model():
    torch.manual_seed(0)
    return ExpertLoop(), (torch.randn(8, 4),)


class ChecksLabels(nn.Module):
    """A classifier that checks its labels against its vocabulary before
    computing the loss, as Wav2Vec2ForCTC does: a branch on a tensor's
    value."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 5)

    def forward(self, x, labels):
        if labels.max() >= 5:
            raise ValueError("label values must be < vocab_size")
        return nn.functional.cross_entropy(self.head(x), labels)


def checks_labels():
    torch.manual_seed(0)
    return ChecksLabels(), (torch.randn(8, 4), torch.randint(0, 5, (8,)))
