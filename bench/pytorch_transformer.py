#!/usr/bin/env python3
"""The model tgc compiles (models/Transformer.cpp), in PyTorch on the CPU.

Post-LN encoder-decoder with one embedding matrix shared by source, target and
the output projection, sinusoidal positions, dropout on embeddings+positions and
every sublayer output, attention dropout, label-smoothed cross-entropy that
ignores padding, Adam with the warmup schedule. Batches are the reverse task's,
bit for bit (runtime/data/Tasks.cpp's SplitMix64 generator).

Attention is written here with matmul + softmax rather than nn.MultiheadAttention
/ nn.TransformerEncoderLayer: tgc's projections have no biases and its FFN has
no dropout after the ReLU, and torch 1.13's TransformerEncoderLayer can express
neither (no bias=False, one dropout for everything), so only a hand-written
layer is the same model with the same parameter count. 1.13 has no
F.scaled_dot_product_attention; matmul + softmax is what MultiheadAttention
does on the CPU anyway. A torch that has it (2.x, the GPU comparison) uses it.

Run by bench/run.py; prints one JSON line with the parameter count and timings.
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import transformer_config

PAD, BOS, EOS, FIRST_SYMBOL = 0, 1, 2, 3  # runtime/data/Tasks.h


# --- batches: runtime/data/Tasks.cpp's makeBatch for the reverse task -----------

MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, state):
        self.state = state & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def between(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)


def is_held_out(symbols):
    """Tasks.cpp's isHeldOut: such sentences are never trained on."""
    h = 0xCBF29CE484222325  # FNV-1a over the ids
    for s in symbols:
        h = ((h ^ s) * 0x100000001B3) & MASK64
    return (h ^ (h >> 29)) % 16 == 0


def reverse_batch(c, seed, index):
    """(source, target_in, target_out) int64 [B, L] tensors, padded with 0."""
    task_reverse = 1
    rng = SplitMix64((seed << 32) ^ ((index * 0x2545F491) & MASK64) ^ (task_reverse << 62))
    rows = ([], [], [])
    while len(rows[0]) < c.batch_size:
        n = rng.between(1, min(c.source_length, c.target_length) - 1)
        symbols = [rng.between(FIRST_SYMBOL, c.vocab_size - 1) for _ in range(n)]
        if is_held_out(symbols):
            continue
        out = symbols[::-1]
        for row, ids, length in zip(rows, (symbols + [EOS], [BOS] + out, out + [EOS]),
                                    (c.source_length, c.target_length, c.target_length)):
            row.append(ids + [PAD] * (length - len(ids)))
    return tuple(torch.tensor(r, dtype=torch.long) for r in rows)


def full_length_batch(c, seed, index):
    """Random sentences that fill the whole batch (no padding): source L-1
    symbols + EOS, target its reverse; as bench/run.py writes for tgc."""
    g = torch.Generator().manual_seed(seed * 1000003 + index)
    symbols = torch.randint(FIRST_SYMBOL, c.vocab_size, (c.batch_size, c.source_length - 1),
                            generator=g)
    out = symbols.flip(1)[:, :c.target_length - 1]
    column = lambda v: torch.full((c.batch_size, 1), v, dtype=torch.long)
    return (torch.cat([symbols, column(EOS)], 1), torch.cat([column(BOS), out], 1),
            torch.cat([out, column(EOS)], 1))


GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm"}


def gemm_share(step, steps, step_seconds):
    """The fraction of a step (of step_seconds, timed without the profiler)
    spent inside GEMM ops: their self time, which includes the BLAS call, over
    `steps` calls of step() under torch.profiler (whose start-up costs
    seconds, so its own wall time is no measure of the step)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    gemm_us = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in GEMM_OPS)
    return gemm_us / (steps * step_seconds * 1e6)


# The runtime calls that start kernels (and a CUDA graph's replay, one launch).
LAUNCHES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
            "cudaGraphLaunch"}


def launches_per_step(step, steps):
    """Kernel launches a step makes on the GPU: the CUDA runtime's launch
    calls over `steps` calls of step() under torch.profiler (cuBLAS's and
    the compiled kernels' included)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    return sum(e.count for e in prof.key_averages() if e.key in LAUNCHES) / steps


# --- the model ---------------------------------------------------------------

def xavier_linear(d_in, d_out, bias):
    layer = nn.Linear(d_in, d_out, bias=bias)
    nn.init.xavier_uniform_(layer.weight)
    if bias:
        nn.init.zeros_(layer.bias)
    return layer


class Attention(nn.Module):
    """softmax(Q K^T / sqrt(d_k) + mask) V per head, then W^O; no biases."""

    def __init__(self, c):
        super().__init__()
        self.heads = c.num_heads
        self.q, self.k, self.v, self.o = (xavier_linear(c.d_model, c.d_model, False)
                                          for _ in range(4))
        self.dropout = c.attention_dropout

    def split(self, x):  # [B, L, d] -> [B, h, L, d_k]
        b, n, d = x.shape
        return x.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, queries, keys_values, mask):
        q, k, v = self.split(self.q(queries)), self.split(self.k(keys_values)), \
            self.split(self.v(keys_values))
        if hasattr(F, "scaled_dot_product_attention"):
            # torch >= 2.0: its fused kernels, the fastest it has (same math).
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask.to(q.dtype),
                dropout_p=self.dropout if self.training else 0.0)
        else:
            scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1])) + mask
            out = F.dropout(scores.softmax(-1), self.dropout, self.training) @ v
        out = out.transpose(1, 2).reshape(queries.shape)
        return self.o(out)


class FeedForward(nn.Module):
    """max(0, x W1 + b1) W2 + b2 (no dropout inside, as in tgc)."""

    def __init__(self, c):
        super().__init__()
        self.w1 = xavier_linear(c.d_model, c.d_ff, True)
        self.w2 = xavier_linear(c.d_ff, c.d_model, True)

    def forward(self, x):
        return self.w2(F.relu(self.w1(x)))


class Sublayer(nn.Module):
    """LayerNorm(x + Dropout(f(x))): the post-LN wrapper."""

    def __init__(self, c, f):
        super().__init__()
        self.f, self.norm, self.dropout = f, nn.LayerNorm(c.d_model, eps=c.layer_norm_epsilon), c.dropout

    def forward(self, x, *args):
        return self.norm(x + F.dropout(self.f(x, *args), self.dropout, self.training))


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Sublayer(c, Attention(c))
        self.ffn = Sublayer(c, FeedForward(c))

    def forward(self, x, source_mask):
        return self.ffn(self.self_attn(x, x, source_mask))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Sublayer(c, Attention(c))
        self.cross_attn = Sublayer(c, Attention(c))
        self.ffn = Sublayer(c, FeedForward(c))

    def forward(self, y, memory, source_mask, causal):
        # Sublayer passes its input as the first argument: queries.
        y = self.self_attn(y, y, causal)
        y = self.cross_attn(y, memory, source_mask)
        return self.ffn(y)


class Transformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embedding = nn.Parameter(torch.randn(c.vocab_size, c.d_model) * c.d_model ** -0.5)
        self.encoder = nn.ModuleList(EncoderLayer(c) for _ in range(c.encoder_layers))
        self.decoder = nn.ModuleList(DecoderLayer(c) for _ in range(c.decoder_layers))
        length = max(c.source_length, c.target_length)
        position = torch.arange(length).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, c.d_model, 2) * (-math.log(10000.0) / c.d_model))
        pe = torch.zeros(length, c.d_model)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
        self.register_buffer("positions", pe)
        # Additive masks (0 / -1e9), as tgc's: fully masked rows stay finite.
        t = c.target_length
        self.register_buffer("causal", torch.full((t, t), -1e9).triu(1))

    def embed(self, ids):
        x = F.embedding(ids, self.embedding) * math.sqrt(self.c.d_model)
        return F.dropout(x + self.positions[: ids.shape[1]], self.c.dropout, self.training)

    def forward(self, source, target_in, target_out):
        # [B, 1, 1, S] over the scores [B, h, Sq, S]
        source_mask = (source == self.c.pad_id).float()[:, None, None, :] * -1e9
        x = self.embed(source)
        for layer in self.encoder:
            x = layer(x, source_mask)
        y = self.embed(target_in)
        for layer in self.decoder:
            y = layer(y, x, source_mask, self.causal)
        logits = y @ self.embedding.t()  # tied output projection
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), target_out.view(-1),
                               ignore_index=self.c.pad_id, label_smoothing=self.c.label_smoothing)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--config", help="text-format overrides (bench/configs/*.pbtxt)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda for the GPU comparison")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                        help="bf16: autocast's bf16 matrix products (tgc --precision=bf16's peer)")
    parser.add_argument("--full-length", action="store_true",
                        help="random sentences filling every batch (no padding), not the reverse task")
    parser.add_argument("--gemm-share", type=int, default=0, metavar="N",
                        help="after the timed steps, N more under torch.profiler: the GEMMs' share")
    parser.add_argument("--launches", type=int, default=0, metavar="N",
                        help="on a GPU, after the timed steps, N more under torch.profiler: "
                             "kernel launches per step")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the model (PyTorch 2.x): a whole-step compiler's peer; "
                             "the warmup steps include the compilation")
    args = parser.parse_args()
    device = torch.device(args.device)
    if args.compile and not hasattr(torch, "compile"):
        raise SystemExit(f"--compile: torch {torch.__version__} has no torch.compile (PyTorch 2.x has)")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    c = transformer_config.load(args.preset, args.config)
    model = Transformer(c).to(device).train()
    # On a GPU, PyTorch 2.x's fused Adam (one kernel for every parameter) is
    # its fastest honest optimizer; the CPU's torch 1.13 has none.
    fused = device.type == "cuda" and "fused" in torch.optim.Adam.__init__.__code__.co_varnames
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(c.adam_beta1, c.adam_beta2),
                                 eps=c.adam_epsilon, **({"fused": True} if fused else {}))
    forward = torch.compile(model) if args.compile else model
    # LambdaLR counts from 0; the schedule's first step is 1.
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: c.lr_factor * c.d_model ** -0.5 *
        min((i + 1) ** -0.5, (i + 1) * c.warmup_steps ** -1.5))

    # Batches are made before the clock starts: the Python generator is slow
    # and not what is measured (tgc's C++ one costs microseconds per step).
    make_batch = full_length_batch if args.full_length else reverse_batch
    cpu_batches = [make_batch(c, args.seed, i) for i in range(args.warmup + args.steps)]
    counts = [int((target_out != c.pad_id).sum()) for _, _, target_out in cpu_batches]
    batches = [tuple(t.to(device) for t in batch) for batch in cpu_batches]
    def step(batch):
        source, target_in, target_out = batch
        with torch.autocast(device.type, dtype=torch.bfloat16,
                            enabled=args.precision == "bf16"):
            loss = forward(source, target_in, target_out)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        return loss

    tokens = 0
    for i, batch in enumerate(batches):
        if i == args.warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            tokens = 0
        loss = step(batch)
        tokens += counts[i]  # known on the host: no device sync per step
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    share = (gemm_share(lambda: step(batches[-1]), args.gemm_share, elapsed / args.steps)
             if args.gemm_share else None)
    on_gpu = device.type == "cuda"
    launches = (launches_per_step(lambda: step(batches[-1]), args.launches)
                if args.launches and on_gpu else None)
    print(json.dumps({
        "gemm_share": share,
        "parameters": sum(p.numel() for p in model.parameters()),
        "step_ms": 1000.0 * elapsed / args.steps,
        "tokens_per_s": tokens / elapsed,
        "final_loss": float(loss.detach()),
        "torch": torch.__version__,
        "compiled": args.compile,
        "adam": "fused" if fused else "default",
        # The caching allocator's peak: what the step's tensors took (the
        # CUDA context's own memory is not in it).
        "peak_device_mib": torch.cuda.max_memory_reserved() / 2**20 if on_gpu else None,
        "launches_per_step": launches,
    }))


if __name__ == "__main__":
    main()
