#!/usr/bin/env python3
"""A GPT-2-style language model's training step: tgc (models/examples/Gpt2.cpp)
against the same model written the nanoGPT way in PyTorch
(bench/pytorch_gpt.py), on the same corpus of documents, full-length windows,
the same threads, interleaved: ms/step, tokens/s, MFU against the measured
GEMM peak, peak RSS; fp32 against PyTorch fp32 and tgc bf16 against PyTorch's
CPU autocast to bf16.

  python3 bench/lm.py [--rows small,124m-256] [--steps N] [--warmup W] [--repeats R]

Rows: `small` (4 layers, d 256, 4 heads, context 128, batch 16, vocabulary
1024, dropout 0.1), `124m-256` (GPT-2 small, 12 layers, d 768, 12 heads,
vocabulary 50304, at a context of 256, batch 4, no dropout) and `124m-1024`
(the same at GPT-2's own context of 1024, batch 4: 4096 tokens a step, with
attention over 4 times the keys).
"""
import argparse
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import zlib

import sides

ROWS = {
    # name: preset, batch, context, d, heads, layers, vocab, dropout, steps, warmup
    "small": ("small", 16, 128, 256, 4, 4, 1024, 0.1, 20, 5),
    "124m-256": ("124m", 4, 256, 768, 12, 12, 50304, 0.0, 3, 2),
    "124m-1024": ("124m", 4, 1024, 768, 12, 12, 50304, 0.0, 3, 2),
}
MODEL_FILE = os.path.join(sides.ROOT, "models", "examples", "Gpt2.cpp")


def write_documents(path, vocab, tokens, seed=1):
    """A .tok corpus of documents (runtime/data/TokenCorpus.h, magic TGCDOCS)
    of random tokens, documents of 50 to 2000 tokens."""
    rng = random.Random(seed)
    docs = []
    while sum(map(len, docs)) < tokens:
        docs.append([rng.randrange(sides.FIRST_SYMBOL, vocab)
                     for _ in range(rng.randrange(50, 2000))])
    count, total = len(docs), sum(map(len, docs))
    body = b"TGCDOCS\n" + struct.pack("<IIQQQQ", 2, vocab, 0, count, 0, total)
    body += struct.pack(f"<{count + 1}Q", *([0] * (count + 1)))
    offsets, at = [0], 0
    for d in docs:
        at += len(d)
        offsets.append(at)
    body += struct.pack(f"<{count + 1}Q", *offsets)
    body += b"".join(struct.pack(f"<{len(d)}i", *d) for d in docs)
    with open(path, "wb") as f:
        f.write(body + struct.pack("<II", zlib.crc32(body), 0))


def train_gflop(batch, context, d, layers, vocab):
    """Every GEMM of a step at 2*M*N*K, times 3 for the backward: per layer
    q, k, v, the output projection and the MLP (24 d^2 per token) and the
    attention's QK^T and PV over the whole square (4 T d per token), then the
    logits (2 d V per token)."""
    tokens = batch * context
    forward = tokens * (layers * (24 * d * d + 4 * context * d) + 2 * d * vocab)
    return 3 * forward / 1e9


def run_tgc(exe, data, steps, warmup, env):
    argv = sides.tgc_argv(exe, ["--train-data", data], steps, warmup)
    for suffix in (".metrics", ".loss", ".ckpt"):
        if os.path.exists(exe + suffix):
            os.remove(exe + suffix)
    output, rss = sides.run_child(argv, env)
    return sides.tgc_result(argv, output, rss, steps, warmup)


def run_torch(python, row, data, steps, warmup, threads, bf16, env):
    preset, batch, context, d, heads, layers, vocab, dropout, _, _ = row
    argv = [python, os.path.join(sides.BENCH, "pytorch_gpt.py"), "--data", data,
            "--d-model", str(d), "--heads", str(heads), "--layers", str(layers),
            "--context", str(context), "--batch", str(batch), "--steps", str(steps),
            "--warmup", str(warmup), "--threads", str(threads), "--dropout", str(dropout)]
    output, rss = sides.run_child(argv + (["--bf16"] if bf16 else []),
                                  sides.pytorch_wait_env(env, "bf16" if bf16 else "fp32"))
    import json
    result = json.loads([l for l in output.splitlines() if l.startswith("{")][-1])
    return {"ms": result["step_ms"], "tokens_per_s": result["tokens_per_s"],
            "rss_mib": rss, "parameters": result["parameters"], "torch": result["torch"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="small,124m-256")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--warmup", type=int)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    python = sides.torch_python()
    # Each side waits for work in its fastest way: tgc's programs by their
    # default, PyTorch per precision (sides.pytorch_wait_env).
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_NUM_THREADS"] = str(args.threads)
    torch_env, allocator = sides.pytorch_env(env)
    bf16 = sides.cpu_has_bf16()
    with tempfile.TemporaryDirectory() as tmp:
        peak, peak_bf16, _ = sides.gemm_peaks(tmp, env)
        print(f"CPU: {sides.cpu_model()}, {args.threads} threads; GEMM peak f32 "
              f"{peak:.0f} GFLOP/s" + (f", bf16 {peak_bf16:.0f}" if peak_bf16 else "")
              + f"; PyTorch with {allocator}")
        print("| row | side | ms/step | tok/s | MFU | peak RSS MiB | PT/tgc |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for name in args.rows.split(","):
            row = ROWS[name]
            preset, batch, context, d, heads, layers, vocab, dropout, steps, warmup = row
            steps = args.steps or steps
            warmup = args.warmup or warmup
            data = os.path.join(tmp, f"{name}.tok")
            write_documents(data, vocab, (warmup + steps) * batch * (context + 1) * 2)
            bucket = f"{batch}x{context}x{context}"
            exes = {}
            for precision in ["fp32"] + (["bf16"] if bf16 else []):
                exe = os.path.join(tmp, f"gpt_{name}_{precision}")
                subprocess.run([sides.TGC, "--model-file", MODEL_FILE, "--preset", preset,
                                "--buckets", bucket, "--precision=" + precision,
                                "-o", exe], check=True, stderr=subprocess.DEVNULL)
                exes[precision] = exe
            gflop = train_gflop(batch, context, d, layers, vocab)
            results = {}
            for _ in range(args.repeats):
                for precision, exe in exes.items():
                    results.setdefault(("tgc", precision), []).append(
                        run_tgc(exe, data, steps, warmup, env))
                    results.setdefault(("PyTorch", precision), []).append(
                        run_torch(python, row, data, steps, warmup, args.threads,
                                  precision == "bf16", torch_env))
            for precision in exes:
                tgc = min(results[("tgc", precision)], key=lambda r: r["ms"])
                torch = min(results[("PyTorch", precision)], key=lambda r: r["ms"])
                limit = peak_bf16 if precision == "bf16" else peak
                for side, r in (("tgc", tgc), ("PyTorch " + torch["torch"], torch)):
                    ratio = f"{torch['ms'] / tgc['ms']:.2f}x" if side == "tgc" else ""
                    print(f"| {name} {precision} ({gflop:.1f} GFLOP) | {side} | {r['ms']:.1f} | "
                          f"{r['tokens_per_s']:.0f} | {100 * gflop / (r['ms'] / 1000) / limit:.0f}% | "
                          f"{r['rss_mib']:.0f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
