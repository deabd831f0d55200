"""remat's model zoo for the PyTorch front end: small, CPU-sized models with
torch.utils.checkpoint regions where their authors would put them.

A factory returns `(model, inputs)`: `model(*inputs)` is the scalar training
loss, `model.named_parameters()` the trained parameters. Every factory takes
`dropout` (the probability; 0 for comparisons with PyTorch's eager gradients,
whose CPU generator is not Philox) and `checkpoint` (False runs the same model
without any torch.utils.checkpoint call, for bench/peers), except the scanned
models (SCANNED), which have no checkpoint region: torch 2.15 cannot trace a
scan inside one. Inputs are drawn from a fixed seed, so an export is
reproducible.
"""

import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                    create_selective_checkpoint_contexts)


def mse(y, target):
    return 0.5 * ((y - target) ** 2).mean()


class _Checkpointed(nn.Module):
    def __init__(self, use_checkpoint):
        super().__init__()
        self.use_checkpoint = use_checkpoint

    def ckpt(self, fn, *args, context_fn=None):
        if not self.use_checkpoint:
            return fn(*args)
        if context_fn is None:
            return checkpoint(fn, *args, use_reentrant=False)
        return checkpoint(fn, *args, use_reentrant=False, context_fn=context_fn)


def save_matmuls(ctx, op, *args, **kwargs):
    """Selective checkpointing policy: keep the matmuls' results (expensive
    to recompute), recompute everything else (cheap elementwise ops)."""
    if op in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default,
              torch.ops.aten.bmm.default):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


def save_dots(ctx, op, *args, **kwargs):
    """Selective checkpointing policy of JAX's dots_saveable: keep the
    matmuls' and convolutions' results, recompute everything else."""
    if op is torch.ops.aten.convolution.default:
        return CheckpointPolicy.MUST_SAVE
    return save_matmuls(ctx, op, *args, **kwargs)


def selective(policy):
    return functools.partial(create_selective_checkpoint_contexts, policy)


# -- MLP with dropout ---------------------------------------------------------

class MLP(_Checkpointed):
    """h <- dropout(tanh(Linear(h))) for the hidden layers, a linear head.
    Layers 0-1 are one checkpoint, layer 2 another (checkpoint_sequential's
    layout), the head is not checkpointed."""

    def __init__(self, widths, p, use_checkpoint):
        super().__init__(use_checkpoint)
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.p = p

    def hidden(self, i, h):
        return F.dropout(torch.tanh(self.layers[i](h)), self.p, self.training)

    def forward(self, x, target):
        h = self.ckpt(lambda h: self.hidden(1, self.hidden(0, h)), x)
        h = self.ckpt(lambda h: self.hidden(2, h), h)
        return mse(self.layers[3](h), target)


def mlp(dropout=0.1, checkpoint=True, batch=64, widths=(64, 128, 128, 128, 32)):
    torch.manual_seed(0)
    model = MLP(widths, dropout, checkpoint)
    x = torch.randn(batch, widths[0])
    target = torch.randn(batch, widths[-1])
    return model, (x, target)


# -- GPT-style transformer block ----------------------------------------------

class GPTBlock(_Checkpointed):
    """Pre-norm GPT block: h = x + drop(attn(ln1(x))), out = h +
    drop(mlp(ln2(h))), causal attention with dropout on the probabilities,
    GELU (tanh) MLP. The attention is a plain checkpoint; the MLP a
    selective one that saves its matmuls (save_matmuls)."""

    def __init__(self, seq, width, heads, p, use_checkpoint):
        super().__init__(use_checkpoint)
        self.heads = heads
        self.p = p
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)
        # 0 where a position may attend, -inf above the diagonal.
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("causal", mask)

    def attention(self, x):
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, d).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d)) + self.causal
        probs = F.dropout(F.softmax(scores, dim=-1), self.p, self.training)
        y = (probs @ v).transpose(1, 2).reshape(b, t, c)
        return F.dropout(self.proj(y), self.p, self.training)

    def mlp(self, h):
        z = F.gelu(self.fc(self.ln2(h)), approximate="tanh")
        return F.dropout(self.out(z), self.p, self.training)

    def forward(self, x, target):
        h = x + self.ckpt(self.attention, x)
        out = h + self.ckpt(self.mlp, h, context_fn=selective(save_matmuls))
        return mse(out, target)


def gpt_block(dropout=0.1, checkpoint=True, batch=4, seq=32, width=64, heads=4):
    torch.manual_seed(0)
    model = GPTBlock(seq, width, heads, dropout, checkpoint)
    x = torch.randn(batch, seq, width)
    target = torch.randn(batch, seq, width)
    return model, (x, target)


# -- DenseNet block -------------------------------------------------------------

class DenseBlock(_Checkpointed):
    """DenseNet block on feature vectors (dense layers, as
    examples/densenet.mlir): each layer computes new = dropout(relu(
    Linear(norm(F)))) from the whole feature map F and concatenates it,
    F <- [F, new]. The norm + linear + relu of each layer is a checkpoint
    (the memory-efficient DenseNet's bottleneck checkpoint); the
    concatenations are not."""

    def __init__(self, channels, growth, layers, p, use_checkpoint):
        super().__init__(use_checkpoint)
        self.p = p
        self.norms = nn.ModuleList(nn.LayerNorm(channels + i * growth)
                                   for i in range(layers))
        self.linears = nn.ModuleList(nn.Linear(channels + i * growth, growth)
                                     for i in range(layers))

    def layer(self, i, f):
        return torch.relu(self.linears[i](self.norms[i](f)))

    def forward(self, x, target):
        f = x
        for i in range(len(self.linears)):
            new = self.ckpt(functools.partial(self.layer, i), f)
            f = torch.cat([f, F.dropout(new, self.p, self.training)], dim=1)
        return mse(f, target)


def densenet_block(dropout=0.1, checkpoint=True, batch=64, channels=32, growth=16,
                   layers=4):
    torch.manual_seed(0)
    model = DenseBlock(channels, growth, layers, dropout, checkpoint)
    x = torch.randn(batch, channels)
    target = torch.randn(batch, channels + layers * growth)
    return model, (x, target)


# -- ResNet basic block ---------------------------------------------------------

class BasicBlock(_Checkpointed):
    """ResNet basic block (He et al.), NCHW: out = relu(x + bn2(conv2(
    relu(bn1(conv1(x)))))), 3x3 convolutions with stride 1 and padding 1,
    batch norm in training mode (batch statistics; running statistics
    updated). Each conv + batch norm (+ relu) is a checkpoint; the residual
    add and the last relu are not. Dropout `p` between the two convolutions
    as in Wide ResNets (Zagoruyko and Komodakis; p=0 is He et al.'s block)."""

    def __init__(self, channels, p, use_checkpoint):
        super().__init__(use_checkpoint)
        self.p = p
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def branch1(self, x):
        return F.dropout(torch.relu(self.bn1(self.conv1(x))), self.p, self.training)

    def branch2(self, h):
        return self.bn2(self.conv2(h))

    def forward(self, x, target):
        h = self.ckpt(self.branch1, x)
        out = torch.relu(x + self.ckpt(self.branch2, h))
        return mse(out, target)


def resnet_block(dropout=0.1, checkpoint=True, batch=4, channels=8, size=8):
    torch.manual_seed(0)
    model = BasicBlock(channels, dropout, checkpoint)
    x = torch.randn(batch, channels, size, size)
    target = torch.randn(batch, channels, size, size)
    return model, (x, target)




# -- torchvision models -----------------------------------------------------------

class Classifier(nn.Module):
    """An image classifier's training loss: the cross-entropy of model(x)
    against int64 class labels."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, labels):
        return F.cross_entropy(self.model(x), labels)


class CheckpointedStage(nn.Module):
    """A stage of a model run under torch.utils.checkpoint, as a user
    checkpoints the stages of a model they did not write."""

    def __init__(self, stage, policy=None):
        super().__init__()
        self.stage = stage
        self.policy = policy

    def forward(self, x):
        if self.policy is None:
            return checkpoint(self.stage, x, use_reentrant=False)
        return checkpoint(self.stage, x, use_reentrant=False,
                          context_fn=selective(self.policy))


def _images(batch, size, classes):
    x = torch.randn(batch, 3, size, size)
    labels = torch.randint(0, classes, (batch,))
    return x, labels


def resnet18(dropout=0.1, checkpoint=True, batch=2, size=64, classes=10):
    """torchvision's ResNet-18 (random weights, train mode) on size x size
    images, with dropout before the classifier (as torchvision's MobileNet
    and EfficientNet have) and each of its four residual stages a
    checkpoint. 64 x 64 keeps 2 x 2 positions at the last stage: at 32 x 32
    the last batch norms normalize 2 values each, which amplifies rounding
    past 1e-4."""
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=classes)
    net.fc = nn.Sequential(nn.Dropout(dropout), net.fc)
    if checkpoint:
        for name in ("layer1", "layer2", "layer3", "layer4"):
            setattr(net, name, CheckpointedStage(getattr(net, name)))
    return Classifier(net), _images(batch, size, classes)


def mobilenet_v2(dropout=0.2, checkpoint=True, batch=2, size=32, classes=10,
                 width=0.5, blocks=((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 1, 2))):
    """torchvision's MobileNetV2 (depthwise convolutions, ReLU6, dropout in
    its classifier) at width multiplier `width` with the inverted-residual
    stages `blocks` (expansion, channels, repeats, stride: the first three of
    the paper's seven by default, which keep the stride-2 and residual
    blocks while the LLVM JIT compiles the step in seconds), each block a
    checkpoint."""
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.mobilenet_v2(num_classes=classes, width_mult=width,
                                          dropout=dropout,
                                          inverted_residual_setting=[list(b) for b in blocks])
    if checkpoint:
        for i in range(1, len(net.features) - 1):
            net.features[i] = CheckpointedStage(net.features[i])
    return Classifier(net), _images(batch, size, classes)


def densenet121(dropout=0.1, checkpoint=True, batch=2, size=32, classes=10, growth=8,
                blocks=(2, 2), init_features=16, bn_size=2):
    """torchvision's DenseNet as densenet121 builds it (dense blocks of
    BN-ReLU-1x1-BN-ReLU-3x3 layers concatenating their inputs, transitions
    with average pooling, dropout after each layer at `drop_rate`), scaled
    down: growth rate `growth`, dense blocks of `blocks` layers (densenet121:
    32, (6, 12, 24, 16)). With checkpoint, memory_efficient=True: each
    layer's concatenation and bottleneck run under the model's own
    torch.utils.checkpoint, which the exporter turns into segments."""
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.DenseNet(growth_rate=growth, block_config=blocks,
                                      num_init_features=init_features, bn_size=bn_size,
                                      drop_rate=dropout, num_classes=classes,
                                      memory_efficient=checkpoint)
    return Classifier(net), _images(batch, size, classes)


def vit(dropout=0.1, checkpoint=True, batch=2, size=32, classes=10, patch=8, layers=2,
        heads=2, width=32):
    """torchvision's VisionTransformer (patch embedding as a strided
    convolution, class token, learned positions, nn.MultiheadAttention,
    exact-GELU MLP, dropout and attention dropout) on size x size images,
    each encoder layer a checkpoint."""
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.VisionTransformer(
        image_size=size, patch_size=patch, num_layers=layers, num_heads=heads,
        hidden_dim=width, mlp_dim=2 * width, dropout=dropout, attention_dropout=dropout,
        num_classes=classes)
    if checkpoint:
        for i, layer in enumerate(net.encoder.layers):
            net.encoder.layers[i] = CheckpointedStage(layer)
    return Classifier(net), _images(batch, size, classes)


def efficientnet_b0(dropout=0.2, checkpoint=True, batch=2, size=32, classes=10, width=0.5,
                    stages=3):
    """torchvision's EfficientNet-B0 (MBConv blocks: depthwise convolutions,
    squeeze-and-excitation, SiLU, stochastic depth on the residual branches,
    dropout in its classifier) at width multiplier `width` with its first
    `stages` stages of seven (the first three keep a stride-2 and a
    residual block with a 5x5 depthwise convolution while the LLVM JIT
    compiles the step in seconds), each block a checkpoint. Its stochastic
    depth probability is `dropout` too (torchvision's default is 0.2 for
    both), so that dropout 0 draws nothing at random."""
    import torchvision
    from torchvision.models import efficientnet
    torch.manual_seed(0)
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=width,
                                                     depth_mult=1.0)
    net = efficientnet.EfficientNet(setting[:stages], dropout=dropout,
                                    stochastic_depth_prob=dropout,
                                    num_classes=classes, last_channel=last)
    if checkpoint:
        for i in range(1, len(net.features) - 1):
            net.features[i] = CheckpointedStage(net.features[i])
    return Classifier(net), _images(batch, size, classes)


def convnext(dropout=0.1, checkpoint=True, batch=2, size=32, classes=10,
             depths=(1, 1, 1, 1), dims=(16, 24, 32, 48)):
    """timm's ConvNeXt (patchify stem, 7x7 depthwise convolutions,
    channels-last LayerNorm, GELU MLP, layer scale, stochastic depth) with
    `depths` blocks of `dims` channels per stage (convnext_atto's layout
    with one block each), dropout before its head and stochastic depth
    (drop path) at rate `dropout`; checkpointed by timm's own
    set_grad_checkpointing (each stage's blocks under
    torch.utils.checkpoint)."""
    import timm
    torch.manual_seed(0)
    net = timm.create_model("convnext_atto", pretrained=False, num_classes=classes,
                            depths=depths, dims=dims, drop_rate=dropout,
                            drop_path_rate=dropout)
    net.set_grad_checkpointing(checkpoint)
    return Classifier(net), _images(batch, size, classes)


# -- Hugging Face transformers ------------------------------------------------------

class LanguageModel(nn.Module):
    """A transformers language model's training loss: the loss it computes
    itself from `labels` (shifted causal LM, or masked LM with -100 on the
    positions not predicted), without a KV cache."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, labels):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          labels=labels, use_cache=False).loss


def _language_model(net, checkpoint, batch, seq, vocab, masked=False, policy=None):
    """`net` in train mode with every layer a torch.utils.checkpoint when
    `checkpoint` (transformers' own activation checkpointing, which
    calls it with use_reentrant=False; a selective one of `policy`, a
    selective-checkpoint policy function, when given), token ids, an attention mask whose
    second sequence is padded at its end, and labels: the ids (the model
    shifts them) or, for a masked LM, the ids of every third position with
    -100 elsewhere; padded positions are -100 in both."""
    if checkpoint:
        kwargs = {"use_reentrant": False}
        if policy is not None:
            kwargs["context_fn"] = selective(policy)
        if hasattr(net, "activation_checkpointing_enable"):
            net.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:  # transformers before 5.20
            net.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    ids = torch.randint(1, vocab, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[1:, seq - seq // 4:] = 0
    labels = ids.clone()
    if masked:
        labels[:, torch.arange(seq) % 3 != 0] = -100
    labels[mask == 0] = -100
    return LanguageModel(net), (ids, mask, labels)


def gpt2(dropout=0.1, checkpoint=True, batch=2, seq=16, vocab=96, width=32, layers=2,
         heads=2, positions=None, policy=None):
    """transformers' GPT-2 (causal LM head tied to the token embedding, tanh
    GELU, eager attention) in a tiny configuration, random weights."""
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=vocab, n_positions=positions or seq, n_embd=width, n_layer=layers,
                        n_head=heads, resid_pdrop=dropout, embd_pdrop=dropout,
                        attn_pdrop=dropout, use_cache=False, bos_token_id=vocab - 1,
                        eos_token_id=vocab - 1)
    config._attn_implementation = "eager"
    net = GPT2LMHeadModel(config)
    # Its class name does not tell transformers which loss it has: without
    # this, the loss logs a warning from inside forward, which torch.compile
    # cannot trace.
    net.loss_type = "ForCausalLM"
    return _language_model(net, checkpoint, batch, seq, vocab, policy=policy)


def bert(dropout=0.1, checkpoint=True, batch=2, seq=16, vocab=96, width=32, layers=2,
         heads=2):
    """transformers' BERT with its masked-LM head (exact GELU, eager
    attention) in a tiny configuration, random weights."""
    from transformers import BertConfig, BertForMaskedLM
    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab, hidden_size=width, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=4 * width,
                        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                        max_position_embeddings=seq, use_cache=False)
    config._attn_implementation = "eager"
    return _language_model(BertForMaskedLM(config), checkpoint, batch, seq, vocab,
                           masked=True)


def llama(dropout=0.1, checkpoint=True, batch=2, seq=16, vocab=96, width=32, layers=2,
          heads=4, kv_heads=2):
    """transformers' Llama (RMSNorm, rotary embeddings, SiLU-gated MLP,
    grouped-query attention with `kv_heads` key / value heads, eager
    attention) in a tiny configuration, random weights; its only dropout is
    the attention probabilities'."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab, hidden_size=width, intermediate_size=2 * width,
                         num_hidden_layers=layers, num_attention_heads=heads,
                         num_key_value_heads=kv_heads, max_position_embeddings=seq,
                         attention_dropout=dropout, use_cache=False, bos_token_id=1,
                         eos_token_id=2)
    config._attn_implementation = "eager"
    return _language_model(LlamaForCausalLM(config), checkpoint, batch, seq, vocab)


# -- Real size: the models and sizes people train --------------------------------
# Not run by CI's tests (a step is gigabytes); bench/compile_time,
# bench/cuda_peers and bench/peers export them.

def gpt2_small(dropout=0.1, checkpoint=True, batch=4, seq=512, layers=12, policy=None):
    """transformers' GPT-2 small (12 layers of width 768, 12 heads, the
    50257-token vocabulary, 1024 positions) at batch x seq, random weights,
    each layer a checkpoint when `checkpoint` (transformers' own
    activation checkpointing; selective under `policy` when given)."""
    return gpt2(dropout=dropout, checkpoint=checkpoint, batch=batch, seq=seq,
                vocab=50257, width=768, layers=layers, heads=12, positions=1024,
                policy=policy)


def resnet50(dropout=0.0, checkpoint=True, batch=32, size=224, classes=1000,
             policy=None):
    """torchvision's ResNet-50 (random weights, train mode, 1000 classes) on
    batch x 3 x size x size images, each of its four residual stages a
    checkpoint when `checkpoint` (selective under `policy` when given).
    torchvision's ResNet has no dropout; `dropout` > 0 adds one before the
    classifier, as resnet18 does."""
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.resnet50(num_classes=classes)
    if dropout:
        net.fc = nn.Sequential(nn.Dropout(dropout), net.fc)
    if checkpoint:
        for name in ("layer1", "layer2", "layer3", "layer4"):
            setattr(net, name, CheckpointedStage(getattr(net, name), policy))
    return Classifier(net), _images(batch, size, classes)


REAL_SIZE = {"gpt2_small": gpt2_small, "resnet50": resnet50}


# -- Breadth: other models of the three libraries, built the same way ---------------
# Not written for remat: library defaults at small sizes, checked by
# test/Torch/zoo-breadth.test (scripts/test --breadth; too long for CI).

def _torchvision(name, size=64, **kw):
    import torchvision
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(num_classes=10, **kw)
    return Classifier(net), _images(2, size, 10)


def shufflenet_v2(dropout=0.1, checkpoint=True):
    """torchvision's ShuffleNetV2 x0.5 (channel shuffle, split, concat);
    it has no dropout and no checkpoints of its own."""
    return _torchvision("shufflenet_v2_x0_5")


def squeezenet(dropout=0.1, checkpoint=True):
    """torchvision's SqueezeNet 1.1 (fire modules, dropout before its
    convolutional classifier, ceil-mode max pooling)."""
    return _torchvision("squeezenet1_1", dropout=dropout)


def regnet_y(dropout=0.1, checkpoint=True):
    """torchvision's RegNetY-400MF (grouped convolutions, squeeze and
    excitation)."""
    return _torchvision("regnet_y_400mf")


def mnasnet(dropout=0.1, checkpoint=True):
    """torchvision's MNASNet 0.5 (depthwise separable blocks, dropout in
    its classifier)."""
    return _torchvision("mnasnet0_5", dropout=dropout)


def swin(dropout=0.1, checkpoint=True):
    """torchvision's SwinTransformer at embedding width 16, two stages of
    one block, 4x4 windows on 32x32 images (shifted windows: roll, masks,
    relative position bias; patch merging: strided slices), dropout,
    attention dropout and stochastic depth at `dropout`."""
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    net = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2],
                          window_size=[4, 4], num_classes=10, dropout=dropout,
                          attention_dropout=dropout, stochastic_depth_prob=dropout)
    return Classifier(net), _images(2, 32, 10)


def _timm(name, dropout, **kw):
    import timm
    torch.manual_seed(0)
    net = timm.create_model(name, pretrained=False, num_classes=10, drop_rate=dropout, **kw)
    return Classifier(net), _images(2, 32, 10)


def timm_resnet(dropout=0.1, checkpoint=True):
    """timm's resnet10t (deep tiered stem, average-pool downsampling)."""
    return _timm("resnet10t", dropout)


def timm_vit(dropout=0.1, checkpoint=True):
    """timm's ViT-Tiny layout at depth 2 on 32x32 images, 8x8 patches."""
    return _timm("vit_tiny_patch16_224", dropout, img_size=32, patch_size=8, depth=2,
                 attn_drop_rate=dropout)


def timm_mobilenetv3(dropout=0.1, checkpoint=True):
    """timm's MobileNetV3-Small 0.5 (hard swish, hard sigmoid, squeeze and
    excitation)."""
    return _timm("mobilenetv3_small_050", dropout)


def _transformers(config, model, dropout, checkpoint, dropouts, masked=False, **kw):
    import transformers
    torch.manual_seed(0)
    config = getattr(transformers, config)(vocab_size=96, **{d: dropout for d in dropouts},
                                           **kw)
    config._attn_implementation = "eager"
    net = getattr(transformers, model)(config)
    return _language_model(net, checkpoint, 2, 16, 96, masked=masked)


def distilbert(dropout=0.1, checkpoint=True):
    """transformers' DistilBERT with its masked-LM head, 2 layers, width 32."""
    return _transformers("DistilBertConfig", "DistilBertForMaskedLM", dropout, checkpoint,
                         ("dropout", "attention_dropout"), masked=True, dim=32, n_layers=2,
                         n_heads=2, hidden_dim=64)


def mistral(dropout=0.1, checkpoint=True):
    """transformers' Mistral (grouped-query attention, rotary embeddings,
    SwiGLU), 2 layers, width 32."""
    return _transformers("MistralConfig", "MistralForCausalLM", dropout, checkpoint,
                         ("attention_dropout",), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def qwen2(dropout=0.1, checkpoint=True):
    """transformers' Qwen2 (biased q/k/v projections), 2 layers, width 32."""
    return _transformers("Qwen2Config", "Qwen2ForCausalLM", dropout, checkpoint,
                         ("attention_dropout",), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def gpt_neo(dropout=0.1, checkpoint=True):
    """transformers' GPT-Neo with a global and a local (window 8)
    attention layer, width 32."""
    return _transformers("GPTNeoConfig", "GPTNeoForCausalLM", dropout, checkpoint,
                         ("embed_dropout", "attention_dropout", "resid_dropout"),
                         hidden_size=32, num_layers=2, num_heads=2,
                         attention_types=[[["global", "local"], 1]],
                         max_position_embeddings=64, window_size=8)


# -- Scanned models (torch's scan over stacked layer parameters) -----------------

class ScanMLP(nn.Module):
    """`layers` identical layers h <- dropout(tanh(h W[i] + b[i])) written as
    one torch scan over the stacked W and b (the exporter's scf.for), then a
    linear head."""

    def __init__(self, layers, width, out, p):
        super().__init__()
        self.p = p
        self.W = nn.Parameter(torch.randn(layers, width, width) / math.sqrt(width))
        self.b = nn.Parameter(0.1 * torch.randn(layers, width))
        self.head = nn.Linear(width, out)

    def layer(self, h, wb):
        w, b = wb
        return F.dropout(torch.tanh(h @ w + b), self.p, self.training), ()

    def forward(self, x, target):
        from torch._higher_order_ops.scan import scan
        h, _ = scan(self.layer, x, (self.W, self.b))
        return mse(self.head(h), target)


def scan_mlp(dropout=0.1, layers=64, batch=16, width=32, out=8):
    torch.manual_seed(0)
    model = ScanMLP(layers, width, out, dropout)
    x = torch.randn(batch, width)
    target = torch.randn(batch, out)
    return model, (x, target)


class ScanGPT(nn.Module):
    """A stack of `layers` identical pre-norm GPT blocks (GPTBlock's layer:
    causal attention with dropout on the probabilities and after the
    projection, GELU (tanh) MLP) whose parameters are stacked along a
    leading layer dimension and scanned over, then a final layer norm."""

    NAMES = ("ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w", "proj_b", "ln2_w", "ln2_b",
             "fc_w", "fc_b", "out_w", "out_b")

    def __init__(self, layers, seq, width, heads, p):
        super().__init__()
        self.heads, self.p = heads, p
        c = width
        shapes = {"ln1_w": (c,), "ln1_b": (c,), "qkv_w": (c, 3 * c), "qkv_b": (3 * c,),
                  "proj_w": (c, c), "proj_b": (c,), "ln2_w": (c,), "ln2_b": (c,),
                  "fc_w": (c, 4 * c), "fc_b": (4 * c,), "out_w": (4 * c, c),
                  "out_b": (c,)}
        for name in self.NAMES:
            shape = (layers,) + shapes[name]
            if name.endswith("_w") and name.startswith("ln"):
                value = 1 + 0.1 * torch.randn(shape)
            elif name.endswith("_w"):
                value = torch.randn(shape) / math.sqrt(shape[1])
            else:
                value = 0.1 * torch.randn(shape)
            setattr(self, name, nn.Parameter(value))
        self.ln_f = nn.LayerNorm(width)
        self.register_buffer("causal", torch.full((seq, seq), float("-inf")).triu(1))

    def block(self, x, params):
        p = dict(zip(self.NAMES, params))
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = (F.layer_norm(x, (c,), p["ln1_w"], p["ln1_b"]) @ p["qkv_w"]
                   + p["qkv_b"]).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, d).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d)) + self.causal
        probs = F.dropout(F.softmax(scores, dim=-1), self.p, self.training)
        y = (probs @ v).transpose(1, 2).reshape(b, t, c)
        h = x + F.dropout(y @ p["proj_w"] + p["proj_b"], self.p, self.training)
        z = F.gelu(F.layer_norm(h, (c,), p["ln2_w"], p["ln2_b"]) @ p["fc_w"] + p["fc_b"],
                   approximate="tanh")
        return h + F.dropout(z @ p["out_w"] + p["out_b"], self.p, self.training), ()

    def forward(self, x, target):
        from torch._higher_order_ops.scan import scan
        h, _ = scan(self.block, x, tuple(getattr(self, n) for n in self.NAMES))
        return mse(self.ln_f(h), target)


def scan_gpt(dropout=0.1, layers=4, batch=2, seq=16, width=32, heads=4):
    torch.manual_seed(0)
    model = ScanGPT(layers, seq, width, heads, dropout)
    x = torch.randn(batch, seq, width)
    target = torch.randn(batch, seq, width)
    return model, (x, target)


SCANNED = {"scan_mlp": scan_mlp, "scan_gpt": scan_gpt}


BREADTH = {"shufflenet_v2": shufflenet_v2, "squeezenet": squeezenet, "regnet_y": regnet_y,
           "mnasnet": mnasnet, "swin": swin, "timm_resnet": timm_resnet,
           "timm_vit": timm_vit, "timm_mobilenetv3": timm_mobilenetv3,
           "distilbert": distilbert, "mistral": mistral, "qwen2": qwen2, "gpt_neo": gpt_neo}


ZOO = {"mlp": mlp, "gpt_block": gpt_block, "densenet_block": densenet_block,
       "resnet_block": resnet_block, "resnet18": resnet18, "mobilenet_v2": mobilenet_v2,
       "densenet121": densenet121,
       "gpt2": gpt2, "bert": bert, "llama": llama, "vit": vit,
       "efficientnet_b0": efficientnet_b0, "convnext": convnext,
       "gpt2_small": gpt2_small, "resnet50": resnet50}


# bench/peers' and bench/cuda_peers' sizes: larger than the test sizes,
# still a few seconds per model.
BENCH_SIZES = {
    "mlp": dict(batch=1024, widths=(256, 1024, 1024, 1024, 256)),
    "gpt_block": dict(batch=8, seq=128, width=128, heads=4),
    "densenet_block": dict(batch=1024, channels=64, growth=32, layers=6),
    "resnet_block": dict(batch=16, channels=32, size=16),
    # torchvision's models at their test sizes: the LLVM JIT's compile time
    # of a whole network, not the step, bounds these.
    "resnet18": dict(batch=2, size=64),
    "mobilenet_v2": dict(batch=2, size=32),
    # transformers', torchvision's and timm's models of issue 18 at their
    # test sizes (the factories' defaults), bounded by the compile too.
    "gpt2": dict(), "bert": dict(), "llama": dict(), "vit": dict(),
    "efficientnet_b0": dict(), "convnext": dict(),
    # The real-size models (REAL_SIZE) at the sizes this 2-core machine runs
    # in seconds a step; bench/peers runs them when named.
    "gpt2_small": dict(batch=1, seq=128), "resnet50": dict(batch=2, size=224),
}
