"""Small transformers, timm and torchvision models, random weights, called
the way their users call them in training (issue 44's second battery): a
causal LM on token ids with labels and no attention mask (OPT's position
ids and GPT-2's packed-sequence detection are cumsums), T5 with labels
(integer relative-position buckets), PoolFormer (group norm), Swin V2
(shifted windows: roll), wav2vec2's audio encoder (1-D convolutions,
group norm) and ViT-MAE (random masking: argsort of noise, gathers). Each factory takes `dropout` as the zoo's do."""
import torch
import torch.nn as nn

from remat_torch import zoo


class CausalLM(nn.Module):
    """The loss a causal LM computes from its labels, no attention mask."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_ids, labels):
        return self.net(input_ids=input_ids, labels=labels).loss


def _causal_lm(config, model, dropout, dropouts, **kw):
    import transformers
    torch.manual_seed(0)
    config = getattr(transformers, config)(vocab_size=96, bos_token_id=1, eos_token_id=2,
                                           pad_token_id=0, **{d: dropout for d in dropouts},
                                           **kw)
    config._attn_implementation = "eager"
    config.use_cache = False
    net = getattr(transformers, model)(config)
    net.loss_type = "ForCausalLM"
    net.train()
    ids = torch.randint(3, 96, (2, 16))
    return CausalLM(net), (ids, ids.clone())


def opt(dropout=0.1):
    """OPT: its learned positions are the attention mask's cumsum."""
    return _causal_lm("OPTConfig", "OPTForCausalLM", dropout, ("dropout", "attention_dropout"),
                      hidden_size=32, num_hidden_layers=2, ffn_dim=64, num_attention_heads=2,
                      max_position_embeddings=64, word_embed_proj_dim=32)


def gpt2(dropout=0.1):
    """GPT-2 without an attention mask: transformers looks for packed
    sequences in the position ids (a cumsum of where they restart)."""
    return _causal_lm("GPT2Config", "GPT2LMHeadModel", dropout,
                      ("resid_pdrop", "embd_pdrop", "attn_pdrop"), n_embd=32, n_layer=2,
                      n_head=2, n_positions=64)


class Seq2SeqLM(nn.Module):
    """The loss an encoder-decoder computes from its labels (the decoder's
    inputs are the labels shifted right), no attention masks."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_ids, labels):
        return self.net(input_ids=input_ids, labels=labels).loss


def t5(dropout=0.1):
    """T5: relative-position buckets in integer arithmetic (abs, min,
    where, log of the positions converted to float), bidirectional in the
    encoder, causal in the decoder."""
    import transformers
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=96, d_model=32, d_kv=16, d_ff=64, num_layers=2,
                                   num_heads=2, relative_attention_num_buckets=8,
                                   relative_attention_max_distance=16, dropout_rate=dropout,
                                   decoder_start_token_id=0, pad_token_id=0, use_cache=False)
    config._attn_implementation = "eager"
    net = transformers.T5ForConditionalGeneration(config)
    net.train()
    return Seq2SeqLM(net), (torch.randint(1, 96, (2, 16)), torch.randint(1, 96, (2, 12)))


def poolformer(dropout=0.1):
    """timm's PoolFormer (MetaFormer with pooling token mixers and
    GroupNorm1, PoolFormer-S12's layout at one block a stage, widths 8 to
    32) on 32x32 images."""
    from timm.models.metaformer import GroupNorm1, MetaFormer, Pooling
    torch.manual_seed(0)
    net = MetaFormer(depths=(1, 1, 1, 1), dims=(8, 16, 24, 32), token_mixers=Pooling,
                     norm_layers=GroupNorm1, num_classes=10, use_mlp_head=False,
                     downsample_norm=None, layer_scale_init_values=1e-5,
                     res_scale_init_values=None, drop_rate=dropout, drop_path_rate=dropout)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def swin_v2(dropout=0.1):
    """torchvision's Swin V2 (scaled cosine attention, log-spaced
    continuous position bias, res-post-norm), embedding width 16, 4x4
    windows on 32x32 images, two blocks in its first stage, the second of
    them shifted (torch.roll, whose decomposition indexes with an arange
    mod the size), one in its second."""
    from torchvision.models.swin_transformer import (PatchMergingV2, SwinTransformer,
                                                     SwinTransformerBlockV2)
    torch.manual_seed(0)
    net = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 1], num_heads=[2, 2],
                          window_size=[4, 4], num_classes=10, dropout=dropout,
                          attention_dropout=dropout, stochastic_depth_prob=dropout,
                          block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


class AudioClassifier(nn.Module):
    """Wav2Vec2ForSequenceClassification called as its users call it, with
    labels: its loss. Its Wav2Vec2Model installs output-capturing hooks on
    its first call, which the exporter installs before tracing."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_values, labels):
        return self.net(input_values, labels=labels).loss


def wav2vec2(dropout=0.1):
    """wav2vec2's audio encoder: strided 1-D convolutions with group norm
    (feat_extract_norm="group") and GELU on the raw signal, the grouped
    positional convolution (weight norm), two transformer layers, width
    32, on 2 x 400 samples; no time masking."""
    import transformers
    torch.manual_seed(0)
    config = transformers.Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, mask_time_prob=0.0,
        hidden_dropout=dropout, attention_dropout=dropout, activation_dropout=dropout,
        feat_proj_dropout=dropout, layerdrop=0.0, num_labels=4, classifier_proj_size=16)
    config._attn_implementation = "eager"
    net = transformers.Wav2Vec2ForSequenceClassification(config)
    net.train()
    # The feature encoder sets requires_grad on the raw signal (for
    # reentrant checkpointing), which torch.compile does not trace; its
    # parameters still require grad without it.
    net.wav2vec2.feature_extractor._requires_grad = False
    return AudioClassifier(net), (torch.randn(2, 400), torch.randint(0, 4, (2,)))


class MaskedAutoencoder(nn.Module):
    """ViTMAEForPreTraining's loss (the masked patches' reconstruction).
    With dropout, the masking noise is torch.rand, as its users train it;
    without, the given noise, so that PyTorch's step is the same."""

    def __init__(self, net, given_noise):
        super().__init__()
        self.net, self.given_noise = net, given_noise

    def forward(self, pixel_values, noise):
        return self.net(pixel_values=pixel_values,
                        noise=noise if self.given_noise else None).loss


def vit_mae(dropout=0.1):
    """ViT-MAE (transformers' ViTMAEForPreTraining): 8x8 patches of 32x32
    images, 75% of them masked at random (argsort of the noise, argsort of
    that to restore the order, gathers of the kept patches with a repeated
    index and of the mask), width 32, two encoder layers and one decoder
    layer."""
    import transformers
    torch.manual_seed(0)
    config = transformers.ViTMAEConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        image_size=32, patch_size=8, num_channels=3, decoder_hidden_size=16,
        decoder_num_hidden_layers=1, decoder_num_attention_heads=2,
        decoder_intermediate_size=32, mask_ratio=0.75, hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout)
    config._attn_implementation = "eager"
    net = transformers.ViTMAEForPreTraining(config)
    net.train()
    return MaskedAutoencoder(net, dropout == 0), (torch.randn(2, 3, 32, 32), torch.rand(2, 16))


class GoogLeNetLoss(nn.Module):
    """GoogLeNet trained as its paper and torchvision's reference script
    train it: the cross-entropy of its logits plus 0.3 times each auxiliary
    classifier's."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, labels):
        out = self.net(x)
        return (nn.functional.cross_entropy(out.logits, labels)
                + 0.3 * nn.functional.cross_entropy(out.aux_logits1, labels)
                + 0.3 * nn.functional.cross_entropy(out.aux_logits2, labels))


def googlenet(dropout=0.1):
    """torchvision's GoogLeNet (Inception v1 with batch norm, both
    auxiliary classifiers) on 2 x 64x64 images: ceil-mode max pooling with
    window ties, batch norms over 8 values in its last stage. float32
    rounding moves a ReLU input across 0 inside a max-pooling tie, so
    it is checked in float64 (models-as-called-float64.test)."""
    import torchvision
    torch.manual_seed(0)
    net = torchvision.models.GoogLeNet(num_classes=10, aux_logits=True, init_weights=True,
                                       dropout=dropout, dropout_aux=dropout)
    return GoogLeNetLoss(net), zoo._images(2, 64, 10)


class Segmentation(nn.Module):
    """A segmentation model's training loss: the per-pixel cross-entropy of
    its "out" map against int64 labels, plus 0.5 of its auxiliary head's
    where it has one (torchvision's reference script)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, labels):
        out = self.net(x)
        loss = nn.functional.cross_entropy(out["out"], labels)
        if "aux" in out:
            loss = loss + 0.5 * nn.functional.cross_entropy(out["aux"], labels)
        return loss


def deeplabv3(dropout=0.1):
    """torchvision's DeepLabV3 on a MobileNetV3-Large backbone (dilated
    last stage, hard swish, squeeze-and-excitation), 4 classes, on 2 x
    64x64 images: its ASPP's image pooling normalizes a batch of 2 pooled
    values, where eager float32 itself is far from float64, so it is
    checked in float64 (models-as-called-float64.test). Its ASPP's and
    head's dropout is the model's own (p = 0.5 and 0.1 in torchvision),
    left as built: `dropout` 0 sets them to 0."""
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
    torch.manual_seed(0)
    net = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4)
    if dropout == 0:
        for m in net.modules():
            if isinstance(m, nn.Dropout):
                m.p = 0.0
    x = torch.randn(2, 3, 64, 64)
    return Segmentation(net), (x, torch.randint(0, 4, (2, 64, 64)))
