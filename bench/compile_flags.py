#!/usr/bin/env python3
"""A tgc compile flag's effect on the training step: one of run.py's full
rows compiled with and without the flag (e.g. `--fuse-matmul-add=false`),
run interleaved on the same token files; each side's median ms/step and
the median (and range) of the repeats' ratios, flagged over default.

  python3 bench/compile_flags.py --flag=--fuse-matmul-add=false [--rows 3L-d256-V8k]
                                 [--precision fp32|bf16] [--steps N] [--warmup W] [--repeats R]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import activations
import run
import sides
import transformer_config


def compile_row(row, precision, flags, exe):
    preset, config_name = run.ROWS[row][:2]
    config = os.path.join(sides.BENCH, "configs", config_name + ".pbtxt")
    subprocess.run([sides.TGC, "--model", "transformer", "--preset", preset,
                    "--config", config, "--precision=" + precision, *flags, "-o", exe],
                   check=True)
    return transformer_config.load(preset, config)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flag", required=True, help="the tgc flag of the second side")
    parser.add_argument("--rows", default="3L-d256-V8k",
                        help="run.py's full rows, comma-separated")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not os.path.exists(sides.TGC):
        sys.exit(f"error: {sides.TGC} is missing: build tgc first")
    env = dict(os.environ)
    print(f"CPU: {sides.cpu_model()}, {os.cpu_count()} CPUs; precision {args.precision}; "
          f"{args.warmup} + {args.steps} steps, {args.repeats} interleaved repeats")
    print(f"{'row':<14}{'default ms':>12}{args.flag + ' ms':>34}{'ratio':>8}   repeats (ms)")
    for row in args.rows.split(","):
        if row not in run.ROWS or not run.ROWS[row][4]:
            sys.exit(f"error: {row} is not one of run.py's full rows")
        with tempfile.TemporaryDirectory() as tmp:
            sides_exe = {"default": os.path.join(tmp, "default"),
                         "flag": os.path.join(tmp, "flag")}
            c = compile_row(row, args.precision, [], sides_exe["default"])
            compile_row(row, args.precision, [args.flag], sides_exe["flag"])
            files = sides.write_full_length_files(
                c, c.batch_size * (args.warmup + args.steps), tmp)
            times = {side: [] for side in sides_exe}
            for _ in range(args.repeats):  # interleaved: a drifting machine moves both
                for side, exe in sides_exe.items():
                    times[side].append(activations.step_ms(exe, files, args.steps,
                                                           args.warmup, tmp, env))
        default, flagged = (statistics.median(times[s]) for s in ("default", "flag"))
        # Each repeat ran both sides back to back: the median of their
        # ratios, and its range, says more than the ratio of the medians.
        ratios = [f / d for d, f in zip(times["default"], times["flag"])]
        runs = "; ".join(", ".join(f"{t:.1f}" for t in times[s]) for s in times)
        print(f"{row:<14}{default:>12.1f}{flagged:>34.1f}"
              f"{statistics.median(ratios):>8.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
              f"   {runs}")


if __name__ == "__main__":
    main()
