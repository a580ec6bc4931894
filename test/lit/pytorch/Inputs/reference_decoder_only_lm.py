"""models/examples/DecoderOnlyLm.cpp in PyTorch, on tgc's parameter names.

A decoder-only Transformer over one sequence per pair, the source then the
target: the shared embedding table scaled by sqrt(d) plus a learned
segment vector (one for the source's positions, one for the target's) plus
the sinusoidal position encoding of "Attention Is All You Need" over the
whole sequence; pre-LN layers (LayerNorm eps 1e-6) of causal
self-attention, which hides the source's padding too, and a ReLU MLP; a
final LayerNorm; on the target's positions only, the logits from the
embedding table (tied) and the mean cross-entropy over the target tokens
that are not padding. No biases in attention. tgc stores a linear layer's
weight as [in, out]: y = x w + b.
"""
import math

from translation_batch import batch


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    F = torch.nn.functional
    S, T = inputs["source_ids"][1], inputs["target_in_ids"][1]
    source, target_in, target_out = batch(pairs, S, T, torch)
    B, L = source.shape[0], S + T
    table = p["embedding"]
    d = table.shape[1]
    layers = len({name.split(".")[0] for name in p if name.startswith("layer")})

    def layer_norm(prefix, x):
        return F.layer_norm(x, (d,), p[prefix + ".gamma"], p[prefix + ".beta"], eps=1e-6)

    def split(x):
        return x.view(B, L, heads, d // heads).transpose(1, 2)

    position = torch.arange(L, dtype=torch.float64)[:, None]
    angle = position / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    encoding = torch.stack([angle.sin(), angle.cos()], dim=-1).view(L, d).float()

    x = torch.cat([table[source] * math.sqrt(d) + p["source_segment"],
                   table[target_in] * math.sqrt(d) + p["target_segment"]], dim=1) + encoding
    # Hidden: later positions, and the source's padding.
    padding = torch.cat([source == 0, torch.zeros(B, T, dtype=torch.bool)], dim=1)
    hidden_mask = torch.triu(torch.ones(L, L, dtype=torch.bool), 1) | padding[:, None, None, :]
    for i in range(layers):
        a, f = f"layer{i}.self_attn", f"layer{i}.ffn"
        y = layer_norm(f"layer{i}.attention_norm", x)
        q, k, v = (split(y @ p[f"{a}.w_{n}"]) for n in "qkv")
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
        attended = F.softmax(scores.masked_fill(hidden_mask, float("-inf")), dim=-1) @ v
        x = x + attended.transpose(1, 2).reshape(B, L, d) @ p[a + ".w_o"]
        y = layer_norm(f"layer{i}.ffn_norm", x)
        x = x + F.relu(y @ p[f + ".w1"] + p[f + ".b1"]) @ p[f + ".w2"] + p[f + ".b2"]
    logits = layer_norm("final_norm", x)[:, S:] @ table.t()
    flat = target_out.reshape(-1)
    return (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat, ignore_index=0,
                            label_smoothing=label_smoothing),
            int((flat != 0).sum()))


def decays(names):
    """tgc's default rule (the model declares none): AdamW decays the
    matrices, not the biases, the LayerNorm gains and shifts, the segment
    vectors nor the embedding table."""
    return {n for n in names if n.split(".")[-1] in ("w_q", "w_k", "w_v", "w_o", "w1", "w2")}
