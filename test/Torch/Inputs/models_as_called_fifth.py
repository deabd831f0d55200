"""Issue 44's fifth battery: its families called the other ways their users
call them, random weights, small configurations, train mode. Causal LMs
with the attention mask of a left-padded batch and labels that skip the
padding (GPT-2, OPT, Llama, Phi), Phi-3 (rotary on all of each head: an
empty pass-through slice), Mixtral with its load-balancing loss (histc)
and grouped or batched experts, sequence classifiers that pool the last token
that is not padding (argmax; GPT-2's default key cache starts as
torch.tensor([])), GPT-2's double-heads model, BART, Pegasus and Marian
with a padded batch, T5 with one; BEiT and Data2VecVision (relative
position bias tables), DeiT, ConvNeXt V2 (global response norm, in
transformers and timm), ViT-MAE's pre-training loss with its masking
noise given, VideoMAE (3-D patch embedding), Swin V2's masked image
modelling, transformers' PoolFormer, GoogLeNet with its two auxiliary
heads, DeepLabV3 on MobileNetV3; wav2vec2-BERT's classifier, wav2vec2's
frame classifier and x-vector. Each factory takes `dropout` as the zoo's
do."""
import os
import sys

import torch
import torch.nn as nn

from remat_torch import zoo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_as_called import _causal_lm
from models_as_called_more import HFClassifier, MaskedSeq2SeqLM, _audio, _hf_image, _seg, _t5


class Loss2(nn.Module):
    """A transformers model called with two named inputs: its loss."""

    def __init__(self, net, *names):
        super().__init__()
        self.net = net
        self.names = names

    def forward(self, a, b):
        return self.net(**dict(zip(self.names, (a, b)))).loss


class Loss3(Loss2):
    def forward(self, a, b, c):
        return self.net(**dict(zip(self.names, (a, b, c)))).loss


class Loss4(Loss2):
    def forward(self, a, b, c, d):
        return self.net(**dict(zip(self.names, (a, b, c, d)))).loss


def _loss(net, names):
    return {2: Loss2, 3: Loss3, 4: Loss4}[len(names)](net, *names)


def _hf(config, model, names, inputs, **kw):
    import transformers
    torch.manual_seed(0)
    config = getattr(transformers, config)(**kw)
    config._attn_implementation = "eager"
    net = getattr(transformers, model)(config)
    net.train()
    return _loss(net, names), inputs


# -- Causal LMs ---------------------------------------------------------------------

def _padded_lm(config, model, dropout, dropouts, **kw):
    """A causal LM on a left-padded batch: its attention mask, and labels
    of -100 (ignored) where it pads."""
    lm, (ids, labels) = _causal_lm(config, model, dropout, dropouts, **kw)
    mask = torch.ones_like(ids)
    mask[1, :4] = 0
    return _loss(lm.net, ("input_ids", "attention_mask", "labels")), \
        (ids, mask, labels.masked_fill(mask == 0, -100))


def gpt2_padded(dropout=0.1):
    """GPT-2: positions as given (no cumsum), the mask's padding added to
    the causal mask."""
    return _padded_lm("GPT2Config", "GPT2LMHeadModel", dropout,
                      ("resid_pdrop", "embd_pdrop", "attn_pdrop"), n_embd=32, n_layer=2,
                      n_head=2, n_positions=64)


def opt_padded(dropout=0.1):
    """OPT: learned positions from the padded mask's cumsum."""
    return _padded_lm("OPTConfig", "OPTForCausalLM", dropout, ("dropout", "attention_dropout"),
                      hidden_size=32, num_hidden_layers=2, ffn_dim=64, num_attention_heads=2,
                      max_position_embeddings=64, word_embed_proj_dim=32)


def llama_padded(dropout=0.1):
    """Llama: rotary positions, grouped-query attention, padded."""
    return _padded_lm("LlamaConfig", "LlamaForCausalLM", dropout, ("attention_dropout",),
                      hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)


def phi_padded(dropout=0.1):
    """Phi: partial rotary, parallel attention and MLP, padded."""
    return _padded_lm("PhiConfig", "PhiForCausalLM", dropout,
                      ("resid_pdrop", "embd_pdrop", "attention_dropout"), hidden_size=32,
                      intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      max_position_embeddings=64, partial_rotary_factor=0.5)


def phi3(dropout=0.1):
    """Phi-3: fused QKV and gate-up projections, rotary on all of each head
    (the pass-through part, q[..., 16:] of a 16-wide head, is empty)."""
    return _causal_lm("Phi3Config", "Phi3ForCausalLM", dropout,
                      ("resid_pdrop", "embd_pdrop", "attention_dropout"), hidden_size=32,
                      intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=2, max_position_embeddings=64)


def mixtral(dropout=0.1):
    """Mixtral as transformers configures it: its router's load-balancing
    loss (tokens per expert by histc), its experts grouped (the default
    experts_implementation, "grouped_mm": on the CPU in float32,
    transformers' grouped_mm_fallback op on the tokens sorted by expert,
    its offsets their running counts)."""
    return _causal_lm("MixtralConfig", "MixtralForCausalLM", dropout, ("attention_dropout",),
                      hidden_size=32, intermediate_size=64, num_local_experts=4,
                      num_experts_per_tok=2, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, max_position_embeddings=64,
                      output_router_logits=True)


def mixtral_batched(dropout=0.1):
    """Mixtral with its experts batched (experts_implementation=
    "batched_mm": each token's two experts' weights gathered)."""
    lm, inputs = mixtral(dropout)
    lm.net.config._experts_implementation = "batched_mm"
    return lm, inputs


# -- Sequence classifiers, multiple choice ------------------------------------------------

def gpt2_classifier(dropout=0.1):
    """GPT2ForSequenceClassification as configured by default (use_cache:
    a key cache that starts empty), pooling each row's last token that is
    not padding (argmax)."""
    ids = torch.randint(3, 96, (2, 16))
    ids[1, 12:] = 0
    return _hf("GPT2Config", "GPT2ForSequenceClassification", ("input_ids", "labels"),
               (ids, torch.tensor([0, 2])), vocab_size=96, n_embd=32, n_layer=2, n_head=2,
               n_positions=64, num_labels=3, pad_token_id=0, bos_token_id=1, eos_token_id=2,
               resid_pdrop=dropout,
               embd_pdrop=dropout, attn_pdrop=dropout)


def opt_classifier(dropout=0.1):
    """OPTForSequenceClassification, padded on the right."""
    ids = torch.randint(3, 96, (2, 16))
    ids[1, 12:] = 1
    return _hf("OPTConfig", "OPTForSequenceClassification", ("input_ids", "labels"),
               (ids, torch.tensor([0, 2])), vocab_size=96, hidden_size=32, num_hidden_layers=2,
               ffn_dim=64, num_attention_heads=2, max_position_embeddings=64,
               word_embed_proj_dim=32, num_labels=3, pad_token_id=1, dropout=dropout,
               attention_dropout=dropout)


def gpt2_double_heads(dropout=0.1):
    """GPT2DoubleHeadsModel: the LM loss and the multiple-choice loss of
    two choices, each summarized at its classification token."""
    ids = torch.randint(3, 96, (2, 2, 16))
    return _hf("GPT2Config", "GPT2DoubleHeadsModel",
               ("input_ids", "mc_token_ids", "labels", "mc_labels"),
               (ids, torch.tensor([[15, 10], [15, 12]]), ids.clone(), torch.tensor([0, 1])),
               vocab_size=96, n_embd=32, n_layer=2, n_head=2, n_positions=64,
               resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
               summary_first_dropout=dropout)


# -- Encoder-decoders, padded batches --------------------------------------------

def _bart_like(config, model, dropout, **kw):
    import transformers
    torch.manual_seed(0)
    config = getattr(transformers, config)(
        vocab_size=96, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, max_position_embeddings=64, dropout=dropout,
        attention_dropout=dropout, activation_dropout=dropout, pad_token_id=1,
        decoder_start_token_id=2, use_cache=False, **kw)
    config._attn_implementation = "eager"
    net = getattr(transformers, model)(config)
    net.train()
    ids, labels = torch.randint(3, 96, (2, 16)), torch.randint(3, 96, (2, 12))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 12:] = 0
    return MaskedSeq2SeqLM(net), (ids, mask, labels)


def bart(dropout=0.1):
    """BART: learned positions offset by 2, post-norm layers."""
    return _bart_like("BartConfig", "BartForConditionalGeneration", dropout)


def pegasus(dropout=0.1):
    """Pegasus: sinusoidal positions, pre-norm layers, a final norm."""
    return _bart_like("PegasusConfig", "PegasusForConditionalGeneration", dropout)


def marian(dropout=0.1):
    """Marian: sinusoidal positions, post-norm, scaled embeddings."""
    return _bart_like("MarianConfig", "MarianMTModel", dropout, decoder_vocab_size=96)


def t5_padded(dropout=0.1):
    """T5 with the attention mask of a padded batch."""
    return _t5("T5Config", "T5ForConditionalGeneration", dropout, mask=True)


# -- Vision ---------------------------------------------------------------------------

def _vit_like(config, model, dropout, **kw):
    return _hf_image(config, model, dropout,
                     ("hidden_dropout_prob", "attention_probs_dropout_prob"), image_size=32,
                     patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, **kw)


def beit(dropout=0.1):
    """BEiT: a relative position bias table per layer (an index gather),
    layer scale, mean pooling."""
    return _vit_like("BeitConfig", "BeitForImageClassification", dropout,
                     use_relative_position_bias=True, use_mean_pooling=True,
                     layer_scale_init_value=0.1)


def data2vec_vision(dropout=0.1):
    """Data2VecVision: BEiT's layout, its [CLS] token pooled."""
    return _vit_like("Data2VecVisionConfig", "Data2VecVisionForImageClassification", dropout,
                     use_relative_position_bias=True)


def deit(dropout=0.1):
    """DeiT with labels."""
    return _vit_like("DeiTConfig", "DeiTForImageClassification", dropout)


def convnextv2(dropout=0.1):
    """transformers' ConvNeXt V2: global response normalization."""
    return _hf_image("ConvNextV2Config", "ConvNextV2ForImageClassification", dropout,
                     ("drop_path_rate",), num_channels=3, hidden_sizes=[8, 16], depths=[1, 1],
                     num_stages=2, image_size=32)


def timm_convnextv2(dropout=0.1):
    """timm's ConvNeXt V2 (atto's layout at one block a stage)."""
    import timm
    torch.manual_seed(0)
    net = timm.create_model("convnextv2_atto", pretrained=False, num_classes=10,
                            depths=(1, 1, 1, 1), dims=(8, 16, 24, 32), drop_rate=dropout,
                            drop_path_rate=dropout)
    return zoo.Classifier(net), zoo._images(2, 32, 10)


def vit_mae_pretraining(dropout=0.1):
    """ViTMAEForPreTraining: 75% of the patches masked (argsort of the
    noise), the decoder's normalized-pixel loss on them."""
    import transformers
    torch.manual_seed(0)
    config = transformers.ViTMAEConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, decoder_hidden_size=16, decoder_num_hidden_layers=1,
        decoder_num_attention_heads=2, decoder_intermediate_size=32, mask_ratio=0.75,
        norm_pix_loss=True, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    config._attn_implementation = "eager"
    net = transformers.ViTMAEForPreTraining(config)
    net.train()
    return _loss(net, ("pixel_values", "noise")), (torch.randn(2, 3, 32, 32), torch.rand(2, 16))


def videomae(dropout=0.1):
    """VideoMAE's classifier: 2 x 8 x 8 tubelets (a 3-D convolution) of 4
    frames, fixed sinusoidal positions, mean pooling."""
    import transformers
    torch.manual_seed(0)
    config = transformers.VideoMAEConfig(
        image_size=32, patch_size=8, num_frames=4, tubelet_size=2, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=4,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    config._attn_implementation = "eager"
    net = transformers.VideoMAEForVideoClassification(config)
    net.train()
    return HFClassifier(net), (torch.randn(2, 4, 3, 32, 32), torch.tensor([1, 3]))


def swinv2_masked_image_modeling(dropout=0.1):
    """Swinv2ForMaskedImageModeling (SimMIM): half the patches replaced by
    the mask token, the pixels reconstructed (pixel shuffle), the L1 loss
    on the masked ones."""
    import transformers
    torch.manual_seed(0)
    config = transformers.Swinv2Config(
        image_size=32, patch_size=4, embed_dim=16, depths=[2, 1], num_heads=[2, 2],
        window_size=4, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
        drop_path_rate=dropout, encoder_stride=8)
    config._attn_implementation = "eager"
    net = transformers.Swinv2ForMaskedImageModeling(config)
    net.train()
    return _loss(net, ("pixel_values", "bool_masked_pos")), \
        (torch.randn(2, 3, 32, 32), torch.rand(2, 64) < 0.5)


def hf_poolformer(dropout=0.1):
    """transformers' PoolFormer classifier (its own group norm)."""
    return _hf_image("PoolFormerConfig", "PoolFormerForImageClassification", dropout,
                     ("hidden_dropout_prob", "drop_path_rate"), num_encoder_blocks=2,
                     depths=[1, 1], hidden_sizes=[8, 16], patch_sizes=[7, 3], strides=[4, 2],
                     padding=[2, 1])


class AuxiliaryLoss(nn.Module):
    """GoogLeNet trained as its paper and torchvision's reference do: the
    main loss plus 0.3 of each auxiliary head's."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, labels):
        out = self.net(x)
        ce = nn.functional.cross_entropy
        return ce(out.logits, labels) + 0.3 * ce(out.aux_logits1, labels) + \
            0.3 * ce(out.aux_logits2, labels)


def googlenet_auxiliary(dropout=0.1):
    """torchvision's GoogLeNet with its auxiliary heads on 2 x 64 x 64."""
    from torchvision.models import googlenet
    torch.manual_seed(0)
    net = googlenet(weights=None, aux_logits=True, init_weights=True, num_classes=10,
                    dropout=dropout, dropout_aux=dropout)
    net.train()
    return AuxiliaryLoss(net), zoo._images(2, 64, 10)


def deeplabv3_mobilenet(dropout=0.1):
    """torchvision's DeepLabV3 on MobileNetV3-Large with its auxiliary head."""
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
    return _seg(deeplabv3_mobilenet_v3_large, dropout, aux_loss=True)


# -- Audio ------------------------------------------------------------------------------

def wav2vec2_bert(dropout=0.1):
    """Wav2Vec2-BERT's classifier on 16 features x 20 frames: conformer
    layers (depthwise 1-D convolution, GLU), relative-key positions."""
    import transformers
    torch.manual_seed(0)
    config = transformers.Wav2Vec2BertConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        feature_projection_input_dim=16, conv_depthwise_kernel_size=3, mask_time_prob=0.0,
        hidden_dropout=dropout, attention_dropout=dropout, activation_dropout=dropout,
        feat_proj_dropout=dropout, layerdrop=0.0, num_labels=4, classifier_proj_size=16,
        position_embeddings_type="relative_key", left_max_position_embeddings=8,
        right_max_position_embeddings=8)
    config._attn_implementation = "eager"
    net = transformers.Wav2Vec2BertForSequenceClassification(config)
    net.train()
    return _loss(net, ("input_features", "labels")), \
        (torch.randn(2, 20, 16), torch.tensor([0, 3]))


def wav2vec2_frames(dropout=0.1):
    """Wav2Vec2ForAudioFrameClassification: one-hot labels per frame
    (argmax of them, as its loss reads them)."""
    net, (x, _) = _audio("Wav2Vec2Config", "Wav2Vec2ForAudioFrameClassification", dropout)
    return _loss(net.net, ("input_values", "labels")), \
        (x, nn.functional.one_hot(torch.randint(0, 4, (2, 39)), 4))


def wav2vec2_xvector(dropout=0.1):
    """Wav2Vec2ForXVector: TDNN layers (dilated 1-D convolutions), mean and
    standard-deviation pooling, the additive-margin softmax loss."""
    net, inputs = _audio("Wav2Vec2Config", "Wav2Vec2ForXVector", dropout, tdnn_dim=(16, 16),
                         tdnn_kernel=(3, 1), tdnn_dilation=(1, 1), xvector_output_dim=8)
    return _loss(net.net, ("input_values", "labels")), inputs
