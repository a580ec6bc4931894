"""models/Transformer.cpp (--model transformer) in PyTorch, on tgc's names.

The Transformer of "Attention Is All You Need": one embedding matrix for the
source, the target and the output projection (tied), scaled by sqrt(d_model)
on the way in, plus the sinusoidal positions; post-LN layers,
LayerNorm(x + Sublayer(x)) with epsilon 1e-6, of multi-head attention without
biases (W^Q, W^K, W^V, W^O; the source's padding hidden from the encoder's
self-attention and the cross-attention, the future from the decoder's
self-attention) and a ReLU feed-forward; the mean label-smoothed
cross-entropy over the target tokens that are not padding (PyTorch's
smoothing, as tgc's tg.cross_entropy: 1 - e on the target plus e / V on every
class). No dropout. tgc stores a linear layer's weight as [in, out]:
y = x w + b. reference_pre_ln_transformer.py uses the layers below.
"""
import math

from translation_batch import PAD, batch


def positions(length, d, torch):
    """PE[pos, 2i] = sin(pos / 10000^(2i / d)), PE[pos, 2i + 1] = cos(the same)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    angles = pos / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    table = torch.stack((torch.sin(angles), torch.cos(angles)), dim=-1)
    return table.reshape(length, d).float()


def embed(p, ids, torch):
    d = p["embedding"].shape[1]
    return p["embedding"][ids] * math.sqrt(d) + positions(ids.shape[1], d, torch)


def layer_norm(p, prefix, x, torch):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], p[prefix + ".gamma"],
                                          p[prefix + ".beta"], eps=1e-6)


def attention(p, prefix, queries, keys_values, hidden, heads, torch):
    """softmax(Q K^T / sqrt(d_k)) V per head, the keys where `hidden` (a mask
    over [B, heads, Sq, Sk]) is true left out; heads merged, then W^O."""
    B, d = queries.shape[0], queries.shape[-1]

    def split(x):
        return x.view(B, -1, heads, d // heads).transpose(1, 2)

    q = split(queries @ p[prefix + ".w_q"])
    k = split(keys_values @ p[prefix + ".w_k"])
    v = split(keys_values @ p[prefix + ".w_v"])
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
    attended = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1) @ v
    return attended.transpose(1, 2).reshape(B, -1, d) @ p[prefix + ".w_o"]


def feed_forward(p, prefix, x, torch):
    """max(0, x W1 + b1) W2 + b2"""
    hidden = torch.relu(x @ p[prefix + ".w1"] + p[prefix + ".b1"])
    return hidden @ p[prefix + ".w2"] + p[prefix + ".b2"]


def translation_loss(p, pairs, torch, label_smoothing, inputs, encode, decode):
    """The mean loss and the counted tokens of a model whose stacks are
    encode(x, source_padding) and decode(y, memory, source_padding, future),
    on one batch of the program's bucket (`inputs`)."""
    F = torch.nn.functional
    source, target_in, target_out = batch(pairs, inputs["source_ids"][1],
                                          inputs["target_in_ids"][1], torch)
    source_padding = (source == PAD)[:, None, None, :]
    T = target_in.shape[1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    memory = encode(embed(p, source, torch), source_padding)
    decoded = decode(embed(p, target_in, torch), memory, source_padding, future)
    logits = decoded @ p["embedding"].t()
    flat = target_out.reshape(-1)
    return (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat, ignore_index=PAD,
                            label_smoothing=label_smoothing),
            int((flat != PAD).sum()))


def layer_count(p, stack):
    return len({n.split(".")[1] for n in p if n.startswith(stack + ".layer")})


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    assert kv_heads == heads

    def norm(prefix, x):
        return layer_norm(p, prefix, x, torch)

    def encode(x, source_padding):
        for i in range(layer_count(p, "encoder")):
            at = f"encoder.layer{i}."
            x = norm(at + "self_attn_norm",
                     x + attention(p, at + "self_attn", x, x, source_padding, heads, torch))
            x = norm(at + "ffn_norm", x + feed_forward(p, at + "ffn", x, torch))
        return x

    def decode(y, memory, source_padding, future):
        for i in range(layer_count(p, "decoder")):
            at = f"decoder.layer{i}."
            y = norm(at + "self_attn_norm",
                     y + attention(p, at + "self_attn", y, y, future, heads, torch))
            y = norm(at + "cross_attn_norm",
                     y + attention(p, at + "cross_attn", y, memory, source_padding, heads, torch))
            y = norm(at + "ffn_norm", y + feed_forward(p, at + "ffn", y, torch))
        return y

    return translation_loss(p, pairs, torch, label_smoothing, inputs, encode, decode)


def decays(names):
    """tg-adam's default rule (the model marks none): AdamW decays the
    matrices, not the biases, the LayerNorms' gains and shifts, nor the
    embedding table."""
    return {n for n in names if n.rsplit(".", 1)[-1] in ("w_q", "w_k", "w_v", "w_o", "w1", "w2")}
