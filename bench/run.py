#!/usr/bin/env python3
"""tgc's compiled training step vs the same model in PyTorch, on the CPU.

For each preset: compile the training binary with tgc (not timed), run it and
bench/pytorch_transformer.py one after the other with the same thread count,
and print step time, target tokens/s, peak RSS, achieved GFLOP/s and the
fraction of the machine's OpenBLAS sgemm peak. See bench/README.md.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import transformer_config

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
TGC = os.path.join(ROOT, "build", "bin", "tgc")
# Timed and warm-up steps per preset when --steps / --warmup are not given:
# about ten seconds of timed work per side on two cores.
DEFAULT_STEPS = {"tiny": (500, 50), "small": (60, 5), "base": (15, 3), "big": (3, 1)}


def run_child(argv, env):
    """Runs argv to completion; returns (output, peak RSS in MiB). wait4 gives
    this child's own rusage (ru_maxrss in KiB on Linux), not the sum over all
    children that resource.getrusage(RUSAGE_CHILDREN) would."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    output = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)  # already reaped
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(argv)} failed ({p.returncode}):\n{output}")
    return output, usage.ru_maxrss / 1024.0


def torch_python():
    """An interpreter that can import torch: this one, else Debian's."""
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if os.path.exists(python) and subprocess.run(
                [python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    sys.exit("error: PyTorch is not installed for python3; on Debian 12 install it "
             "with\n  apt-get install -y python3-torch")


def sgemm_peak(tmp, env):
    exe = os.path.join(tmp, "sgemm_peak")
    subprocess.run(["c++", "-O3", "-o", exe, os.path.join(BENCH, "sgemm_peak.cpp"),
                    "-lopenblas"], check=True)
    output, _ = run_child([exe, "512", "1024", "1536", "2048"], env)
    return float(re.search(r"^peak (\S+)", output, re.M).group(1)), output


def run_tgc(preset, config, steps, warmup, tmp, env):
    """(parameters, ms/step, tokens/s, peak RSS MiB) of the compiled binary.

    The binary's clock starts after initialization, and --metrics writes each
    log line's `elapsed_s` (to the nanosecond; the printed `elapsed` has only
    0.1 s); with the per-step token counts of --loss-log that times the N
    steps after the warm-up inside one run, without start-up or
    initialization.
    """
    exe = os.path.join(tmp, "train_" + preset)
    log, metrics = exe + ".loss", exe + ".metrics"
    compile_cmd = [TGC, "--model", "transformer", "--preset", preset, "--config", config]
    subprocess.run(compile_cmd + ["-o", exe], check=True)
    report = subprocess.run(compile_cmd + ["--memory-report"], check=True,
                            capture_output=True, text=True).stdout
    # The trainable variables' bytes: f32 parameters as the compiler counts them.
    parameters = int(re.search(r"weights\s+(\d+) bytes", report).group(1)) // 4

    # No held-out translation after training; the final checkpoint (written
    # after the timed steps) goes to the temporary directory.
    if os.path.exists(metrics):
        os.remove(metrics)
    _, rss = run_child([exe, "--task", "reverse", "--steps", str(warmup + steps),
                        "--log-every", str(warmup), "--loss-log", log,
                        "--metrics", metrics, "--eval-sentences", "0",
                        "--checkpoint", exe + ".ckpt"], env)
    elapsed = {}
    for line in open(metrics):
        record = json.loads(line)
        if record["kind"] == "train":
            elapsed[record["step"]] = record["elapsed_s"]
    cumulative, total = {}, 0
    for line in open(log):
        step, _, tokens = line.split()
        total += int(tokens)
        cumulative[int(step)] = total
    seconds = elapsed[warmup + steps] - elapsed[warmup]
    tokens = cumulative[warmup + steps] - cumulative[warmup]
    return parameters, 1000.0 * seconds / steps, tokens / seconds, rss


def run_pytorch(python, preset, config, steps, warmup, threads, env):
    output, rss = run_child([python, os.path.join(BENCH, "pytorch_transformer.py"),
                             "--preset", preset, "--config", config, "--steps", str(steps),
                             "--warmup", str(warmup), "--threads", str(threads)], env)
    result = json.loads([l for l in output.splitlines() if l.startswith("{")][-1])
    return result["parameters"], result["step_ms"], result["tokens_per_s"], rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presets", default="tiny,small,base")
    parser.add_argument("--steps", type=int, help="timed steps (default: per preset)")
    parser.add_argument("--warmup", type=int, help="untimed steps first, at least 1")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--omp-wait-policy", default="passive",
                        help="OMP_WAIT_POLICY for both sides; '' leaves it unset (libgomp spins)")
    args = parser.parse_args()
    if args.warmup is not None and args.warmup < 1:
        parser.error("--warmup must be at least 1 (the log line at step W starts the clock)")
    if not os.access(TGC, os.X_OK):
        sys.exit(f"error: {TGC} not found; build the project first (README.md)")
    python = torch_python()

    # Both sides get the same threads: OpenMP for tgc's kernels and PyTorch's
    # ops, OpenBLAS for the GEMMs (tgc: its OpenMP build; PyTorch: its
    # pthreads build). Passive waiting: otherwise idle OpenMP workers spin
    # while OpenBLAS's threads or other programs want the same cores; on 2
    # cores that made steps 1.5-15x slower and erratic (small preset); it
    # costs 15-30% on tiny. See README.md.
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    env.pop("OMP_WAIT_POLICY", None)
    if args.omp_wait_policy:
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy
    rows, mismatch, load = [], False, os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tgc-bench-") as tmp:
        peak, detail = sgemm_peak(tmp, env)
        print(detail, end="", flush=True)
        for preset in args.presets.split(","):
            steps, warmup = DEFAULT_STEPS[preset]
            steps, warmup = args.steps or steps, args.warmup or warmup
            config = os.path.join(BENCH, "configs", preset + ".pbtxt")
            c = transformer_config.load(preset, config)
            print(f"{preset}: {warmup} warm-up + {steps} timed steps per side ...", flush=True)
            tgc = run_tgc(preset, config, steps, warmup, tmp, env)
            torch = run_pytorch(python, preset, config, steps, warmup, args.threads, env)
            mismatch |= tgc[0] != torch[0]
            rows.append((preset, c, tgc, torch))

    # Other work on the machine slows both sides; the load average says how much there was.
    print(f"\n{args.threads} threads, OMP_WAIT_POLICY={args.omp_wait_policy or '(unset)'}; "
          f"OpenBLAS sgemm peak {peak:.1f} GFLOP/s; "
          f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f}; "
          "columns are tgc / PyTorch\n")
    header = ("preset", "parameters", "batch BxS/T", "train GFLOP", "ms/step",
              "tgc/PT", "target tok/s", "GFLOP/s", "% sgemm peak", "peak RSS MiB")
    lines = [header]
    for preset, c, (p1, ms1, tok1, rss1), (p2, ms2, tok2, rss2) in rows:
        gflop = transformer_config.train_flops(c) / 1e9
        g1, g2 = gflop / ms1 * 1e3, gflop / ms2 * 1e3
        lines.append((preset, f"{p1} / {p2}",
                      f"{c.batch_size}x{c.source_length}/{c.target_length}",
                      f"{gflop:.2f}", f"{ms1:.1f} / {ms2:.1f}", f"{ms1 / ms2:.2f}",
                      f"{tok1:.0f} / {tok2:.0f}", f"{g1:.1f} / {g2:.1f}",
                      f"{100 * g1 / peak:.0f} / {100 * g2 / peak:.0f}",
                      f"{rss1:.0f} / {rss2:.0f}"))
    widths = [max(len(l[i]) for l in lines) for i in range(len(header))]
    for i, l in enumerate(lines):
        print("  ".join(v.rjust(w) for v, w in zip(l, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    if mismatch:
        sys.exit("error: the parameter counts differ: the two models are not the same")


if __name__ == "__main__":
    main()
