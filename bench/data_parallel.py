#!/usr/bin/env python3
"""The all-reduce's share of a data-parallel step on one machine.

Compiles the paper's base model (bench/configs/base.pbtxt: 37000-token
vocabulary, 6+6 layers, d_model 512) twice: with the global batch, and with
half of it. Then runs, on the built-in reverse task, with --profile:
  - 1 process x 2 threads on the global batch;
  - 2 processes x 1 thread (mpirun) on half a batch each: the same global
    batches, the gradients summed with MPI.
Prints each run's ms/step (mean of the timed steps, from the metrics file)
and, for the 2-process run, the time and share of tg.all_reduce (rank 0's
profile: the wait for the slower process included).

    python3 bench/data_parallel.py [--batch 16] [--steps 3] [--warmup 1]

Needs build/bin/tgc built with MPI and mpirun (bootstrap.sh installs Open MPI).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

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


def run(command, env, metrics):
    out = subprocess.run(command, env=env, check=True, capture_output=True,
                         text=True).stdout
    records = [json.loads(line) for line in open(metrics)]
    train = [r for r in records if r.get("kind", r.get("type")) != "valid"]
    return out, train


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
                        help="runs of both (a shared machine's times vary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        whole = compile_model(tmp, "whole", args.batch, args.length)
        half = compile_model(tmp, "half", args.batch // 2, args.length)
        total = args.warmup + args.steps
        common = ["--task", "reverse", "--steps", str(total), "--log-every",
                  str(args.warmup), "--eval-sentences", "0", "--profile"]
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        print("base, global batch %d x %d/%d, %d timed steps after %d" %
              (args.batch, args.length, args.length, args.steps, args.warmup))
        # ms/step: the timed steps' wall time (with the runtime's work
        # between steps: the 2-process run's parameter checksum at every
        # log line); ops: --profile's time in the step's ops, every step.
        for attempt in range(args.repeat):
            one, one_train = run([whole] + common + [
                "--metrics", os.path.join(tmp, "one.json"),
                "--checkpoint", os.path.join(tmp, "one.ckpt")],
                dict(env, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2"),
                os.path.join(tmp, "one.json"))
            two, two_train = run(["sh", MPIRUN, os.path.join(tmp, "shm"), "-np",
                                  "2", "-x", "OMP_NUM_THREADS=1",
                                  "-x", "OPENBLAS_NUM_THREADS=1", half] + common + [
                "--metrics", os.path.join(tmp, "two.json"),
                "--checkpoint", os.path.join(tmp, "two.ckpt")],
                env, os.path.join(tmp, "two.json"))
            for f in ("one.json", "two.json"):
                os.remove(os.path.join(tmp, f))
            reduce_ms, reduce_share = profile_row(two, "tg.all_reduce")
            adam_ms, adam_share = profile_row(two, "tg.multi_adam_update")
            print("run %d:" % (attempt + 1))
            print("  1 process  x 2 threads: %8.1f ms/step, %8.1f in the ops" %
                  (step_ms(one_train, args.warmup, args.steps), ops_ms(one)))
            print("  2 processes x 1 thread: %8.1f ms/step, %8.1f in the ops; "
                  "tg.all_reduce %.1f ms (%.1f%% of the ops), Adam %.1f ms "
                  "(%.1f%%)" % (step_ms(two_train, args.warmup, args.steps),
                                ops_ms(two), reduce_ms, reduce_share, adam_ms,
                                adam_share), flush=True)


if __name__ == "__main__":
    sys.exit(main())
