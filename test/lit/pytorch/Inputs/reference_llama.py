"""models/examples/Llama.cpp in PyTorch, on tgc's parameter names.

LLaMA as its paper and Hugging Face's LlamaModel have it: token embeddings
and no position embeddings, pre-norm blocks with RMSNorm (eps 1e-5), causal
self-attention whose queries and keys are turned by rotary position
embeddings (RoFormer's rotation in the "rotate half" layout: position s
turns the pairs (x[i], x[i + w/2]) of a head of width w by the angle
s * 10000^(-2i/w)), grouped-query attention (each key and value head serves
heads / kv_heads consecutive query heads), a SwiGLU MLP
(silu(x W1) * (x W3)) W2, no biases, a final RMSNorm and an output
projection of its own (untied); the mean next-token cross-entropy over the
tokens that are not padding. tgc stores a linear layer's weight as
[in, out]: y = x w.
"""
import math
import os

from lm_windows import windows

# REFERENCE_ROTARY=interleaved (llama.test's negative check) turns the
# original LLaMA code's pairs (x[2i], x[2i + 1]) instead.
ROTATE_HALF = os.environ.get("REFERENCE_ROTARY", "half") == "half"


def rotary(x, torch, base=10000.0):
    """x [B, heads, T, w] with each position s turned as the docstring says."""
    T, w = x.shape[-2], x.shape[-1]
    inverse = base ** (-torch.arange(0, w, 2, dtype=torch.float64) / w)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * inverse[None, :]
    cos, sin = angle.cos().float(), angle.sin().float()  # [T, w / 2]
    if ROTATE_HALF:
        x1, x2 = x[..., :w // 2], x[..., w // 2:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).flatten(-2)


def loss(p, pairs, torch, heads, kv_heads, label_smoothing, inputs):
    F = torch.nn.functional
    # No parameter gives the context: the program's inputs do.
    tokens, targets = windows(pairs, inputs["target_in_ids"][1], torch)
    B, T = tokens.shape
    d = p["tok_embeddings"].shape[1]
    w = d // heads
    layers = len({name.split(".")[0] for name in p if name.startswith("layers")})

    def rms_norm(name, x):
        return p[name + ".weight"] * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)

    def split(x, n):
        return x.view(B, T, n, w).transpose(1, 2)

    hidden_mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    x = p["tok_embeddings"][tokens]
    for i in range(layers):
        a, f = f"layers{i}.attention", f"layers{i}.feed_forward"
        y = rms_norm(f"layers{i}.attention_norm", x)
        q = rotary(split(y @ p[a + ".wq"], heads), torch)
        k = rotary(split(y @ p[a + ".wk"], kv_heads), torch)
        v = split(y @ p[a + ".wv"], kv_heads)
        k, v = (t.repeat_interleave(heads // kv_heads, dim=1) for t in (k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(w)
        attended = F.softmax(scores.masked_fill(hidden_mask, float("-inf")), dim=-1) @ v
        x = x + attended.transpose(1, 2).reshape(B, T, d) @ p[a + ".wo"]
        y = rms_norm(f"layers{i}.ffn_norm", x)
        x = x + (F.silu(y @ p[f + ".w1"]) * (y @ p[f + ".w3"])) @ p[f + ".w2"]
    logits = rms_norm("norm", x) @ p["output"]
    flat = targets.reshape(-1)
    return (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), flat, ignore_index=0,
                            label_smoothing=label_smoothing),
            int((flat != 0).sum()))


def decays(names):
    """tgc's default rule (the model declares none): AdamW decays the
    matrices, the output projection among them, not the RMSNorm gains nor
    the token embedding table."""
    return {n for n in names if not n.endswith(".weight") and n != "tok_embeddings"}
