#!/usr/bin/env python3
"""Positions and norms in tgc's training step: the same stack of causal
decoder blocks (bench/models/AttentionStack.cpp: d_model 512, 8 heads, d_ff
2048, 4 blocks, 32 x 64 full-length tokens, vocabulary 1000) with sinusoidal
positions, rotary q and k, an ALiBi score bias, a learned score bias, and
with RMSNorm for LayerNorm; compiled with `tgc --model-file`, run
interleaved on the same token files; step time and the ratio to the
sinusoidal LayerNorm one.

  python3 bench/attention_variants.py [--steps N] [--warmup W] [--repeats R] [--precision fp32|bf16]
"""
import argparse
import os
import statistics
import sys
import tempfile

import activations
import sides

MODELS = ["attn_plain", "attn_rotary", "attn_alibi", "attn_relative", "attn_rmsnorm"]
MODEL_FILE = os.path.join(sides.BENCH, "models", "AttentionStack.cpp")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    args = parser.parse_args()
    if not os.path.exists(sides.TGC):
        sys.exit(f"error: {sides.TGC} is missing: build tgc first")
    env = dict(os.environ)
    print(f"CPU: {sides.cpu_model()}, {os.cpu_count()} CPUs; precision {args.precision}")
    with tempfile.TemporaryDirectory() as tmp:
        files = sides.write_full_length_files(activations.SHAPE, 2048, tmp)
        exes = {m: activations.compile_model(m, args.precision, tmp, MODEL_FILE)
                for m in MODELS}
        times = {m: [] for m in MODELS}
        for _ in range(args.repeats):  # interleaved: a drifting machine moves all alike
            for m in MODELS:
                times[m].append(activations.step_ms(exes[m], files, args.steps,
                                                    args.warmup, tmp, env))
    plain = statistics.median(times[MODELS[0]])
    print(f"{'model':<16}{'ms/step':>10}{'vs plain':>10}   repeats (ms)")
    for m in MODELS:
        ms = statistics.median(times[m])
        runs = ", ".join(f"{t:.1f}" for t in times[m])
        print(f"{m:<16}{ms:>10.1f}{ms / plain:>10.3f}   {runs}")


if __name__ == "__main__":
    main()
