"""The two sides of bench/run.py: tgc's compiled training binary and the
PyTorch model, each run as a child process with its peak RSS; the machine's
GEMM peaks; the full-length token files tgc trains on."""
import json
import os
import random
import re
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
TGC = os.path.join(ROOT, "build", "bin", "tgc")
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
FIRST_SYMBOL, EOS = 3, 2  # runtime/data/Tasks.h


def run_child(argv, env, check=True):
    """Runs argv to completion; returns (output, peak RSS in MiB). wait4 gives
    this child's own rusage (ru_maxrss in KiB on Linux), not the sum over all
    children that resource.getrusage(RUSAGE_CHILDREN) would."""
    return wait_child(start_child(argv, env), argv, check)


def start_child(argv, env):
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def wait_child(p, argv, check=True):
    output = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)  # already reaped
    if check and p.returncode != 0:
        sys.exit(f"error: {' '.join(argv)} failed ({p.returncode}):\n{output}")
    return output, usage.ru_maxrss / 1024.0


def cpu_name_and_flags():
    name, flags = "unknown CPU", set()
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            name = value.strip()
        elif key.strip() == "flags":
            flags = set(value.split())
    return name, flags


def cpu_model():
    """The CPU's model name with the vector extensions that matter here."""
    name, flags = cpu_name_and_flags()
    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
    return f"{name} ({', '.join(f for f in wanted if f in flags) or 'no AVX2'})"


def cpu_has_bf16():
    """Whether the CPU multiplies bf16 in hardware (what tgc's bf16 GEMMs need
    to be faster than f32; elsewhere oneDNN emulates them or fails)."""
    return bool(cpu_name_and_flags()[1] & {"avx512_bf16", "amx_bf16"})


def torch_python():
    """An interpreter that can import torch: this one, else Debian's."""
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if os.path.exists(python) and subprocess.run(
                [python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    sys.exit("error: PyTorch is not installed for python3; on Debian 12 install it "
             "with\n  apt-get install -y python3-torch")


def pytorch_env(env):
    """PyTorch in its fastest honest setting: jemalloc, which keeps freed
    pages for reuse instead of returning and faulting them in again each step,
    when Debian's libjemalloc2 is installed. Returns (env, allocator name)."""
    if not os.path.exists(JEMALLOC):
        return env, "glibc malloc (apt-get install libjemalloc2 for jemalloc)"
    return dict(env, LD_PRELOAD=JEMALLOC,
                MALLOC_CONF="dirty_decay_ms:-1,muzzy_decay_ms:-1"), "jemalloc"


def pytorch_wait_env(torch_env, precision):
    """PyTorch's fastest waiting policy for its OpenMP workers, per precision
    (Debian's torch 1.13 on libgomp, 3+3 Transformer row, 2 threads, Intel Xeon
    with AMX): f32 sleeps at once (OMP_WAIT_POLICY=passive: 902 ms a step,
    libgomp's spinning default 1382, its spinning workers taking the cores
    from OpenBLAS's pthreads); bf16 (oneDNN's GEMMs on the OpenMP threads)
    spins by libgomp's default (389-403 ms, passive 512-525)."""
    env = dict(torch_env)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    if precision != "bf16":
        env["OMP_WAIT_POLICY"] = "passive"
    return env


def gemm_peaks(tmp, env):
    """The f32 (the better of OpenBLAS's and oneDNN's sgemm) and bf16
    (oneDNN) GEMM peaks, GFLOP/s, and the tool's output."""
    exe = os.path.join(tmp, "gemm_peak")
    subprocess.run(["c++", "-O3", "-o", exe, os.path.join(BENCH, "gemm_peak.cpp"),
                    "-lopenblas", "-ldnnl"], check=True)
    output, _ = run_child([exe, "512", "1024", "1536", "2048"], env)
    f32 = float(re.search(r"^peak ([0-9.]+)$", output, re.M).group(1))
    # Without bf16 instructions oneDNN's bf16 GEMM does not run (the tool's
    # times are then meaningless): no bf16 peak.
    bf16 = (float(re.search(r"^peak bf16 ([0-9.]+)$", output, re.M).group(1))
            if cpu_has_bf16() else None)
    return f32, bf16, output


def write_full_length_files(c, pairs, directory):
    """Token-id files of `pairs` random sentences that fill the model's lengths
    (L-1 symbols; the runtime adds EOS or BOS), the target the source reversed.
    Returns (source path, target path)."""
    rng = random.Random(1)
    source, target = (os.path.join(directory, n) for n in ("full.src", "full.tgt"))
    with open(source, "w") as s, open(target, "w") as t:
        for _ in range(pairs):
            symbols = [rng.randrange(FIRST_SYMBOL, c.vocab_size)
                       for _ in range(c.source_length - 1)]
            s.write(" ".join(map(str, symbols)) + "\n")
            t.write(" ".join(map(str, symbols[::-1][:c.target_length - 1])) + "\n")
    return source, target


def compile_tgc(name, preset, config, tmp, precision="fp32"):
    """The training binary (not timed) and the trainable parameter count."""
    exe = os.path.join(tmp, f"train_{name}_{precision}")
    command = [TGC, "--model", "transformer", "--preset", preset, "--config", config,
               "--precision=" + precision]
    subprocess.run(command + ["-o", exe], check=True)
    report = subprocess.run(command + ["--memory-report"], check=True,
                            capture_output=True, text=True).stdout
    # The trainable variables' bytes: f32 parameters as the compiler counts them.
    parameters = int(re.search(r"weights\s+(\d+) bytes", report).group(1)) // 4
    return exe, parameters


def tgc_argv(exe, data, steps, warmup, tag=""):
    """The binary's command line: --profile for the GEMMs' share (its clock
    costs about 20 ns per op), no evaluation, files beside the binary."""
    base = exe + tag
    return ([exe] + data + ["--steps", str(warmup + steps), "--log-every", str(warmup),
                            "--loss-log", base + ".loss", "--metrics", base + ".metrics",
                            "--eval-sentences", "0", "--checkpoint", base + ".ckpt",
                            "--profile"])


def timed_steps(argv, steps, warmup):
    """(seconds, target tokens) of the N steps after the warm-up of a run of
    the training binary `argv` (with --loss-log and --metrics): the binary's
    clock starts after initialization, --metrics writes each log line's
    `elapsed_s`, --loss-log each step's tokens."""
    base = argv[argv.index("--loss-log") + 1][:-len(".loss")]
    elapsed = {}
    for line in open(base + ".metrics"):
        record = json.loads(line)
        if record["kind"] == "train":
            elapsed[record["step"]] = record["elapsed_s"]
    cumulative, total = {}, 0
    for line in open(base + ".loss"):
        step, _, tokens = line.split()
        total += int(tokens)
        cumulative[int(step)] = total
    return (elapsed[warmup + steps] - elapsed[warmup],
            cumulative[warmup + steps] - cumulative[warmup])


def tgc_result(argv, output, rss, steps, warmup):
    """ms/step, tokens/s, peak RSS, planned MiB and GEMM share of one run
    (the N steps after the warm-up inside one run, without start-up:
    timed_steps)."""
    seconds, tokens = timed_steps(argv, steps, warmup)
    state = float(re.search(r"state (\S+) MiB", output).group(1))
    arena = float(re.search(r"arena \d+ bytes \((\S+) MiB\)", output).group(1))
    share = float(re.search(r"^GEMMs \(.*\): (\S+)% of the step", output, re.M).group(1))
    return {"ms": 1000.0 * seconds / steps, "tokens_per_s": tokens / seconds,
            "rss_mib": rss, "planned_mib": state + arena, "gemm_share": share / 100}


def run_tgc(exe, data, steps, warmup, env):
    for suffix in (".metrics", ".loss", ".ckpt", ".ckpt.lock"):
        if os.path.exists(exe + suffix):
            os.remove(exe + suffix)
    argv = tgc_argv(exe, data, steps, warmup)
    output, rss = run_child(argv, env)
    return tgc_result(argv, output, rss, steps, warmup)


def run_pytorch(python, preset, config, steps, warmup, threads, full_length, env,
                precision="fp32"):
    """PyTorch's step; precision bf16: under torch.autocast's bf16 (the peer
    of tgc --precision=bf16, and PyTorch's fastest on a CPU with bf16
    instructions)."""
    argv = [python, os.path.join(BENCH, "pytorch_transformer.py"), "--preset", preset,
            "--config", config, "--steps", str(steps), "--warmup", str(warmup),
            "--threads", str(threads), "--gemm-share", "2", "--precision", precision]
    output, rss = run_child(argv + (["--full-length"] if full_length else []),
                            pytorch_wait_env(env, precision))
    result = json.loads([l for l in output.splitlines() if l.startswith("{")][-1])
    return {"parameters": result["parameters"], "ms": result["step_ms"],
            "tokens_per_s": result["tokens_per_s"], "rss_mib": rss,
            "gemm_share": result["gemm_share"], "torch": result["torch"]}
