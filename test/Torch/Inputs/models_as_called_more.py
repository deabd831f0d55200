"""Other models of issue 44's families (models_as_called.py's second
battery), random weights, small configurations, train mode, called the way
their users call them: causal LMs with labels and no attention mask
(BioGPT, GPT-Neo, BLOOM, Phi, GPT-J, Falcon, CodeGen), T5's family with
labels (mT5, UMT5; LongT5 with the attention mask of a padded batch),
Swin (transformers' v1 and v2, torchvision's v1), ViT-MSN with labels,
ViT-MAE at another mask ratio with normalized pixel targets, wav2vec2's
family with labels (HuBERT, Data2VecAudio, WavLM, wav2vec2 with layer-norm
features), timm's MetaFormers (PoolFormerV2, ConvFormer, CAFormer) and
torchvision's Inception v3, FCN and LR-ASPP. Each factory takes `dropout`
as the zoo's do."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from remat_torch import zoo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_as_called import (AudioClassifier, CausalLM, MaskedAutoencoder, Segmentation,
                              Seq2SeqLM, _causal_lm)


# -- Causal LMs, labels, no attention mask --------------------------------------

def biogpt(dropout=0.1):
    """BioGPT: learned positions from the mask's cumsum, scaled embeddings."""
    return _causal_lm("BioGptConfig", "BioGptForCausalLM", dropout,
                      ("hidden_dropout_prob", "attention_probs_dropout_prob",
                       "activation_dropout"),
                      hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, layerdrop=0.0)


def gpt_neo(dropout=0.1):
    """GPT-Neo: a global and a local (window 8) attention layer."""
    return _causal_lm("GPTNeoConfig", "GPTNeoForCausalLM", dropout,
                      ("embed_dropout", "attention_dropout", "resid_dropout"),
                      hidden_size=32, num_layers=2, num_heads=2,
                      attention_types=[[["global", "local"], 1]],
                      max_position_embeddings=64, window_size=8)


def bloom(dropout=0.1):
    """BLOOM: ALiBi (slopes base ** arange, pow.Tensor_Tensor; positions
    the mask's cumsum), baddbmm, its GELU a custom autograd.Function."""
    return _causal_lm("BloomConfig", "BloomForCausalLM", dropout,
                      ("hidden_dropout", "attention_dropout"),
                      hidden_size=32, n_layer=2, n_head=2)


def phi(dropout=0.1):
    """Phi: partial rotary embeddings, parallel attention and MLP."""
    return _causal_lm("PhiConfig", "PhiForCausalLM", dropout,
                      ("resid_pdrop", "embd_pdrop", "attention_dropout"),
                      hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64,
                      partial_rotary_factor=0.5)


def gptj(dropout=0.1):
    """GPT-J: interleaved rotary embeddings on the first 8 dimensions."""
    return _causal_lm("GPTJConfig", "GPTJForCausalLM", dropout,
                      ("resid_pdrop", "embd_pdrop", "attn_pdrop"),
                      n_embd=32, n_layer=2, n_head=2, n_positions=64, rotary_dim=8)


def falcon(dropout=0.1):
    """Falcon (7B's layout): ALiBi, multi-query, parallel attention."""
    return _causal_lm("FalconConfig", "FalconForCausalLM", dropout,
                      ("hidden_dropout", "attention_dropout"),
                      hidden_size=32, num_hidden_layers=2, num_attention_heads=2, alibi=True,
                      new_decoder_architecture=False, multi_query=True, parallel_attn=True)


def codegen(dropout=0.1):
    """CodeGen: fused QKV split in 4 model-parallel parts, rotary."""
    return _causal_lm("CodeGenConfig", "CodeGenForCausalLM", dropout,
                      ("resid_pdrop", "embd_pdrop", "attn_pdrop"),
                      n_embd=32, n_layer=2, n_head=4, n_positions=64, rotary_dim=4, n_ctx=64)


# -- T5 family ------------------------------------------------------------------

class MaskedSeq2SeqLM(nn.Module):
    """An encoder-decoder's loss from its labels, with the attention mask a
    tokenizer gives a padded batch."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_ids, attention_mask, labels):
        return self.net(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss


def _t5(config, model, dropout, mask=False, **kw):
    import transformers
    torch.manual_seed(0)
    config = getattr(transformers, config)(
        vocab_size=96, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2,
        relative_attention_num_buckets=8, relative_attention_max_distance=16,
        dropout_rate=dropout, decoder_start_token_id=0, pad_token_id=0, use_cache=False, **kw)
    config._attn_implementation = "eager"
    net = getattr(transformers, model)(config)
    net.train()
    ids, labels = torch.randint(1, 96, (2, 16)), torch.randint(1, 96, (2, 12))
    if not mask:
        return Seq2SeqLM(net), (ids, labels)
    attention_mask = torch.ones(2, 16, dtype=torch.int64)
    attention_mask[1, 12:] = 0
    return MaskedSeq2SeqLM(net), (ids, attention_mask, labels)


def mt5(dropout=0.1):
    """mT5: T5 1.1's gated GELU feed-forward, untied head."""
    return _t5("MT5Config", "MT5ForConditionalGeneration", dropout,
               feed_forward_proj="gated-gelu")


def umt5(dropout=0.1):
    """UMT5: a relative position bias in every layer."""
    return _t5("UMT5Config", "UMT5ForConditionalGeneration", dropout,
               feed_forward_proj="gated-gelu")


def longt5_local_masked(dropout=0.1):
    """LongT5 with local attention (radius 4: blocks of 5, padded, three
    blocks concatenated), called with a padded batch's attention mask.
    Without one, transformers 5.23 builds the encoder's default mask only
    outside torch.compile (`not is_torchdynamo_compiling()`), so the traced
    encoder reads .shape of None: no export, as for any torch.compile user."""
    return _t5("LongT5Config", "LongT5ForConditionalGeneration", dropout, mask=True,
               encoder_attention_type="local", local_radius=4)


def longt5_tglobal_masked(dropout=0.1):
    """LongT5 with transient-global attention (global blocks of 4: block ids
    from floor, cumsum and max.dim of the mask), with the mask."""
    return _t5("LongT5Config", "LongT5ForConditionalGeneration", dropout, mask=True,
               encoder_attention_type="transient-global", local_radius=4,
               global_block_size=4)


# -- Swin -----------------------------------------------------------------------

class HFClassifier(nn.Module):
    """An image classifier called with labels: its loss."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, pixel_values, labels):
        return self.net(pixel_values=pixel_values, labels=labels).loss


def _hf_image(config, model, dropout, dropouts, size=32, **kw):
    import transformers
    torch.manual_seed(0)
    config = getattr(transformers, config)(num_labels=10, **{d: dropout for d in dropouts},
                                           **kw)
    config._attn_implementation = "eager"
    net = getattr(transformers, model)(config)
    net.train()
    return HFClassifier(net), zoo._images(2, size, 10)


def hf_swin(dropout=0.1):
    """transformers' Swin (v1), its second block shifted, with labels."""
    return _hf_image("SwinConfig", "SwinForImageClassification", dropout,
                     ("hidden_dropout_prob", "attention_probs_dropout_prob", "drop_path_rate"),
                     image_size=32, patch_size=4, embed_dim=16, depths=[2, 1], num_heads=[2, 2],
                     window_size=4)


def hf_swinv2(dropout=0.1):
    """transformers' Swin V2 (cosine attention, log-spaced position bias)."""
    return _hf_image("Swinv2Config", "Swinv2ForImageClassification", dropout,
                     ("hidden_dropout_prob", "attention_probs_dropout_prob", "drop_path_rate"),
                     image_size=32, patch_size=4, embed_dim=16, depths=[2, 1], num_heads=[2, 2],
                     window_size=4)


def swin_v1(dropout=0.1):
    """torchvision's Swin (v1), two blocks in its first stage, the second
    shifted (torch.roll)."""
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    net = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 1], num_heads=[2, 2],
                          window_size=[4, 4], num_classes=10, dropout=dropout,
                          attention_dropout=dropout, stochastic_depth_prob=dropout)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def vit_msn(dropout=0.1):
    """ViT-MSN's image classifier with labels."""
    return _hf_image("ViTMSNConfig", "ViTMSNForImageClassification", dropout,
                     ("hidden_dropout_prob", "attention_probs_dropout_prob"),
                     hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, image_size=32, patch_size=8)


def vit_mae_half(dropout=0.1):
    """ViT-MAE with half the patches masked and normalized pixel targets
    (var.correction of each target patch)."""
    import transformers
    torch.manual_seed(0)
    config = transformers.ViTMAEConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        image_size=32, patch_size=8, num_channels=3, decoder_hidden_size=16,
        decoder_num_hidden_layers=1, decoder_num_attention_heads=2,
        decoder_intermediate_size=32, mask_ratio=0.5, norm_pix_loss=True,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    config._attn_implementation = "eager"
    net = transformers.ViTMAEForPreTraining(config)
    net.train()
    return MaskedAutoencoder(net, dropout == 0), (torch.randn(2, 3, 32, 32), torch.rand(2, 16))


# -- wav2vec2 family ------------------------------------------------------------

def _audio(config, model, dropout, **kw):
    import transformers
    torch.manual_seed(0)
    kw = dict(dict(num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4), **kw)
    config = getattr(transformers, config)(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), mask_time_prob=0.0,
        hidden_dropout=dropout, attention_dropout=dropout, activation_dropout=dropout,
        feat_proj_dropout=dropout, layerdrop=0.0, num_labels=4, classifier_proj_size=16, **kw)
    config._attn_implementation = "eager"
    net = getattr(transformers, model)(config)
    net.train()
    base = getattr(net, net.base_model_prefix)
    base.feature_extractor._requires_grad = False
    return AudioClassifier(net), (torch.randn(2, 400), torch.randint(0, 4, (2,)))


def hubert(dropout=0.1):
    """HuBERT's audio classifier (group-norm features, weight-normalized
    positional convolution)."""
    return _audio("HubertConfig", "HubertForSequenceClassification", dropout)


def data2vec_audio(dropout=0.1):
    """Data2VecAudio's classifier: layer-norm features, two positional
    convolutions with layer norm, no weight norm."""
    return _audio("Data2VecAudioConfig", "Data2VecAudioForSequenceClassification", dropout,
                  num_conv_pos_embeddings=2, conv_pos_kernel_size=5)


def wavlm(dropout=0.1):
    """WavLM's classifier: gated relative position bias (log buckets), the
    attention of nn.functional.multi_head_attention_forward (a [T, B * H,
    D] to [B * H, T, D] transpose into each batch matmul)."""
    return _audio("WavLMConfig", "WavLMForSequenceClassification", dropout,
                  num_buckets=8, max_bucket_distance=16)


def wav2vec2_layer(dropout=0.1):
    """wav2vec2 with layer-norm features and stable (pre-norm) layers."""
    return _audio("Wav2Vec2Config", "Wav2Vec2ForSequenceClassification", dropout,
                  feat_extract_norm="layer", do_stable_layer_norm=True)


# -- MetaFormer -----------------------------------------------------------------

def _metaformer(dropout, dims=(8, 16, 24, 32), **kw):
    """timm's MetaFormer at one block a stage, widths 8 to 32, 32x32 images:
    the layouts timm's poolformerv2/convformer/caformer factories build."""
    from timm.models.metaformer import MetaFormer
    torch.manual_seed(0)
    net = MetaFormer(depths=(1, 1, 1, 1), dims=dims, num_classes=10,
                     drop_rate=dropout, drop_path_rate=dropout, **kw)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def poolformerv2(dropout=0.1):
    """PoolFormerV2: group norm without bias, StarReLU."""
    from timm.models.metaformer import GroupNorm1NoBias
    return _metaformer(dropout, norm_layers=GroupNorm1NoBias, use_mlp_head=False)


def convformer(dropout=0.1):
    """ConvFormer: separable 7x7 depthwise convolutions, channels-last
    layer norm, an MLP head."""
    from timm.models.metaformer import LayerNorm2dNoBias, SepConv
    return _metaformer(dropout, token_mixers=SepConv, norm_layers=LayerNorm2dNoBias)


def caformer(dropout=0.1):
    """CAFormer: ConvFormer's first two stages, attention in the last two."""
    from timm.models.metaformer import Attention, LayerNorm2dNoBias, LayerNormNoBias, SepConv
    return _metaformer(dropout, dims=(8, 16, 32, 32),
                       token_mixers=[SepConv, SepConv, Attention, Attention],
                       norm_layers=[LayerNorm2dNoBias] * 2 + [LayerNormNoBias] * 2)


# -- torchvision: GoogLeNet and DeepLabV3 families ------------------------------

class InceptionLoss(nn.Module):
    """Cross-entropy of Inception's logits (and 0.4 of its auxiliary's)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, labels):
        out = self.net(x)
        if isinstance(out, tuple):
            return F.cross_entropy(out[0], labels) + 0.4 * F.cross_entropy(out[1], labels)
        return F.cross_entropy(out, labels)


def inception_v3(dropout=0.1):
    """torchvision's Inception v3 on 75x75 images (its smallest; the
    auxiliary head needs 299x299), ten classes."""
    from torchvision.models import inception_v3 as make
    torch.manual_seed(0)
    net = make(weights=None, aux_logits=False, init_weights=False, num_classes=10,
               dropout=dropout)
    net.train()
    return InceptionLoss(net), zoo._images(2, 75, 10)


def _seg(make, dropout, size=64, **kw):
    torch.manual_seed(0)
    net = make(weights=None, weights_backbone=None, num_classes=4, **kw)
    for m in net.modules():
        if isinstance(m, nn.Dropout):
            m.p = dropout
    net.train()
    return Segmentation(net), (torch.randn(2, 3, size, size), torch.randint(0, 4, (2, size, size)))


def fcn(dropout=0.1):
    """torchvision's FCN (ResNet-50 backbone, dilated, auxiliary head) on
    2 x 64 x 64 images, bilinear upsampling."""
    from torchvision.models.segmentation import fcn_resnet50
    return _seg(fcn_resnet50, dropout, aux_loss=True)


def lraspp(dropout=0.1):
    """torchvision's LR-ASPP (MobileNetV3-Large, dilated; hardswish,
    squeeze-excitation) on 2 x 64 x 64 images."""
    from torchvision.models.segmentation import lraspp_mobilenet_v3_large
    return _seg(lraspp_mobilenet_v3_large, dropout)
