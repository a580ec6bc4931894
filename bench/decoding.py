#!/usr/bin/env python3
"""Translation speed: the incremental decoder against full recomputation.

Builds the README's worked example (a generated numbers corpus, a joint BPE
vocabulary, the tiny model with buckets fitted to the corpus), trains it, then
translates the test set four ways in one run: greedy and beam search, each
with the compiled incremental decoder (@encode once, @decode_step per token
with cached keys and values) and with @predict over every whole prefix per
token (--decoder full). The outputs of the two decoders must be identical;
the table gives seconds, output tokens/s, peak RSS and the speed-up. See
bench/README.md.
"""
import argparse
import filecmp
import os
import re
import sys
import tempfile

from sides import ROOT, TGC, run_child

TGC_DATA = os.path.join(ROOT, "build", "bin", "tgc-data")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=6000, help="training pairs")
    parser.add_argument("--test-pairs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=1000, help="training steps")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    for tool in (TGC, TGC_DATA):
        if not os.path.exists(tool):
            sys.exit(f"error: {tool} is missing; build the project first")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads), OMP_WAIT_POLICY="passive")

    with tempfile.TemporaryDirectory() as tmp:
        def path(name):
            return os.path.join(tmp, name)

        def run(*argv):
            return run_child([str(a) for a in argv], env)

        run(TGC_DATA, "sample", "--pairs", args.pairs, "-o", path("train"))
        run(TGC_DATA, "sample", "--split", "test", "--pairs", args.test_pairs,
            "-o", path("test"))
        run(TGC_DATA, "vocab", "--size", 320, "-o", path("spm"),
            path("train.src"), path("train.tgt"))
        run(TGC_DATA, "encode", "--vocab", path("spm.model"), "--source",
            path("train.src"), "--target", path("train.tgt"), "-o", path("train.tok"))
        run(TGC, "--model", "transformer", "--preset", "tiny", "--config",
            os.path.join(ROOT, "models", "configs", "numbers.pbtxt"),
            "--corpus", path("train.tok"), "--max-tokens", 640, "-o", path("train"))
        run(path("train"), "--train-data", path("train.tok"), "--steps", args.steps,
            "--log-every", args.steps, "--eval-sentences", 0,
            "--checkpoint", path("model.ckpt"))

        print(f"tiny model, {args.steps} steps on {args.pairs} pairs; "
              f"{args.test_pairs} test sentences; {args.threads} threads")
        print(f"{'search':<10} {'decoder':<12} {'seconds':>8} {'tok/s':>8} "
              f"{'RSS MiB':>8} {'speed-up':>9}")
        for search in ("greedy", "beam"):
            seconds = {}
            for decoder in ("full", "incremental"):
                out = path(f"{search}.{decoder}")
                output, rss = run(
                    path("train"), "--translate", path("test.src"), "--resume",
                    path("model.ckpt"), "--vocab", path("spm.model"), "--search",
                    search, "--beam", args.beam, "--decoder", decoder, "--output", out)
                m = re.search(r"translated \d+ lines \((\d+) tokens\) in ([0-9.]+)s",
                              output)
                if not m:
                    sys.exit(f"error: no timing line in:\n{output}")
                tokens, seconds[decoder] = int(m.group(1)), float(m.group(2))
                speedup = (f"{seconds['full'] / seconds[decoder]:8.1f}x"
                           if decoder == "incremental" else "")
                label = search if search == "greedy" else f"beam {args.beam}"
                print(f"{label:<10} {decoder:<12} {seconds[decoder]:8.2f} "
                      f"{tokens / seconds[decoder]:8.0f} {rss:8.1f} {speedup:>9}")
            if not filecmp.cmp(path(f"{search}.full"), path(f"{search}.incremental"),
                               shallow=False):
                sys.exit(f"error: {search}: the decoders' outputs differ")
        print("the incremental and full decoders' outputs are identical")


if __name__ == "__main__":
    main()
