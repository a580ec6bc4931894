"""models/examples/PreLnTransformer.cpp in PyTorch, on tgc's names.

The Transformer of reference_transformer.py (tied and scaled embeddings,
sinusoidal positions, bias-free multi-head attention, ReLU feed-forward,
label-smoothed cross-entropy over the target tokens that are not padding)
with its LayerNorms before the sublayers, x + Sublayer(LayerNorm(x)), and a
final LayerNorm after each stack (Xiong et al., "On Layer Normalization in
the Transformer Architecture"); epsilon 1e-6. No dropout.
"""
# decays: tg-adam's default rule, as for the post-LN model (neither marks any).
from reference_transformer import (attention, decays, feed_forward, layer_count,
                                   layer_norm, translation_loss)


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    assert kv_heads == heads

    def norm(prefix, x):
        return layer_norm(p, prefix, x, torch)

    def encode(x, source_padding):
        for i in range(layer_count(p, "encoder")):
            at = f"encoder.layer{i}."
            h = norm(at + "self_attn_norm", x)
            x = x + attention(p, at + "self_attn", h, h, source_padding, heads, torch)
            x = x + feed_forward(p, at + "ffn", norm(at + "ffn_norm", x), torch)
        return norm("encoder.final_norm", x)

    def decode(y, memory, source_padding, future):
        for i in range(layer_count(p, "decoder")):
            at = f"decoder.layer{i}."
            h = norm(at + "self_attn_norm", y)
            y = y + attention(p, at + "self_attn", h, h, future, heads, torch)
            y = y + attention(p, at + "cross_attn", norm(at + "cross_attn_norm", y), memory,
                              source_padding, heads, torch)
            y = y + feed_forward(p, at + "ffn", norm(at + "ffn_norm", y), torch)
        return norm("decoder.final_norm", y)

    return translation_loss(p, pairs, torch, label_smoothing, inputs, encode, decode)
