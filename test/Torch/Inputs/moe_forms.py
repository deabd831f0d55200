"""A mixture of experts as transformers 5 runs it by default on the CPU in
float32 (Mixtral's sparse block, experts_implementation "grouped_mm"):
the router's top-2 of 4 experts, the tokens sorted by expert, their
running counts per expert (histc, cumsum) the offsets of transformers'
grouped_mm_fallback op and of its backward op, the sort undone through
an inverse permutation written by an overwriting index_put
(inv_perm[perm] = arange); and an overwriting index_put of floats whose
indices repeat (the last position that names an element wins, as
PyTorch's CPU kernel writes in order), all with dropout."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, p):
        super().__init__()
        import transformers
        from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
        config = transformers.MixtralConfig(hidden_size=8, intermediate_size=12,
                                            num_local_experts=4, num_experts_per_tok=2)
        # what a whole model's from_config / __init__ sets by default
        config._experts_implementation = "grouped_mm"
        self.moe = MixtralSparseMoeBlock(config)
        for w in self.moe.parameters():  # torch.empty until a model initializes them
            nn.init.normal_(w, std=0.3)
        self.inp = nn.Linear(6, 8)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        h = self.drop(self.inp(x))
        out = self.moe(h)
        out = out[0] if isinstance(out, tuple) else out
        rows = out.reshape(-1, 8)
        picked = torch.tensor([3, 0, 3, 5, 0])
        last = rows.new_zeros(6, 8)
        last[picked] = rows[:5]
        return out.square().mean() + (last * torch.arange(6.0)[:, None]).sum() * 0.01


def model(dropout=0.1):
    torch.manual_seed(0)
    return Net(dropout), (torch.randn(2, 5, 6),)
