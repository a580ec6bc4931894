"""models/examples/Gpt2.cpp in PyTorch, on tgc's parameter names.

GPT-2 as its paper and nanoGPT have it: token and learned position
embeddings, pre-LN blocks (causal self-attention, a tanh-GELU MLP), a final
LayerNorm, the logits from the token embedding (tied); the mean next-token
cross-entropy over the tokens that are not padding. tgc stores a linear
layer's weight as [in, out]: y = x w + b.
"""
import math

from lm_windows import windows


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    F = torch.nn.functional
    tokens, targets = windows(pairs, inputs["target_in_ids"][1], torch)
    B, T = tokens.shape
    d = p["wte"].shape[1]
    layers = len({name.split(".")[0] for name in p if name.startswith("h")})

    def linear(prefix, x):
        return x @ p[prefix + ".w"] + p[prefix + ".b"]

    def layer_norm(prefix, x):
        return F.layer_norm(x, (d,), p[prefix + ".gamma"], p[prefix + ".beta"], eps=1e-5)

    def split(x):
        return x.view(B, T, heads, d // heads).transpose(1, 2)

    hidden_mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    x = p["wte"][tokens] + p["wpe"][:T]
    for i in range(layers):
        h = f"h{i}"
        y = layer_norm(h + ".ln_1", x)
        q, k, v = (split(linear(f"{h}.attn.{n}", y)) for n in "qkv")
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
        attended = F.softmax(scores.masked_fill(hidden_mask, float("-inf")), dim=-1) @ v
        x = x + linear(h + ".attn.c_proj", attended.transpose(1, 2).reshape(B, T, d))
        y = layer_norm(h + ".ln_2", x)
        x = x + linear(h + ".mlp.c_proj",
                       F.gelu(linear(h + ".mlp.c_fc", y), approximate="tanh"))
    logits = layer_norm("ln_f", x) @ p["wte"].t()
    flat = targets.reshape(-1)
    return (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat, ignore_index=0,
                            label_smoothing=label_smoothing),
            int((flat != 0).sum()))


def decays(names):
    """tgc's rule for Gpt2.cpp: AdamW decays the matrices, not the biases,
    the LayerNorm gains and shifts, nor the token and position tables
    (nanoGPT decays the tables too)."""
    return {n for n in names if n.endswith(".w")}
