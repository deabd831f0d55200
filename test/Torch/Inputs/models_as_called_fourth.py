"""Issue 44's fourth battery: other models of its families, random weights,
small configurations, train mode, called the way their users call them.
Causal LMs with labels and no attention mask (OPT with projected
embeddings, XGLM, GPT-NeoX, GPTBigCode, Gemma, StableLM, MPT, OLMo,
Mamba), T5 v1.1 with labels, wav2vec2's family and speech models with
labels (SEW, SEW-D, UniSpeech, UniSpeechSat, Wav2Vec2-Conformer with
rotary and relative positions, Whisper's audio classifier, Speech2Text),
and vision models (timm's Swin, Swin V2 and Swin V2 CR, PoolFormer v1 and
Inception v4, torchvision's MaxViT and DeepLabV3-ResNet50, SegFormer).
Each factory takes `dropout` as the zoo's do."""
import os
import sys

import torch
import torch.nn as nn

from remat_torch import zoo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_as_called import _causal_lm
from models_as_called_more import HFClassifier, _audio, _seg, _t5


# -- Causal LMs, labels, no attention mask --------------------------------------

def opt_proj(dropout=0.1):
    """OPT with 16-wide word embeddings projected in to and out of its
    32-wide layers (project_in/project_out, OPT-350m's layout), post-norm
    layers (do_layer_norm_before=False)."""
    return _causal_lm("OPTConfig", "OPTForCausalLM", dropout, ("dropout", "attention_dropout"),
                      hidden_size=32, num_hidden_layers=2, ffn_dim=64, num_attention_heads=2,
                      max_position_embeddings=64, word_embed_proj_dim=16,
                      do_layer_norm_before=False)


def xglm(dropout=0.1):
    """XGLM: sinusoidal positions offset by the padding index (the mask's
    cumsum), scaled embeddings."""
    return _causal_lm("XGLMConfig", "XGLMForCausalLM", dropout,
                      ("dropout", "attention_dropout", "activation_dropout"),
                      d_model=32, num_layers=2, attention_heads=2, ffn_dim=64,
                      max_position_embeddings=64, layerdrop=0.0)


def gpt_neox(dropout=0.1):
    """GPT-NeoX (Pythia's layout): fused QKV, rotary on a quarter of each
    head, parallel attention and MLP."""
    return _causal_lm("GPTNeoXConfig", "GPTNeoXForCausalLM", dropout,
                      ("hidden_dropout", "attention_dropout"),
                      hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, rotary_pct=0.25, max_position_embeddings=64)


def gpt_bigcode(dropout=0.1):
    """GPTBigCode (StarCoder's layout): multi-query attention, one key and
    value head shared by the query heads."""
    return _causal_lm("GPTBigCodeConfig", "GPTBigCodeForCausalLM", dropout,
                      ("resid_pdrop", "embd_pdrop", "attn_pdrop"),
                      n_embd=32, n_layer=2, n_head=2, n_positions=64, multi_query=True)


def gemma(dropout=0.1):
    """Gemma: RMS norm scaled by 1 + weight, embeddings scaled by the square
    root of the width, GeGLU (tanh GELU), grouped-query attention (one
    key-value head for two query heads)."""
    return _causal_lm("GemmaConfig", "GemmaForCausalLM", dropout, ("attention_dropout",),
                      hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                      max_position_embeddings=64)


def stablelm(dropout=0.1):
    """StableLM: layer norm, rotary on a quarter of each head, SwiGLU."""
    return _causal_lm("StableLmConfig", "StableLmForCausalLM", dropout,
                      ("hidden_dropout", "attention_dropout"),
                      hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=64, partial_rotary_factor=0.25)


def mpt(dropout=0.1):
    """MPT: ALiBi, bias-free layer norms and linears, fused QKV."""
    return _causal_lm("MptConfig", "MptForCausalLM", dropout, ("resid_pdrop", "emb_pdrop"),
                      d_model=32, n_heads=2, n_layers=2, expansion_ratio=2, max_seq_len=64)


def olmo(dropout=0.1):
    """OLMo: non-parametric layer norm, queries, keys and values clamped to
    [-4, 4] (clip_qkv), SwiGLU."""
    return _causal_lm("OlmoConfig", "OlmoForCausalLM", dropout, ("attention_dropout",),
                      hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, max_position_embeddings=64, clip_qkv=4.0)


def mamba(dropout=0.1):
    """Mamba (no dropout of its own): a causal depthwise 1-D convolution,
    the selective scan as transformers runs it without its CUDA kernels (a
    Python loop over the 16 positions, unrolled), softplus time steps
    (log1p, op-forms-log1p.test)."""
    return _causal_lm("MambaConfig", "MambaForCausalLM", dropout, (),
                      hidden_size=32, state_size=4, num_hidden_layers=2, expand=2,
                      conv_kernel=4, use_mambapy=False)


def t5_v1_1(dropout=0.1):
    """T5 v1.1 (ByT5's and Flan-T5's layout) with labels: gated GELU feed
    forward, an untied head (no rescaling of the decoder's output)."""
    return _t5("T5Config", "T5ForConditionalGeneration", dropout,
               feed_forward_proj="gated-gelu", tie_word_embeddings=False)


# -- Speech, labels ---------------------------------------------------------------

def sew(dropout=0.1):
    """SEW's classifier: the sequence squeezed by an average pooling of 2
    before the transformer (and its positional convolution strided by 2),
    upsampled after it (a linear to twice the width, reshaped)."""
    return _audio("SEWConfig", "SEWForSequenceClassification", dropout, squeeze_factor=2)


def sew_d(dropout=0.1):
    """SEW-D's classifier: DeBERTa-v2 layers (disentangled attention,
    log-bucketed relative positions, 8 buckets) on the squeezed sequence."""
    return _audio("SEWDConfig", "SEWDForSequenceClassification", dropout, squeeze_factor=2,
                  position_buckets=8, max_position_embeddings=32)


def unispeech(dropout=0.1):
    """UniSpeech's classifier (wav2vec2's layout, its own classes)."""
    return _audio("UniSpeechConfig", "UniSpeechForSequenceClassification", dropout)


def unispeech_sat(dropout=0.1):
    """UniSpeechSat's classifier."""
    return _audio("UniSpeechSatConfig", "UniSpeechSatForSequenceClassification", dropout)


def w2v2_conformer(dropout=0.1):
    """Wav2Vec2-Conformer's classifier with rotary positions: the cos and
    sin it caches on itself in its forward, which Dynamo returns beside the
    loss (op-forms-cached-attribute.test); conformer blocks (GLU, a
    depthwise 1-D convolution of kernel 7, batch norm, two half-step
    feed-forwards)."""
    return _audio("Wav2Vec2ConformerConfig", "Wav2Vec2ConformerForSequenceClassification",
                  dropout, position_embeddings_type="rotary", conv_depthwise_kernel_size=7)


def w2v2_conformer_rel(dropout=0.1):
    """Wav2Vec2-Conformer's classifier with Transformer-XL relative
    positions (a sinusoidal table, the relative shift of the scores)."""
    return _audio("Wav2Vec2ConformerConfig", "Wav2Vec2ConformerForSequenceClassification",
                  dropout, position_embeddings_type="relative", conv_depthwise_kernel_size=7)


class SpeechLoss(nn.Module):
    """A speech model called on log-mel features with labels: its loss."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_features, labels):
        return self.net(input_features=input_features, labels=labels).loss


def whisper(dropout=0.1):
    """Whisper's audio classifier: two 1-D convolutions (the second strided)
    on 8 mel bins x 32 frames, sinusoidal positions, the encoder's layers,
    a mean-pooled projection."""
    import transformers
    torch.manual_seed(0)
    config = transformers.WhisperConfig(
        num_mel_bins=8, d_model=32, encoder_layers=2, encoder_attention_heads=2,
        encoder_ffn_dim=64, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=64,
        max_source_positions=16, max_target_positions=16, dropout=dropout,
        attention_dropout=dropout, activation_dropout=dropout, num_labels=4,
        classifier_proj_size=16, encoder_layerdrop=0.0)
    config._attn_implementation = "eager"
    net = transformers.WhisperForAudioClassification(config)
    net.train()
    return SpeechLoss(net), (torch.randn(2, 8, 32), torch.randint(0, 4, (2,)))


def speech2text(dropout=0.1):
    """Speech2Text with labels: two strided 1-D convolutions with GLU on 40
    frames of 8 features, sinusoidal positions, the decoder on the labels
    shifted right."""
    import transformers
    torch.manual_seed(0)
    config = transformers.Speech2TextConfig(
        vocab_size=96, d_model=32, encoder_layers=2, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, conv_channels=16, input_feat_per_channel=8, input_channels=1,
        max_source_positions=64, max_target_positions=32, dropout=dropout,
        attention_dropout=dropout, activation_dropout=dropout, decoder_start_token_id=2,
        pad_token_id=1, use_cache=False, encoder_layerdrop=0.0, decoder_layerdrop=0.0)
    config._attn_implementation = "eager"
    net = transformers.Speech2TextForConditionalGeneration(config)
    net.train()
    return SpeechLoss(net), (torch.randn(2, 40, 8), torch.randint(3, 96, (2, 8)))


# -- Vision, labels -----------------------------------------------------------------

def _timm_swin(make, dropout):
    """One of timm's Swin classes at 4x4 windows on 32x32 images, two blocks
    in its first stage (the second shifted: roll) and one in its second."""
    torch.manual_seed(0)
    net = make(img_size=32, patch_size=4, embed_dim=16, depths=(2, 1), num_heads=(2, 2),
               window_size=4, num_classes=10, drop_rate=dropout, attn_drop_rate=dropout,
               drop_path_rate=dropout)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def timm_swin(dropout=0.1):
    """timm's Swin (v1): a relative position bias table indexed by a
    buffer, channels-last patch merging."""
    from timm.models.swin_transformer import SwinTransformer
    return _timm_swin(SwinTransformer, dropout)


def timm_swinv2(dropout=0.1):
    """timm's Swin V2: scaled cosine attention (a learned, clamped
    logit scale), the continuous position bias's MLP on log-spaced
    coordinates, res-post-norm."""
    from timm.models.swin_transformer_v2 import SwinTransformerV2
    return _timm_swin(SwinTransformerV2, dropout)


def timm_swinv2_cr(dropout=0.1):
    """timm's Swin V2 CR (Christoph Reich's): the same attention in NCHW
    stages, its own window partition and merging."""
    from timm.models.swin_transformer_v2_cr import SwinTransformerV2Cr
    torch.manual_seed(0)
    net = SwinTransformerV2Cr(img_size=(32, 32), patch_size=4, embed_dim=16, depths=(2, 1),
                              num_heads=(2, 2), window_size=4, num_classes=10,
                              drop_rate=dropout, attn_drop_rate=dropout,
                              drop_path_rate=dropout)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def maxvit(dropout=0.1):
    """torchvision's MaxViT: MBConv (batch norm, depthwise convolution,
    squeeze-excitation), block attention over 2x2 windows and grid
    attention over a 2x2 grid (the partitions are permutes), relative
    position bias, stochastic depth, on 32x32 images."""
    from torchvision.models.maxvit import MaxVit
    torch.manual_seed(0)
    net = MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2,
                 block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                 stochastic_depth_prob=dropout, num_classes=10)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def timm_poolformer(dropout=0.1):
    """timm's PoolFormer v1 with poolformer_s12's GELU MLPs with bias
    (models_as_called's poolformer has MetaFormer's default StarReLU ones,
    without bias) and MetaFormer's default LayerNorm2d before each
    downsampling convolution (poolformer_s12 has none)."""
    from timm.models.metaformer import GroupNorm1, MetaFormer, Pooling
    torch.manual_seed(0)
    net = MetaFormer(depths=(1, 1, 1, 1), dims=(8, 16, 24, 32), num_classes=10,
                     token_mixers=Pooling, norm_layers=GroupNorm1, mlp_act=nn.GELU,
                     mlp_bias=True, use_mlp_head=False, layer_scale_init_values=1e-5,
                     res_scale_init_values=None, drop_rate=dropout, drop_path_rate=dropout)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def segformer(dropout=0.1):
    """SegFormer with labels: overlapping strided patch embeddings, efficient
    self-attention (keys and values from a strided convolution, sr_ratio
    2), Mix-FFN's depthwise convolution, the all-MLP decoder's bilinear
    upsampling and the loss's upsampling of the logits to the labels."""
    import transformers
    torch.manual_seed(0)
    config = transformers.SegformerConfig(
        num_channels=3, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
        hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
        mlp_ratios=[2, 2], hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
        classifier_dropout_prob=dropout, drop_path_rate=dropout, decoder_hidden_size=32,
        num_labels=4)
    net = transformers.SegformerForSemanticSegmentation(config)
    net.train()
    return HFClassifier(net), (torch.randn(2, 3, 32, 32), torch.randint(0, 4, (2, 32, 32)))


def deeplabv3_resnet50(dropout=0.1):
    """torchvision's DeepLabV3 on ResNet-50 (dilated, auxiliary FCN head)
    on 2 x 64x64 images: its ASPP's image pooling normalizes a batch of 2
    pooled values, where eager float32 is itself far from float64 (most
    gradients are judged against float64, as models_as_called's
    deeplabv3's)."""
    from torchvision.models.segmentation import deeplabv3_resnet50 as make
    return _seg(make, dropout, aux_loss=True)
