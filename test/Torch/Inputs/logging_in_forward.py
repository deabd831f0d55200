"""transformers' GPT-2 as a new user builds it: its class name does not tell
transformers which loss it has, so the loss logs a warning from inside
forward (logger.warning_once), which torch.compile cannot trace into one
graph (the zoo's gpt2 sets `loss_type`)."""
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, labels):
        return self.model(input_ids=input_ids, labels=labels, use_cache=False).loss


def model():
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=16, n_positions=4, n_embd=8, n_layer=1, n_head=1,
                        bos_token_id=15, eos_token_id=15)
    ids = torch.randint(0, 16, (1, 4))
    return LanguageModel(GPT2LMHeadModel(config)), (ids, ids)
