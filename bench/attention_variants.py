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
import os

import activations

MODELS = ["attn_plain", "attn_rotary", "attn_alibi", "attn_relative", "attn_rmsnorm"]
MODEL_FILE = os.path.join(activations.sides.BENCH, "models", "AttentionStack.cpp")


if __name__ == "__main__":
    activations.compare(__doc__.splitlines()[0], MODELS, MODEL_FILE, "plain")
