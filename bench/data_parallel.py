#!/usr/bin/env python3
"""The all-reduce's share of a data-parallel step on one machine.

Compiles the paper's base model (bench/configs/base.pbtxt: 37000-token
vocabulary, 6+6 layers, d_model 512) twice: with the global batch, and with
half of it. Then runs, on the built-in reverse task, with --profile:
  - 1 process x 2 threads on the global batch;
  - 2 processes x 1 thread (mpirun) on half a batch each: the same global
    batches, the gradients summed with MPI.
  - the same with --shard-optimizer: each process sums and updates half of
    the parameters and keeps half of Adam's moments.
Prints each run's ms/step (mean of the timed steps, from the metrics file),
its time in the ops (--profile), the time and share of tg.all_reduce and of
Adam (rank 0's profile: the wait for the slower process included; sharded,
Adam's line holds the reduce-scatter and all-gather), and each process's
resident set while training (the median of samples every 0.1 s).

    python3 bench/data_parallel.py [--batch 16] [--steps 3] [--warmup 1] [--update-freq K]

Needs build/bin/tgc built with MPI and mpirun (bootstrap.sh installs Open MPI).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TGC = os.path.join(ROOT, "build", "bin", "tgc")
MPIRUN = os.path.join(ROOT, "test", "lit", "mpi", "Inputs", "mpirun.sh")


def compile_model(tmp, name, batch, length):
    config = os.path.join(tmp, name + ".pbtxt")
    with open(config, "w") as f:
        f.write("batch_size: %d\nsource_length: %d\ntarget_length: %d\n" %
                (batch, length, length))
    exe = os.path.join(tmp, name)
    subprocess.run([TGC, "--model", "transformer", "--preset", "base",
                    "--config", config, "-o", exe], check=True)
    return exe


def rank_rss(pid):
    """(rank, resident KiB) of a running process, or None."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
        with open("/proc/%d/status" % pid) as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        return int(env.get(b"OMPI_COMM_WORLD_RANK", b"0")), rss
    except (OSError, StopIteration, ValueError):
        return None


def descendants(root):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def run(command, env, metrics):
    """Runs `command`; returns its output, its metrics records and the
    largest resident set each rank had (sampled every 0.1 s, KiB)."""
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    peak = {}
    while child.poll() is None:
        for pid in [child.pid] + descendants(child.pid):
            try:  # the training programs only, not mpirun or the shell
                program = os.path.basename(os.readlink("/proc/%d/exe" % pid))
            except OSError:
                continue
            sample = rank_rss(pid) if program in ("whole", "half") else None
            if sample:
                rank, rss = sample
                peak.setdefault(rank, []).append(rss)
        time.sleep(0.1)
    out, err = child.communicate()
    if child.returncode != 0:
        sys.exit("error: %s failed:\n%s" % (command[0], err))
    records = [json.loads(line) for line in open(metrics)]
    train = [r for r in records if r.get("kind", r.get("type")) != "valid"]
    # The resident set while training: the median sample (the peak is
    # start-up, when every moment is written once, or rank 0's gathering of
    # the moments for the final checkpoint).
    return out, train, {r: sorted(v)[len(v) // 2] for r, v in peak.items()}


def step_ms(train, warmup, steps):
    times = {r["step"]: r["elapsed_s"] for r in train if "elapsed_s" in r}
    return 1e3 * (times[warmup + steps] - times[warmup]) / steps


def ops_ms(out):
    match = re.search(r"^profile of \d+ steps: ([0-9.]+) ms/step in the ops", out,
                      re.M)
    return float(match.group(1)) if match else 0.0


def profile_row(out, kind):
    match = re.search(r"^\s+%s\s+([0-9.]+)\s+([0-9.]+)%%" % re.escape(kind), out,
                      re.M)
    return (float(match.group(1)), float(match.group(2))) if match else (0.0, 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16, help="global batch")
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each (a shared machine's times vary)")
    parser.add_argument("--update-freq", type=int, default=1,
                        help="batches per update, for every run (gradient "
                             "accumulation; sharded: an accumulator of the share)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        whole = compile_model(tmp, "whole", args.batch, args.length)
        half = compile_model(tmp, "half", args.batch // 2, args.length)
        total = args.warmup + args.steps
        common = ["--task", "reverse", "--steps", str(total), "--log-every",
                  str(args.warmup), "--eval-sentences", "0", "--profile",
                  "--update-freq", str(args.update_freq)]
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        print("base, global batch %d x %d/%d, %d batch%s an update, %d timed steps after %d" %
              (args.batch, args.length, args.length, args.update_freq,
               "" if args.update_freq == 1 else "es", args.steps, args.warmup))
        # ms/step: the timed steps' wall time (with the runtime's work
        # between steps: the 2-process run's parameter checksum at every
        # log line); ops: --profile's time in the step's ops, every step.
        mpirun = ["sh", MPIRUN, os.path.join(tmp, "shm"), "-np", "2", "-x",
                  "OMP_NUM_THREADS=1", "-x", "OPENBLAS_NUM_THREADS=1", half]
        runs = [("1 process  x 2 threads", [whole],
                 dict(env, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2")),
                ("2 processes x 1 thread", mpirun, env),
                ("  sharded optimizer", mpirun + ["--shard-optimizer"], env)]
        for attempt in range(args.repeat):
            print("run %d:" % (attempt + 1))
            for index, (name, command, run_env) in enumerate(runs):
                metrics = os.path.join(tmp, "metrics.json")
                # A checkpoint of its own: a run never replaces another's.
                checkpoint = os.path.join(tmp, "run%d-%d.ckpt" % (attempt, index))
                out, train, peak = run(command + common + [
                    "--metrics", metrics, "--checkpoint", checkpoint], run_env, metrics)
                os.remove(metrics)
                line = "  %-24s %8.1f ms/step, %8.1f in the ops" % (
                    name + ":", step_ms(train, args.warmup, args.steps), ops_ms(out))
                reduce_ms, reduce_share = profile_row(out, "tg.all_reduce")
                adam_ms, adam_share = profile_row(out, "tg.multi_adam_update")
                if reduce_ms:
                    line += "; tg.all_reduce %.1f ms (%.1f%%)" % (reduce_ms, reduce_share)
                line += "; Adam%s %.1f ms (%.1f%%)" % (
                    " with its exchanges" if "--shard-optimizer" in command else "",
                    adam_ms, adam_share)
                line += "; RSS MiB " + ", ".join(
                    "rank %d %.0f" % (r, kib / 1024) for r, kib in sorted(peak.items()))
                print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
