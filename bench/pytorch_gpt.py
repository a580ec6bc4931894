#!/usr/bin/env python3
"""models/examples/Gpt2.cpp in PyTorch the nanoGPT way, on the CPU.

Token and learned position embeddings, pre-LN blocks (causal self-attention,
a tanh-GELU MLP), a final LayerNorm, the output projection tied to the token
embedding, dropout on the embeddings, the attention probabilities and both
residual branches; AdamW (betas 0.9/0.95, eps 1e-8, weight decay 0.1 on the
matrices, none on biases, gains and embeddings: tgc's rule) with a linear
warmup and cosine decay. q, k and v are three Linear layers as in tgc's model
(nanoGPT fuses them into one; the FLOPs and parameters are the same).
torch 1.13 (Debian 12) has no F.scaled_dot_product_attention: attention is
nanoGPT's own fallback (matmul, mask, softmax, matmul); a torch that has it
uses it. bf16 is torch.autocast on the CPU.

Reads the same windows tgc reads: the .tok corpus of documents bench/lm.py
writes, cut into context + 1 windows every context tokens, in a seeded order.
Prints one JSON line with the parameter count and timings.
"""
import argparse
import json
import math
import random
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

EOS = 2


def stream_of(path):
    """The documents of a TGCDOCS .tok file as one stream, EOS after each."""
    data = open(path, "rb").read()
    assert data[:8] == b"TGCDOCS\n", path
    _, vocab, _, docs, _, tokens = struct.unpack_from("<IIQQQQ", data, 8)
    at = 48 + 8 * (docs + 1)
    offsets = struct.unpack_from(f"<{docs + 1}Q", data, at)
    ids = torch.frombuffer(bytearray(data[at + 8 * (docs + 1):at + 8 * (docs + 1) + 4 * tokens]),
                           dtype=torch.int32)
    parts = []
    for d in range(docs):
        parts += [ids[offsets[d]:offsets[d + 1]], torch.tensor([EOS], dtype=torch.int32)]
    return torch.cat(parts).long(), vocab


class Attention(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.q, self.k, self.v, self.c_proj = (nn.Linear(d, d) for _ in range(4))
        self.heads, self.dropout = heads, dropout
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        B, T, d = x.shape
        q, k, v = (p(x).view(B, T, self.heads, d // self.heads).transpose(1, 2)
                   for p in (self.q, self.k, self.v))
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = self.drop(F.softmax(att.masked_fill(mask[:T, :T], float("-inf")), dim=-1))
            y = att @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d, eps=1e-5), nn.LayerNorm(d, eps=1e-5)
        self.attn = Attention(d, heads, dropout)
        self.c_fc, self.c_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        x = x + self.drop(self.attn(self.ln_1(x), mask))
        return x + self.drop(self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")))


class Gpt(nn.Module):
    def __init__(self, vocab, d, heads, layers, context, dropout):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("mask", torch.triu(torch.ones(context, context, dtype=torch.bool), 1))
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, tokens, targets):
        T = tokens.size(1)
        x = self.drop(self.wte(tokens) + self.wpe.weight[:T])
        for block in self.blocks:
            x = block(x, self.mask)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    for name in ("d-model", "heads", "layers", "context", "batch", "steps", "warmup", "threads"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--bf16", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    stream, vocab = stream_of(a.data)
    model = Gpt(vocab, a.d_model, a.heads, a.layers, a.context, a.dropout)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and not n.startswith(("wte", "wpe"))]
    rest = [p for n, p in model.named_parameters() if not (p.dim() == 2 and not n.startswith(("wte", "wpe")))]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": rest, "weight_decay": 0.0}],
                                  lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    windows = (stream.numel() - 1) // a.context
    order = list(range(windows))
    random.Random(1).shuffle(order)
    total = a.warmup + a.steps

    def step(i):
        lr = a.lr * min(1.0, (i + 1) / 200) * (0.55 + 0.45 * math.cos(math.pi * i / total))
        for group in optimizer.param_groups:
            group["lr"] = lr
        rows = [order[(i * a.batch + r) % windows] for r in range(a.batch)]
        batch = torch.stack([stream[w * a.context:w * a.context + a.context + 1] for w in rows])
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss = model(batch[:, :-1], batch[:, 1:])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    model.train()
    for i in range(a.warmup):
        step(i)
    start = time.perf_counter()
    for i in range(a.warmup, total):
        loss = step(i)
    seconds = time.perf_counter() - start
    print(json.dumps({"parameters": sum(p.numel() for p in model.parameters()),
                      "step_ms": 1000 * seconds / a.steps,
                      "tokens_per_s": a.steps * a.batch * a.context / seconds,
                      "loss": loss, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
