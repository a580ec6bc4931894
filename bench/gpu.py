#!/usr/bin/env python3
"""tgc's GPU training step against PyTorch's on the same GPU, in one run.

For the base and big Transformers at about 25k target positions a step
(configs/base-gpu.pbtxt, configs/big-gpu.pbtxt: 384 x 64/64 of the reverse
task), in f32 and bf16: ms/step, tokens/s, MFU against the GEMM peaks
measured in the same run (torch.matmul, 8192^3, no TF32), peak device memory
(the GPU's used memory from nvidia-smi, sampled, over its level before the
run: the CUDA context included on both sides) and kernel launches per step (tgc: the captured graph's kernels,
which --cuda-graphs reports; PyTorch: torch.profiler's launch calls).

tgc runs its program op by op and with --cuda-graphs; a bf16 program also
with --fused-attention, alone and with graphs. PyTorch runs eager, with its
fused attention (scaled_dot_product_attention), fused Adam and, for bf16,
autocast, then under torch.compile where it can.

    python3 bench/gpu.py --programs DIR [--rows base,big] [--json F] [--timeout S]
                         [--pytorch eager,compile]

Each side prints its line as it finishes and, with --json, the file is
rewritten after every side; a side that takes more than --timeout seconds
(a hung kernel) is killed and reported as failed. The exit status is 1
where a tgc side failed.

DIR holds the training programs base_fp32, base_bf16, big_fp32, big_bf16:
    tgc --model transformer --preset P --config bench/configs/P-gpu.pbtxt \\
        --target=cuda --precision=X -o DIR/P_X
(test/gpu/run_gpu_checks.sh and bundle_gpu_checks.sh build them).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import sides  # noqa: E402
import transformer_config  # noqa: E402

# The targets for the bf16 rows: (ms/step at most, speed against
# eager, against torch.compile, MFU), None where none is set.
TARGETS = {"base": (30.0, 1.7, 1.25, 0.40), "big": (None, 1.5, None, None)}


def nvidia_smi(arguments):
    """nvidia-smi's output, or None where it is missing or fails."""
    try:
        run = subprocess.run(["nvidia-smi"] + arguments, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def device_used_mib():
    """The first GPU's used memory, MiB, as nvidia-smi reports it (None
    without it)."""
    out = nvidia_smi(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
    lines = out.splitlines() if out else []
    return int(lines[0]) if lines and lines[0].strip().isdigit() else None


class DeviceMemory:
    """The most device memory a child takes while it runs, MiB: the GPU's
    used memory, sampled every 0.2 s, over what it was before the child
    started (a GPU of the bench's own, the child's CUDA context included;
    the GPU-wide figure, because a container's nvidia-smi often lists no
    processes). None without nvidia-smi."""

    def __init__(self):
        self.before, self.peak = device_used_mib(), None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def start(self):
        self.thread.start()

    def sample(self):
        while self.before is not None and not self.stopped.is_set():
            used = device_used_mib()
            if used is None:
                return
            self.peak = max(self.peak or 0, used - self.before)
            self.stopped.wait(0.2)

    def stop(self):
        self.stopped.set()
        if self.thread.is_alive():
            self.thread.join()
        return self.peak


def run_sampled(argv, timeout):
    """Runs argv for at most `timeout` seconds; returns (exit code, output,
    peak device MiB), the code None where it ran out of time (a hung kernel
    costs one side, not the run)."""
    memory = DeviceMemory()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    memory.start()
    try:
        output, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(p)
        try:  # what it printed, unless a process it left holds the pipe
            output, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            output = ""
        return None, output, memory.stop()
    except BaseException:  # Ctrl-C: the side goes too
        kill(p)
        raise
    return p.returncode, output, memory.stop()


def kill(p):
    """Kills p's process group (a program and what it started)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def failure(code, output, timeout):
    """The error entry of a side that failed or ran out of time."""
    last = output.strip().splitlines()[-1:]
    if code is None:
        return {"error": f"no result within {timeout} s: {last}"}
    return {"error": f"exit {code}: {last}"}


def gemm_peaks(python):
    """{'fp32': TFLOP/s, 'bf16': TFLOP/s} of torch.matmul at 8192^3 (f32
    without TF32), or {} where PyTorch has no GPU."""
    code = """
import json, torch
torch.backends.cuda.matmul.allow_tf32 = False
n, peaks = 8192, {}
for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
    a, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(2))
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        a @ b
    end.record()
    torch.cuda.synchronize()
    peaks[name] = 2 * n**3 * 20 / (start.elapsed_time(end) / 1000) / 1e12
print(json.dumps(peaks))
"""
    try:
        run = subprocess.run([python, "-c", code], capture_output=True, text=True,
                             timeout=300)
    except subprocess.TimeoutExpired:
        return {}
    return json.loads(run.stdout) if run.returncode == 0 else {}


def run_tgc(exe, flags, steps, warmup, tmp, timeout):
    base = os.path.join(tmp, os.path.basename(exe) + "".join(flags).replace("-", "_"))
    argv = [exe, "--task", "reverse", "--steps", str(warmup + steps), "--log-every",
            str(warmup), "--eval-sentences", "0", "--loss-log", base + ".loss",
            "--metrics", base + ".metrics", "--checkpoint", base + ".ckpt"] + flags
    code, output, memory = run_sampled(argv, timeout)
    if code != 0:
        return failure(code, output, timeout)
    seconds, tokens = sides.timed_steps(argv, steps, warmup)
    kernels = re.search(r"a step is one graph of (\d+) kernels", output)
    unfused = re.search(r"^note: --fused-attention: .*$", output, re.M)
    for suffix in (".ckpt", ".ckpt.best"):
        if os.path.exists(base + suffix):
            os.remove(base + suffix)
    return {"ms": 1000.0 * seconds / steps, "tokens_per_s": tokens / seconds,
            "device_mib": memory, "launches": int(kernels.group(1)) if kernels else None,
            "note": unfused.group(0) if unfused else None}


def run_pytorch(python, preset, config, precision, compiled, steps, warmup, timeout):
    argv = [python, os.path.join(BENCH, "pytorch_transformer.py"), "--preset", preset,
            "--config", config, "--device", "cuda", "--precision", precision,
            "--steps", str(steps), "--warmup", str(warmup), "--launches", "2"]
    code, output, memory = run_sampled(argv + (["--compile"] if compiled else []), timeout)
    lines = [l for l in output.splitlines() if l.startswith("{")]
    if code != 0 or not lines:
        return failure(code, output, timeout)
    result = json.loads(lines[-1])
    return {"ms": result["step_ms"], "tokens_per_s": result["tokens_per_s"],
            "device_mib": memory, "launches": result.get("launches_per_step"),
            "torch": result["torch"]}


def cell(value, form):
    return "n/a" if value is None else form.format(value)


def summary(r):
    """One side's result in a line, printed as soon as it is measured."""
    if "error" in r:
        return "failed: " + r["error"]
    return (f"{r['ms']:.1f} ms/step, {r['tokens_per_s']:.0f} tokens/s, peak device "
            f"{cell(r['device_mib'], '{:.0f}')} MiB, launches/step {cell(r['launches'], '{:.0f}')}")


def save(path, gpu, peaks, rows):
    """The results so far as JSON (after every side: a run cut short keeps
    what it measured)."""
    if path:
        with open(path + ".part", "w") as f:
            json.dump({"gpu": gpu, "gemm_peaks_tflops": peaks, "rows": rows}, f, indent=1)
        os.replace(path + ".part", path)


def report(rows, peaks):
    print("\n| row | side | ms/step | tokens/s | MFU | peak device MiB | launches/step "
          "| vs PyTorch eager | vs torch.compile |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        eager = row["sides"].get("PyTorch eager", {}).get("ms")
        compiled = row["sides"].get("torch.compile", {}).get("ms")
        peak = peaks.get(row["precision"])
        for side, r in row["sides"].items():
            if "error" in r:
                print(f"| {row['name']} | {side} | failed: {r['error']} |||||||")
                continue
            mfu = row["flops"] / (r["ms"] / 1000) / (peak * 1e12) if peak else None
            speed = lambda other: other / r["ms"] if other else None
            print(f"| {row['name']} | {side} | {r['ms']:.1f} | {r['tokens_per_s']:.0f} "
                  f"| {cell(mfu, '{:.0%}')} | {cell(r['device_mib'], '{:.0f}')} "
                  f"| {cell(r['launches'], '{:.0f}')} | {cell(speed(eager), '{:.2f}x')} "
                  f"| {cell(speed(compiled), '{:.2f}x')} |")
            if r.get("note"):
                print(f"|  | ({r['note']}) |||||||")


def check_targets(rows, peaks):
    """Says, for the bf16 rows, which of the issue's targets tgc's fastest
    setting meets."""
    for row in rows:
        target = TARGETS.get(row["preset"])
        if row["precision"] != "bf16" or not target:
            continue
        tgc = [r for side, r in row["sides"].items()
               if side.startswith("tgc") and "ms" in r]
        if not tgc:
            continue
        best = min(tgc, key=lambda r: r["ms"])
        eager = row["sides"].get("PyTorch eager", {}).get("ms")
        compiled = row["sides"].get("torch.compile", {}).get("ms")
        ms_max, eager_min, compile_min, mfu_min = target
        peak = peaks.get("bf16")
        checks = []
        if ms_max:
            checks.append((f"<= {ms_max} ms/step", best["ms"] <= ms_max))
        if eager_min and eager:
            checks.append((f">= {eager_min}x PyTorch eager", eager / best["ms"] >= eager_min))
        if compile_min and compiled:
            checks.append((f">= {compile_min}x torch.compile",
                           compiled / best["ms"] >= compile_min))
        if mfu_min and peak:
            mfu = row["flops"] / (best["ms"] / 1000) / (peak * 1e12)
            checks.append((f"MFU >= {mfu_min:.0%}", mfu >= mfu_min))
        print(f"{row['name']} targets (tgc's fastest, {best['ms']:.1f} ms): " +
              "; ".join(f"{what}: {'met' if ok else 'NOT met'}" for what, ok in checks))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", required=True, help="directory of the tgc programs")
    parser.add_argument("--rows", default="base,big")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--configs", default=os.path.join(BENCH, "configs"),
                        help="where P-gpu.pbtxt are")
    parser.add_argument("--json", metavar="FILE",
                        help="the results, rewritten after every side")
    parser.add_argument("--pytorch", default="eager,compile",
                        help="PyTorch's sides: eager, compile, both, or none ('')")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds a side may take (start-up and compilation included)")
    args = parser.parse_args()
    # A time limit's SIGTERM ends the run as Ctrl-C does: the side running
    # (its own process group) is killed, not left on the GPU.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    python = sys.executable
    gpu = nvidia_smi(["--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
    print("GPU:", gpu or "unknown (no nvidia-smi)")
    peaks = gemm_peaks(python)
    print("GEMM peaks, TFLOP/s (torch.matmul 8192^3):",
          ", ".join(f"{k} {v:.0f}" for k, v in peaks.items()) or "n/a (no PyTorch with CUDA)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for preset in args.rows.split(","):
            config = os.path.join(args.configs, f"{preset}-gpu.pbtxt")
            c = transformer_config.load(preset, config)
            for precision in args.precisions.split(","):
                exe = os.path.join(args.programs, f"{preset}_{precision}")
                variants = [("tgc", ["--cuda-graphs=false"]), ("tgc graphs", ["--cuda-graphs"])]
                if precision == "bf16":
                    variants += [("tgc fused attention",
                                  ["--fused-attention", "--cuda-graphs=false"]),
                                 ("tgc fused + graphs", ["--fused-attention", "--cuda-graphs"])]
                row = {"name": f"{preset} {precision}", "preset": preset,
                       "precision": precision, "flops": transformer_config.train_flops(c),
                       "sides": {}}
                rows.append(row)
                plan = [(side, flags, None) for side, flags in variants]
                plan += [(side, None, compiled) for side, compiled, name in
                         (("PyTorch eager", False, "eager"), ("torch.compile", True, "compile"))
                         if name in args.pytorch.split(",")]
                for side, flags, compiled in plan:
                    print(f"{row['name']}: {side} ...", end=" ", flush=True)
                    if flags is None:
                        result = run_pytorch(python, preset, config, precision, compiled,
                                             args.steps, args.warmup, args.timeout)
                    elif os.path.exists(exe):
                        result = run_tgc(exe, flags, args.steps, args.warmup, tmp, args.timeout)
                    else:
                        result = {"error": f"no program {exe}"}
                    row["sides"][side] = result
                    print(summary(row["sides"][side]), flush=True)
                    save(args.json, gpu, peaks, rows)
    report(rows, peaks)
    check_targets(rows, peaks)
    # A tgc side that failed fails the run (PyTorch's say so in the table).
    return int(any("error" in r for row in rows for side, r in row["sides"].items()
                   if side.startswith("tgc")))


if __name__ == "__main__":
    sys.exit(main())
