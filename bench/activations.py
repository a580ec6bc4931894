#!/usr/bin/env python3
"""The FFN activation's cost in tgc's training step: the same stack of
feed-forward blocks (bench/models/FeedForwardStack.cpp: d_model 512, d_ff
2048, 4 blocks, 32 x 64 full-length tokens, vocabulary 1000) with ReLU, GELU
(erf and tanh forms) and SiLU, compiled with `tgc --model-file`, run
interleaved on the same token files; step time and the ratio to ReLU's.

  python3 bench/activations.py [--steps N] [--warmup W] [--repeats R] [--precision fp32|bf16]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import types

import sides

MODELS = ["ffn_relu", "ffn_gelu", "ffn_gelu_tanh", "ffn_silu"]
MODEL_FILE = os.path.join(sides.BENCH, "models", "FeedForwardStack.cpp")
SHAPE = types.SimpleNamespace(vocab_size=1000, source_length=64, target_length=64)


def compile_model(name, precision, tmp, model_file=MODEL_FILE):
    exe = os.path.join(tmp, f"{name}_{precision}")
    subprocess.run([sides.TGC, "--model-file", model_file, "--model", name,
                    "--precision=" + precision, "-o", exe], check=True)
    return exe


def step_ms(exe, files, steps, warmup, tmp, env):
    """Mean ms/step of `steps` steps after `warmup` (the metrics file's
    elapsed time between the two)."""
    metrics = os.path.join(tmp, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    checkpoint = os.path.join(tmp, "ck")
    for leftover in (checkpoint, checkpoint + ".lock"):
        if os.path.exists(leftover):
            os.remove(leftover)
    sides.run_child([exe, "--train-source", files[0], "--train-target", files[1],
                     "--steps", str(warmup + steps), "--log-every", str(warmup),
                     "--eval-sentences", "0", "--checkpoint", checkpoint,
                     "--metrics", metrics], env)
    elapsed = {}
    for line in open(metrics):
        step = re.search(r'"step": ?([0-9]+)', line)
        seconds = re.search(r'"elapsed_s": ?([0-9.e+-]+)', line)
        if step and seconds:
            elapsed[int(step.group(1))] = float(seconds.group(1))
    return 1000.0 * (elapsed[warmup + steps] - elapsed[warmup]) / steps


def compare(description, models, model_file, baseline):
    """Compiles `models` from `model_file`, runs them interleaved on the same
    full-length token files and prints each one's ms/step and its ratio to
    the first's (named `baseline` in the header)."""
    parser = argparse.ArgumentParser(description=description)
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
        files = sides.write_full_length_files(SHAPE, 2048, tmp)
        exes = {m: compile_model(m, args.precision, tmp, model_file) for m in models}
        times = {m: [] for m in models}
        for _ in range(args.repeats):  # interleaved: a drifting machine moves all alike
            for m in models:
                times[m].append(step_ms(exes[m], files, args.steps, args.warmup, tmp, env))
    first = statistics.median(times[models[0]])
    print(f"{'model':<16}{'ms/step':>10}{'vs ' + baseline:>10}   repeats (ms)")
    for m in models:
        ms = statistics.median(times[m])
        runs = ", ".join(f"{t:.1f}" for t in times[m])
        print(f"{m:<16}{ms:>10.1f}{ms / first:>10.3f}   {runs}")


if __name__ == "__main__":
    compare(__doc__.splitlines()[0], MODELS, MODEL_FILE, "ReLU")
