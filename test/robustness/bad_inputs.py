#!/usr/bin/env python3
"""Feeds tgc, a training program and tgc-data bad inputs and sorts the outcomes.

Usage: python3 test/robustness/bad_inputs.py [--build build] [--only SUBSTRING] [-v] [--keep]

Each case is a command that must fail (or, marked ok, succeed) with a clear
error, and may name files it must leave as they were (their bytes, link
target or kind). An outcome is one of:
  clear   non-zero exit below 128 with a message naming what is wrong
          (where the case says, the file, field or flag it must name), or
          exit 0 for the cases marked ok;
  damage  a file the case keeps was changed, replaced or removed;
  crash   a signal, an exit of 128 or more, or a crash report (stack dump,
          assertion, sanitizer) in the output;
  hang    still running after --timeout seconds (default 120);
  silent  exit 0 where an error was due;
  vague   non-zero exit without the expected words in the message.
Prints one line per case that is not "clear" (all with -v) and the totals,
and exits 1 when any case is not clear (ctest runs it: robustness.bad_inputs).
The fixtures are written to a temporary directory, removed at the end
unless a case was not clear or --keep asks to keep them. Text inputs may be FIFOs
(process substitution): reading one without a writer waits, as `cat` does,
so only checkpoints (which must be regular files) are tried as FIFOs. The lit tests check the
messages word for word; this is the wide net (docs/limits.md has the rules).
"""
import argparse
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--build", default="build")
parser.add_argument("--only", default="")
parser.add_argument("--timeout", type=float, default=120)
parser.add_argument("-v", action="store_true")
parser.add_argument("--keep", action="store_true", help="keep the fixtures")
args = parser.parse_args()

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = os.path.abspath(args.build)
TGC = os.path.join(build, "bin", "tgc")
OPT = os.path.join(build, "bin", "tgc-opt")
DATA = os.path.join(build, "bin", "tgc-data")
work = tempfile.mkdtemp(prefix="tgc-bad-inputs-")
os.chdir(work)


def write(name, content, mode="w"):
    with open(name, mode) as f:
        f.write(content)
    return os.path.join(work, name)


cases = []  # (name, argv, expect words, must fail, files kept)


def later_flags_win(argv):
    """A training program's command with each "--flag value" of the shared
    prefix P dropped where the case gives that flag again (a program
    refuses a flag given twice), and all of them for a case that
    translates, generates or scores (which refuse training flags)."""
    if argv[:len(P)] != P:
        return argv
    later = set(argv[len(P):])
    if later & {"--translate", "--generate", "--score"}:
        return [argv[0]] + argv[len(P):]
    prefix = [argv[0]]
    for i in range(1, len(P), 2):
        if P[i] not in later:
            prefix += P[i:i + 2]
    return prefix + argv[len(P):]


def case(name, argv, words=(), ok=False, kept=()):
    """`words`: what the message must name (a file, field or flag);
    `kept`: files the command must leave as they were."""
    argv = later_flags_win(argv) if argv[:1] == ["./train"] else argv
    cases.append((name, argv, tuple(w for w in words if w != "error"), not ok,
                  tuple(kept)))


def snapshot(path):
    """What `path` is: its bytes, its link's target, its entries or its
    kind; None when there is nothing."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(status.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(status.st_mode):
        with open(path, "rb") as f:
            return ("file", f.read())
    if stat.S_ISDIR(status.st_mode):
        return ("directory", sorted(os.listdir(path)))
    return ("kind", stat.S_IFMT(status.st_mode))


# --- fixtures ---------------------------------------------------------------
GOOD_MLIR = open(os.path.join(root, "test/lit/tgc/Inputs/ffn.mlir")).read()
ATTENTION = ('func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>, %b: {B}) -> tensor<1x2x3x4xf32> { %o, %l = tg.attention %q, %k, %v bias %b {CAUSAL}scale 5.000000e-01 dropout 0.000000e+00 op_id 0 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, {B}) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>) return %o : tensor<1x2x3x4xf32> }')
os.mkdir("adir")
os.mkfifo("afifo")
write("empty", "")
write("garbage.bin", bytes(random.Random(1).randrange(256) for _ in range(4096)), "wb")

# --- tgc on .mlir -----------------------------------------------------------
mlir = {
    "syntax": "func.func @f( {",
    "unknown-op": "func.func @f() { tg.nope }",
    "unknown-dialect": 'func.func @f() { "zz.op"() : () -> () return }',
    "bad-type": "func.func @f(%x: tensor<2xbogus>) { return }",
    "zero-dim": "tg.variable @w trainable init(zeros) : tensor<0x3xf32>",
    "negative-dim": "tg.variable @w trainable init(zeros) : tensor<-1x3xf32>",
    "dynamic-dim": "tg.variable @w trainable init(zeros) : tensor<?x3xf32>",
    "huge-dim": "tg.variable @w trainable init(zeros) : tensor<4611686018427387904x4611686018427387904xf32>",
    "matmul-mismatch": "func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> { %c = tg.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32> return %c : tensor<2x5xf32> }",
    "no-loss": "func.func @g() { return }",
    "deep-attr": "module attributes {x = " + "[" * 10000 + "]" * 10000 + "} {}",
    "deep-module": "module {" * 10000 + "}" * 10000,
    "deep-parens": "func.func @f() { %0 = " + "(" * 10000 + ")" * 10000 + " }",
    "unterminated-string": 'module attributes {x = "abc} {}',
    "nul-bytes": "module {}\0\0\0",
    "dropout-opid": "func.func @f(%x: tensor<4xf32>, %k: tensor<2xi32>) -> tensor<4xf32> { %y = tg.dropout %x, %k rate 1.000000e-01 op_id 4294967296 : tensor<4xf32> return %y : tensor<4xf32> }",
    "dropout-rate": "func.func @f(%x: tensor<4xf32>, %k: tensor<2xi32>) -> tensor<4xf32> { %y = tg.dropout %x, %k rate 1.5 op_id 0 : tensor<4xf32> return %y : tensor<4xf32> }",
    "truncated-good": GOOD_MLIR[: len(GOOD_MLIR) // 2],
    # Score biases of tg.attention: the wrong rank, a head count that is
    # neither 1 nor H, keys that do not match, an i32 bias.
    "bias-rank": ATTENTION.replace("{B}", "tensor<3x3xf32>").replace("{CAUSAL}", ""),
    "bias-heads": ATTENTION.replace("{B}", "tensor<1x3x3x3xf32>").replace("{CAUSAL}", ""),
    "bias-keys": ATTENTION.replace("{B}", "tensor<1x2x3x5xf32>").replace("{CAUSAL}", "causal "),
    "bias-i32": ATTENTION.replace("{B}", "tensor<1x2x3x3xi32>").replace("{CAUSAL}", ""),
}
for name, text in mlir.items():
    path = write(name + ".mlir", text)
    case("tgc .mlir " + name, [TGC, path, "--emit=train"])
    case("tgc-opt .mlir " + name, [OPT, path, "--tg-training-pipeline"])
for name in ["zero-dim", "huge-dim"]:
    case("tgc -o .mlir " + name, [TGC, os.path.join(work, name + ".mlir"), "-o", "prog"])
case("tgc /dev/zero", [TGC, "/dev/zero", "--emit=tg"])
case("tgc directory", [TGC, "adir", "--emit=tg"], ("error", "adir"))
case("tgc empty file", [TGC, "empty", "--emit=train"])
case("tgc missing file", [TGC, "nonexistent.mlir"], ("error", "nonexistent"))
case("tgc garbage", [TGC, "garbage.bin", "--emit=tg"])
case("tgc-opt /dev/zero", [OPT, "/dev/zero"])
case("tgc-opt directory", [OPT, "adir"])

# --- tgc configs ------------------------------------------------------------
configs = {
    "unknown-field": ("d_modle: 64", "d_modle"),
    "wrong-type": ('d_model: "big"', "d_model"),
    "negative": ("d_model: -4", "d_model"),
    "zero-heads": ("num_heads: 0", "num_heads"),
    "heads-divide": ("num_heads: 5", "num_heads"),
    "odd-dmodel": ("d_model: 33\nnum_heads: 3", "d_model"),
    "dropout-1": ("dropout: 1.0", "dropout"),
    "dropout-nan": ("dropout: nan", "dropout"),
    "lr-inf": ("lr_factor: inf", "lr_factor"),
    "lr-nan": ("lr_factor: nan", "lr_factor"),
    "lr-zero": ("lr_factor: 0", "lr_factor"),
    "eps-zero": ("layer_norm_epsilon: 0", "epsilon"),
    "beta-1": ("adam_beta2: 1.0", "adam_beta2"),
    "huge-source": ("source_length: 100000", "source_length"),
    "huge-target": ("target_length: 100000", "target_length"),
    "huge-layers": ("decoder_layers: 200", "decoder_layers"),
    "huge-vocab": ("vocab_size: 4611686018427387904", "vocab_size"),
    "huge-batch": ("batch_size: 100000000", "batch_size"),
    "huge-dmodel": ("d_model: 1000000", "d_model"),
    "pad-id": ("pad_id: 5", "pad_id"),
    "pad-negative": ("pad_id: -1", "pad_id"),
    "warmup-zero": ("warmup_steps: 0", "warmup_steps"),
    "smoothing-1": ("label_smoothing: 1.0", "label_smoothing"),
    "int-overflow": ("d_ff: 99999999999999999999999", "d_ff"),
    "syntax": ("d_model 64 }", "error"),
}
for name, (text, word) in configs.items():
    path = write("config-" + name + ".pbtxt", text)
    case("config " + name, [TGC, "--model", "transformer", "--preset", "tiny",
                            "--config", path, "--emit=tg"], ("error", word))
case("config directory", [TGC, "--model", "transformer", "--preset", "tiny",
                          "--config", "adir", "--emit=tg"], ("error", "adir"))
case("config /dev/zero", [TGC, "--model", "transformer", "--preset", "tiny",
                          "--config", "/dev/zero", "--emit=tg"])
case("config garbage", [TGC, "--model", "transformer", "--preset", "tiny",
                        "--config", "garbage.bin", "--emit=tg"])

# --- tgc flags --------------------------------------------------------------
T = [TGC, "--model", "transformer", "--preset", "tiny"]
case("unknown preset", [TGC, "--model", "transformer", "--preset", "huge"], ("error", "huge"))
case("unknown model", [TGC, "--model", "gpt", "--emit=tg"], ("error", "gpt"))
case("unknown emit", T + ["--emit=nonsense"])
case("buckets garbage", T + ["--buckets", "axbxc", "-o", "p"], ("error", "buckets"))
case("buckets zero", T + ["--buckets", "0x4x4", "-o", "p"], ("error", "buckets"))
case("max-tokens 1", T + ["--buckets", "8x8", "--max-tokens", "1", "-o", "p"], ("error", "max-tokens"))
case("output directory", T + ["-o", "adir"], ("error", "adir"))
case("output /dev/full", T + ["--emit=tg", "-o", "/dev/full"])
case("target unknown", T + ["--target=tpu", "-o", "p"])
case("corpus missing", T + ["--corpus", "nope.tok", "--max-tokens", "64", "-o", "p"], ("error", "nope.tok"))
case("corpus garbage", T + ["--corpus", "garbage.bin", "--max-tokens", "64", "-o", "p"], ("error", "garbage.bin"))
case("corpus directory", T + ["--corpus", "adir", "--max-tokens", "64", "-o", "p"], ("error", "adir"))
case("interp steps 0", T + ["--emit=train", "--target=interp", "--steps", "0"])
case("interp clip negative", T + ["--emit=train", "--target=interp", "--clip-norm", "-1"])
case("interp unknown task", T + ["--emit=train", "--target=interp", "--task", "sing"], ("error", "sing"))

# --- the training program ---------------------------------------------------
# Through a build cache: the file-safety cases below hit its entry.
built = subprocess.run(T + ["-o", "train", "--build-cache", "cache"],
                       capture_output=True)
if built.returncode != 0:
    sys.exit("cannot build the tiny program: " + built.stderr.decode())
subprocess.run(["./train", "--steps", "2", "--eval-sentences", "0",
                "--checkpoint", "good.ckpt"], capture_output=True, check=True)
good = open("good.ckpt", "rb").read()
write("trunc.ckpt", good[: len(good) // 2], "wb")
flipped = bytearray(good)
flipped[len(good) // 3] ^= 0x10
write("flip.ckpt", bytes(flipped), "wb")
# Checkpoints whose checksums are right but whose structure is not.
FORGE = os.path.join(root, "test/lit/tgc-data/Inputs/forge_checkpoint.py")
FORGED = ["nan", "twice", "nameless", "overlap", "negative-step"]
for mode in FORGED:
    subprocess.run([sys.executable, FORGE, mode, "good.ckpt", mode + ".ckpt",
                    os.path.join(root, "runtime/program/checkpoint")], check=True)
write("ids-bad.src", "5 6 x\n")
write("ids-neg.src", "5 -6\n")
write("ids-huge.src", "5 99999999999\n")
write("ids-ok.src", "5 6 7\n")
write("ids-two.tgt", "5 6\n7 8\n")
write("ids-nul.src", "5 \0 6\n")
write("ids-long.src", "x" * 10_000_000 + "\n")
write("ids-reserved.src", "1 2\n")
P = ["./train", "--steps", "3", "--eval-sentences", "0"]
flags = {
    "unknown flag": ["--frobnicate"],
    "missing value": ["--steps"],
    "steps text": ["--steps", "2x"],
    "steps negative": ["--steps", "-5"],
    "steps overflow": ["--steps", "99999999999999999999999"],
    "seed negative": ["--seed", "-1"],
    "log-every 0": ["--log-every", "0"],
    "update-freq 0": ["--update-freq", "0"],
    "max-tokens 0": ["--max-tokens", "0"],
    "dropout 1": ["--dropout", "1"],
    "attention-dropout text": ["--attention-dropout", "some"],
    "label-smoothing negative": ["--label-smoothing", "-0.1"],
    "adam-betas one": ["--adam-betas", "0.9"],
    "adam-eps 0": ["--adam-eps", "0"],
    "generate without vocab": ["--generate", "prompts.txt"],
    "generate and translate": ["--generate", "a", "--translate", "b", "--resume", "c", "--vocab", "d"],
    "temperature alone": ["--temperature", "0.5"],
    "temperature negative": ["--temperature", "-1"],
    "top-p 0": ["--top-p", "0"],
    "top-p above 1": ["--top-p", "1.5"],
    "top-k text": ["--top-k", "many"],
    "max-new-tokens 0": ["--max-new-tokens", "0"],
    "max-tokens text": ["--max-tokens", "lots"],
    "max-tokens with a task": ["--max-tokens", "64", "--task", "copy"],
    "clip-norm negative": ["--clip-norm", "-2"],
    "clip-norm nan": ["--clip-norm", "nan"],
    "max-epochs negative": ["--max-epochs", "-1"],
    "max-epochs with a task": ["--max-epochs", "2", "--task", "copy"],
    "max-time text": ["--max-time", "1h30"],
    "max-time minutes 60": ["--max-time", "1:60"],
    "alpha negative": ["--alpha", "-1"],
    "beam 0": ["--beam", "0"],
    "task unknown": ["--task", "sing"],
    "search unknown": ["--search", "random"],
    "decoder unknown": ["--decoder", "magic"],
    "best-by unknown": ["--valid-every", "1", "--best-by", "luck"],
    "patience without valid": ["--patience", "2"],
    "valid-beam without valid": ["--valid-beam", "2"],
    "force-resume alone": ["--force-resume"],
    "output without translate": ["--output", "x"],
    "translate without vocab": ["--translate", "ids-ok.src", "--resume", "good.ckpt"],
    "source without target": ["--train-source", "ids-ok.src"],
    "task and source": ["--task", "copy", "--train-source", "ids-ok.src", "--train-target", "ids-ok.src"],
    "resume missing": ["--resume", "nope.ckpt"],
    "resume directory": ["--resume", "adir"],
    "resume empty": ["--resume", "empty"],
    "resume garbage": ["--resume", "garbage.bin"],
    "resume truncated": ["--resume", "trunc.ckpt"],
    "resume flipped": ["--resume", "flip.ckpt"],
    "resume fifo": ["--resume", "afifo"],
    "checkpoint directory": ["--checkpoint", "adir"],
    "checkpoint dir slash": ["--checkpoint", "adir/"],
    "checkpoint /dev/full": ["--checkpoint", "/dev/full"],
    "checkpoint fifo": ["--checkpoint", "afifo"],
    "checkpoint in missing dir": ["--checkpoint", "no/such/dir/x.ckpt"],
    "loss-log /dev/full": ["--loss-log", "/dev/full"],
    "metrics /dev/full": ["--metrics", "/dev/full"],
    "metrics directory": ["--metrics", "adir"],
    "dump-params /dev/full": ["--dump-params", "/dev/full"],
    "ids bad word": ["--train-source", "ids-bad.src", "--train-target", "ids-ok.src"],
    "ids negative": ["--train-source", "ids-neg.src", "--train-target", "ids-ok.src"],
    "ids huge": ["--train-source", "ids-huge.src", "--train-target", "ids-ok.src"],
    "ids nul": ["--train-source", "ids-nul.src", "--train-target", "ids-ok.src"],
    "ids 10 MB token": ["--train-source", "ids-long.src", "--train-target", "ids-ok.src"],
    "ids reserved": ["--train-source", "ids-reserved.src", "--train-target", "ids-ok.src"],
    "ids line counts": ["--train-source", "ids-ok.src", "--train-target", "ids-two.tgt"],
    "ids directory": ["--train-source", "adir", "--train-target", "ids-ok.src"],
    "ids /dev/zero": ["--train-source", "/dev/zero", "--train-target", "ids-ok.src"],
    "train-data /dev/zero": ["--train-data", "/dev/zero"],
    "ids empty": ["--train-source", "empty", "--train-target", "empty"],
    "ids missing": ["--train-source", "nope.src", "--train-target", "ids-ok.src"],
    "train-data garbage": ["--train-data", "garbage.bin"],
    "train-data directory": ["--train-data", "adir"],
    "valid-every without data": ["--valid-every", "1", "--train-source", "ids-ok.src", "--train-target", "ids-ok.src"],
    "vocab garbage": ["--translate", "ids-ok.src", "--resume", "good.ckpt", "--vocab", "garbage.bin"],
    # The vocabulary is hashed before tgc-data reads it again by name: a
    # regular file, read no further than its size.
    "vocab /dev/zero": ["--train-source", "ids-ok.src", "--train-target", "ids-ok.src", "--vocab", "/dev/zero"],
    "vocab directory": ["--train-source", "ids-ok.src", "--train-target", "ids-ok.src", "--vocab", "adir"],
    "vocab fifo": ["--train-source", "ids-ok.src", "--train-target", "ids-ok.src", "--vocab", "afifo"],
    # Refused before the first step (the first validation's error lost them).
    "valid-beam over the batch": ["--task", "reverse", "--steps", "30", "--valid-every", "10", "--valid-beam", "16"],
    "nbest 0": ["--nbest", "0"],
    "nbest without translate": ["--nbest", "2"],
    "nbest over beam": ["--translate", "ids-ok.src", "--resume", "good.ckpt", "--vocab", "garbage.bin", "--beam", "2", "--nbest", "3"],
    "nbest huge": ["--nbest", "99999999999"],
    "batch-size 0": ["--batch-size", "0"],
    "batch-size text": ["--batch-size", "four"],
    "alias bad value": ["--max-update", "-3"],
    "score without resume": ["--score", "garbage.bin"],
    "score garbage": ["--score", "garbage.bin", "--resume", "good.ckpt"],
    "score truncated corpus": ["--score", "trunc.ckpt", "--resume", "good.ckpt"],
    "score directory": ["--score", "adir", "--resume", "good.ckpt"],
    "score /dev/zero": ["--score", "/dev/zero", "--resume", "good.ckpt"],
    "score fifo": ["--score", "afifo", "--resume", "good.ckpt"],
    "train-data fifo": ["--train-data", "afifo"],
    "valid-data fifo": ["--train-data", "garbage.bin", "--valid-data", "afifo"],
    "score and generate": ["--score", "garbage.bin", "--generate", "a", "--resume", "good.ckpt", "--vocab", "d"],
}
for mode in FORGED:
    flags["resume forged " + mode] = ["--resume", mode + ".ckpt"]
for name, extra in flags.items():
    case("program " + name, P + extra)
# Two runs on one checkpoint: the second is refused while the first holds it.
case("program resume ok", P + ["--resume", "good.ckpt", "--steps", "4"], ok=True)

# --- tgc-data ---------------------------------------------------------------
write("utf8-bad.txt", b"ok line\n\xff\xfe bad\n", "wb")
write("one.txt", "a b c\n")
write("two.txt", "a b\nc d\n")
write("runs.jsonl", '{"kind": "run", "step": 0, "lr_scheduler": "cosine", "lr_peak": 0.001, '
      '"lr_warmup": 10, "lr_min": 0, "lr_last_step": 100}\n{"kind": "train", "step": 5, "loss": 2}\n')
write("badrun.jsonl", '{"kind": "run", "step": 0, "lr_scheduler": "cosine", "lr_peak": -1}\n')
D = [DATA]
data_cases = {
    "unknown command": ["dance"],
    "bleu invalid utf-8": ["bleu", "--ref", "one.txt", "utf8-bad.txt"],
    "bleu line counts": ["bleu", "--ref", "one.txt", "two.txt"],
    "bleu missing": ["bleu", "--ref", "one.txt", "nope.txt"],
    "bleu directory": ["bleu", "--ref", "adir", "one.txt"],
    "encode invalid utf-8": ["encode", "--vocab", "garbage.bin", "--source", "utf8-bad.txt", "--target", "one.txt", "-o", "x.tok"],
    "vocab empty": ["vocab", "--size", "100", "-o", "v", "empty"],
    "vocab size 0": ["vocab", "--size", "0", "-o", "v", "one.txt"],
    "average different": ["average", "good.ckpt", "garbage.bin", "-o", "avg.ckpt"],
    "average truncated": ["average", "good.ckpt", "trunc.ckpt", "-o", "avg.ckpt"],
    "average to /dev/full": ["average", "good.ckpt", "good.ckpt", "-o", "/dev/full"],
    "curves garbage": ["curves", "garbage.bin", "-o", "c.svg"],
    "curves directory": ["curves", "adir", "-o", "c.svg"],
    "curves second garbage": ["curves", "runs.jsonl", "garbage.bin", "-o", "c.svg"],
    "curves bad run record": ["curves", "badrun.jsonl", "-o", "c.svg"],
    "curves labels count": ["curves", "--label", "a", "runs.jsonl", "runs.jsonl", "-o", "c.svg"],
    "average fifo": ["average", "good.ckpt", "afifo", "-o", "avg.ckpt"],
    "info fifo": ["info", "afifo"],
    "sample negative": ["sample", "--pairs", "-3", "-o", "s"],
}
for mode in FORGED:
    data_cases["average forged " + mode] = ["average", "good.ckpt", mode + ".ckpt", "-o", "avg.ckpt"]
for name, extra in data_cases.items():
    case("tgc-data " + name, D + extra)

# --- files a run must not touch (docs/limits.md, "Files tgc writes") --------
# Every case names the files it must leave as they were; `victim` is a
# user's file that links and planted names point at.
victim = write("victim", "the user's own file\n")
shutil.copy(os.path.join(root, "models/examples/PreLnTransformer.cpp"), "m.cpp")
write("f.mlir", GOOD_MLIR)
os.link("f.mlir", "f-hard.mlir")
os.symlink("f.mlir", "f-soft.mlir")
write("c.pbtxt", "d_model: 32\n")
write("prog.cpp", "d_model: 32\n")  # a config named like a kept source
shutil.copy(TGC, "tgc-copy")
shutil.copy("train", "train-copy")
shutil.copy("good.ckpt", "good2.ckpt")
shutil.copy("good.ckpt", "copy.ckpt.best")
shutil.copy("good.ckpt", "hist.ckpt.step7")
os.symlink("ids-ok.src", "ids-link")
os.link("ids-ok.src", "ids-hard")
write("in.txt", "one two\n")
write("m.jsonl", '{"kind": "train", "step": 1, "loss": 2}\n')
subprocess.run([DATA, "sample", "--pairs", "300", "-o", "s"], capture_output=True)
subprocess.run([DATA, "vocab", "--size", "300", "-o", "v", "s.src", "s.tgt"],
               capture_output=True)
subprocess.run([DATA, "encode", "--vocab", "v.model", "--source", "s.src",
                "--target", "s.tgt", "-o", "s.tok"], capture_output=True)
shutil.copy("s.src", "t.vocab")
os.link("s.src", "s-hard.model")
shutil.copy("good.ckpt", "run.ckpt.step2")
shutil.copy("good.ckpt", "run.ckpt.step4")
# A vocabulary of 300 pieces for the tiny model's 16 ids (compiled without
# --corpus, so no hash to tell): its ids would index past the embedding.
# (good.ckpt is a task's: --force-resume goes past that refusal to this
# check.)
case("program translate with a larger vocabulary",
     P + ["--translate", "in.txt", "--resume", "good.ckpt", "--vocab", "v.model",
          "--force-resume"],
     ("v.model", "300 ids", "the model has 16"))
case("program translate with a task's checkpoint",
     P + ["--translate", "in.txt", "--resume", "good.ckpt", "--vocab", "v.model"],
     ("good.ckpt", "task reverse", "v.model"))

# An output of a run that is the same file as an input or another output.
M = [TGC, "--model-file", "m.cpp"]
same = {
    "tgc --keep-cpp over the model file": (M + ["-o", "m", "--keep-cpp"], ["m.cpp"], "m.cpp"),
    "tgc -o the input": ([TGC, "f.mlir", "--emit=tg", "-o", "f.mlir"], ["f.mlir"], "f.mlir"),
    "tgc -o ./the input": ([TGC, "f.mlir", "--emit=tg", "-o", "./f.mlir"], ["f.mlir"], "f.mlir"),
    "tgc -o a hard link of the input": ([TGC, "f.mlir", "--emit=tg", "-o", "f-hard.mlir"], ["f.mlir"], "f-hard.mlir"),
    "tgc -o a symlink to the input": ([TGC, "f.mlir", "--emit=tg", "-o", "f-soft.mlir"], ["f.mlir", "f-soft.mlir"], "f-soft.mlir"),
    "tgc -o the config": (T + ["--config", "c.pbtxt", "--emit=tg", "-o", "c.pbtxt"], ["c.pbtxt"], "c.pbtxt"),
    "tgc --keep-cpp over the config": (T + ["--config", "prog.cpp", "-o", "prog", "--keep-cpp"], ["prog.cpp"], "prog.cpp"),
    "tgc -o the corpus": (T + ["--corpus", "s.tok", "--max-tokens", "64", "--emit=tg", "-o", "s.tok"], ["s.tok"], "s.tok"),
    "tgc -o itself": (["./tgc-copy", "--model", "transformer", "--preset", "tiny", "--emit=tg", "-o", "tgc-copy"], ["tgc-copy"], "tgc-copy"),
    "tgc --dump-params over the input": ([TGC, "f.mlir", "--emit=train", "--target=interp", "--steps", "1", "--dump-params", "f.mlir"], ["f.mlir"], "f.mlir"),
    "tgc --loss-log over the model file": (M + ["--emit=train", "--target=interp", "--steps", "1", "--loss-log", "m.cpp"], ["m.cpp"], "m.cpp"),
    "tgc two outputs in one file": (T + ["--emit=train", "--target=interp", "--steps", "1", "--dump-params", "o1", "--loss-log", "./o1"], ["o1"], "o1"),
    "program --checkpoint over --train-source": (P + ["--train-source", "ids-ok.src", "--train-target", "ids-two.tgt", "--checkpoint", "ids-ok.src"], ["ids-ok.src"], "ids-ok.src"),
    "program --checkpoint a symlink to the data": (P + ["--train-source", "ids-ok.src", "--train-target", "ids-ok.src", "--checkpoint", "ids-link"], ["ids-ok.src", "ids-link"], "ids-link"),
    "program --checkpoint a hard link of the data": (P + ["--train-source", "ids-ok.src", "--train-target", "ids-ok.src", "--checkpoint", "ids-hard"], ["ids-ok.src"], "ids-hard"),
    "program --checkpoint over --train-data": (P + ["--train-data", "s.tok", "--checkpoint", "s.tok"], ["s.tok"], "s.tok"),
    "program --dump-params over the checkpoint": (P + ["--resume", "good2.ckpt", "--steps", "4", "--dump-params", "good2.ckpt"], ["good2.ckpt"], "good2.ckpt"),
    "program --metrics over the checkpoint": (P + ["--checkpoint", "mc.ckpt", "--metrics", "mc.ckpt"], ["mc.ckpt"], "mc.ckpt"),
    "program --loss-log over --metrics": (P + ["--checkpoint", "ml.ckpt", "--metrics", "ml.txt", "--loss-log", "ml.txt"], ["ml.ckpt", "ml.txt"], "ml.txt"),
    "program --loss-log over --train-data": (P + ["--train-data", "s.tok", "--checkpoint", "x1.ckpt", "--loss-log", "s.tok"], ["s.tok", "x1.ckpt"], "s.tok"),
    "program --metrics over --vocab": (P + ["--train-data", "s.tok", "--vocab", "v.model", "--checkpoint", "x2.ckpt", "--metrics", "v.model"], ["v.model", "x2.ckpt"], "v.model"),
    "program --dump-params over itself": (["./train-copy", "--steps", "1", "--eval-sentences", "0", "--checkpoint", "x3.ckpt", "--dump-params", "train-copy"], ["train-copy", "x3.ckpt"], "train-copy"),
    "program --checkpoint over itself": (["./train-copy", "--steps", "1", "--eval-sentences", "0", "--checkpoint", "train-copy"], ["train-copy"], "train-copy"),
    "program .best over --resume": (P + ["--resume", "copy.ckpt.best", "--checkpoint", "copy.ckpt", "--valid-every", "1", "--steps", "4"], ["copy.ckpt.best", "copy.ckpt"], "copy.ckpt.best"),
    "program --output over --translate": (P + ["--translate", "in.txt", "--output", "in.txt", "--resume", "good.ckpt", "--vocab", "v.model"], ["in.txt"], "in.txt"),
    "program --output over --vocab": (P + ["--translate", "in.txt", "--output", "v.model", "--resume", "good.ckpt", "--vocab", "v.model"], ["v.model"], "v.model"),
    "program --output over --resume": (P + ["--translate", "in.txt", "--output", "good.ckpt", "--resume", "good.ckpt", "--vocab", "v.model"], ["good.ckpt"], "good.ckpt"),
    "encode -o over --source": ([DATA, "encode", "--vocab", "v.model", "--source", "s.src", "--target", "s.tgt", "-o", "s.src"], ["s.src"], "s.src"),
    "encode -o a symlink to --target": ([DATA, "encode", "--vocab", "v.model", "--source", "s.src", "--target", "s.tgt", "-o", "ids-link2"], ["s.tgt"], "ids-link2"),
    "encode -o over --vocab": ([DATA, "encode", "--vocab", "v.model", "--source", "s.src", "--target", "s.tgt", "-o", "v.model"], ["v.model"], "v.model"),
    "vocab -o PREFIX.vocab over its text": ([DATA, "vocab", "--size", "300", "-o", "t", "t.vocab", "s.tgt"], ["t.vocab"], "t.vocab"),
    "vocab -o PREFIX.model a hard link of its text": ([DATA, "vocab", "--size", "300", "-o", "s-hard", "s.src", "s.tgt"], ["s.src"], "s-hard.model"),
    "average -o over an input": ([DATA, "average", "good.ckpt", "good2.ckpt", "-o", "good2.ckpt"], ["good2.ckpt"], "good2.ckpt"),
    "average --last -o over a found input": ([DATA, "average", "--last", "2", "run.ckpt", "-o", "run.ckpt.step4"], ["run.ckpt.step4"], "run.ckpt.step4"),
    "curves -o over its metrics": ([DATA, "curves", "m.jsonl", "-o", "m.jsonl"], ["m.jsonl"], "m.jsonl"),
    "curves -o over its second metrics": ([DATA, "curves", "runs.jsonl", "m.jsonl", "-o", "m.jsonl"], ["m.jsonl"], "m.jsonl"),
}
os.symlink("s.tgt", "ids-link2")
for name, (argv, kept, word) in same.items():
    case(name, argv, ("same file as", word), kept=kept)

# The build cache owns only what it wrote; a hit never renames over what
# is not a regular file.
os.mkdir("notes")
for note in ["notes.txt", "0123456789abcdef0123456789abcdef",
             "0123456789abcdef0123456789abcdef.txt", "draft.partial"]:
    write("notes/" + note, "a note\n")
    os.utime("notes/" + note, (1, 1))  # older than any left-over age
os.makedirs("foreign/tgc-build-cache")
write("foreign/tgc-build-cache/0123456789abcdef0123456789abcdef", "mine\n")
os.makedirs("marked/tgc-build-cache")
write("marked/tgc-build-cache/CACHEDIR.TAG",
      "Signature: 8a477f597d28d172789f06886806bc55\n")
os.makedirs("linked")
os.symlink(os.path.join(work, "adir"), "linked/tgc-build-cache")
os.makedirs("filed")
write("filed/tgc-build-cache", "a file\n")
MT = M + ["--emit=tg", "-o", "m.mlir", "--build-cache"]
case("cache keeps a user's notes", MT + ["notes"], ok=True,
     kept=["notes/" + n for n in os.listdir("notes")])
case("cache leaves a foreign tgc-build-cache", MT + ["foreign"], ok=True,
     kept=["foreign/tgc-build-cache"])
case("cache leaves one with another marker", MT + ["marked"], ok=True,
     kept=["marked/tgc-build-cache", "marked/tgc-build-cache/CACHEDIR.TAG"])
case("cache leaves a symlinked tgc-build-cache", MT + ["linked"], ok=True,
     kept=["linked/tgc-build-cache", "adir"])
case("cache leaves a file named tgc-build-cache", MT + ["filed"], ok=True,
     kept=["filed/tgc-build-cache"])
os.mkfifo("out-fifo")
listener = socket.socket(socket.AF_UNIX)
listener.bind("out-socket")
for node in ["out-fifo", "out-socket", "adir"]:
    case("cache hit -o " + node, T + ["--build-cache", "cache", "-o", node],
         ("error", node), kept=[node])
case("-o a FIFO without a cache", T + ["--build-cache=", "-o", "out-fifo"],
     ("error", "out-fifo"), kept=["out-fifo"])

# <checkpoint>.lock and temporaries: only tgc's own, by their exact names.
os.symlink("victim", "lk1.ckpt.lock")
write("lk2.ckpt.lock", "my notes\n")
os.mkfifo("lk3.ckpt.lock")
os.link("victim", "lk4.ckpt.lock")
os.mkdir("lk5.ckpt.lock")
write("lk6.ckpt.lock", "12345")  # digits, but not as claimCheckpoint writes
for n in range(1, 7):
    lock = "lk%d.ckpt.lock" % n
    case("lock " + lock, P + ["--checkpoint", "lk%d.ckpt" % n],
         ("lock", lock), kept=[lock, "victim", "lk%d.ckpt" % n])
dead = subprocess.Popen(["true"])
dead.wait()
pid = str(dead.pid)
planted = ["tp.ckpt.tmp.%s.notes" % pid, "tp.ckpt.tmp.%s.0.bak" % pid,
           "tp.ckpt.tmp.%s.0x" % pid, "tp.ckpt.tmp.0%s.0" % pid,
           "tp.ckpt.tmp.%s.01" % pid, "tp.ckpt.tmp.+%s.0" % pid,
           "tp.ckpt.tmp.%s" % pid]
for name in planted:
    write(name, "the user's\n")
os.symlink("victim", "tp.ckpt.tmp.%s.1" % pid)
os.mkdir("tp.ckpt.tmp.%s.2" % pid)
case("temporaries named like leftovers", P + ["--checkpoint", "tp.ckpt"],
     ok=True, kept=planted + ["tp.ckpt.tmp.%s.1" % pid,
                              "tp.ckpt.tmp.%s.2" % pid, "victim"])
for name in ["hk.ckpt.step-5", "hk.ckpt.step007", "hk.ckpt.step+3",
             "hk.ckpt.step1x"]:
    write(name, "the user's\n")
case("history named like steps", P + ["--checkpoint", "hk.ckpt", "--save-every",
                                      "1", "--keep-last", "1"], ok=True,
     kept=["hk.ckpt.step-5", "hk.ckpt.step007", "hk.ckpt.step+3",
           "hk.ckpt.step1x"])

# A fresh run never replaces a checkpoint; a resumed one only its own.
for name in ["fresh.ckpt", "fresh2.ckpt", "other.ckpt"]:
    shutil.copy("good.ckpt", name)
# The default checkpoint of a program of its own: the cases above run ./train
# without --checkpoint and must not meet one.
shutil.copy("train", "train-fresh")
shutil.copy("good.ckpt", "train-fresh.ckpt")
shutil.copy("good.ckpt", "b.ckpt.best")
shutil.copy("good.ckpt", "h2.ckpt.step3")
fresh = {
    "fresh run over --checkpoint": (["--checkpoint", "fresh.ckpt"], "fresh.ckpt"),
    "fresh run with --resume \"\"": (["--resume", "", "--checkpoint", "fresh2.ckpt"], "fresh2.ckpt"),
    "fresh run with --resume=": (["--resume=", "--checkpoint", "fresh2.ckpt"], "fresh2.ckpt"),
    "fresh run over .best": (["--checkpoint", "b.ckpt", "--valid-every", "1"], "b.ckpt.best"),
    "fresh run over the history": (["--checkpoint", "h2.ckpt", "--keep-last", "2", "--save-every", "1"], "h2.ckpt.step3"),
    # (A run with steps to train: one with none writes nothing, and is not
    # refused.)
    "resumed run over another checkpoint": (["--resume", "good.ckpt", "--steps", "6", "--checkpoint", "other.ckpt"], "other.ckpt"),
    "fresh run through a symlink": (["--checkpoint", "fresh-link"], "fresh.ckpt"),
}
os.symlink("fresh.ckpt", "fresh-link")
for name, (extra, kept) in fresh.items():
    case(name, P + extra, ("--overwrite",), kept=[kept, "good.ckpt"])
case("fresh run over the default checkpoint",
     ["./train-fresh", "--steps", "3", "--eval-sentences", "0"],
     ("--overwrite", "train-fresh.ckpt"), kept=["train-fresh.ckpt"])
case("--overwrite starts over", P + ["--checkpoint", "other.ckpt", "--overwrite"],
     ok=True)

# A diverged state never replaces a good checkpoint: learning rate x 1e8,
# finite losses of 1e15 and parameters of 1e7.
write("explode.pbtxt", "warmup_steps: 1\nlr_factor: 1e8\n")
subprocess.run(T + ["--config", "explode.pbtxt", "-o", "explode"],
               capture_output=True, check=True)
for steps, every in [("1", "0"), ("3", "1")]:
    kept = "ex%s.ckpt" % steps
    shutil.copy("good.ckpt", kept)
    case("diverged state, %s steps, --save-every %s" % (steps, every),
         ["./explode", "--steps", steps, "--save-every", every,
          "--eval-sentences", "0", "--checkpoint", kept, "--overwrite"],
         ("diverged", kept), kept=[kept])

# --- bounds (docs/limits.md, "Bounds") ---------------------------------------
# A count a flag gives is checked against its maximum before anything of
# that size is allocated or generated.
for flag, value in [("--update-freq", "1000000000"),
                    ("--update-freq", "9223372036854775807"),
                    ("--update-freq", "4097"),
                    ("--max-epochs", "9223372036854775807"),
                    ("--beam", "1000000000"),
                    ("--samples", "9223372036854775807"),
                    ("--eval-sentences", "100000000")]:
    case("program %s %s" % (flag, value), P + [flag, value], (flag, "to"))
for flag in ["--valid-beam", "--valid-sentences"]:
    case("program %s huge" % flag,
         P + ["--valid-every", "1", flag, "9223372036854775807"], (flag, "to"))
# Thread counts over the cores are cut to them, with a note.
for n, threads in enumerate(["100000", "100000,100000", "99999999999999999999"]):
    case("program OMP_NUM_THREADS=" + threads,
         ["env", "OMP_NUM_THREADS=" + threads] +
         later_flags_win(P + ["--steps", "1", "--checkpoint",
                              "threads%d.ckpt" % n]), ok=True)
# Text inputs that never end: a device is refused by its kind, a line by
# its length.
for name, extra in {
        "vocab /dev/zero": ["vocab", "--size", "100", "-o", "v0", "/dev/zero"],
        "vocab /dev/urandom": ["vocab", "--size", "100", "-o", "v0", "one.txt", "/dev/urandom"],
        "encode /dev/zero": ["encode", "--vocab", "v.model", "--source", "/dev/zero", "--target", "one.txt", "-o", "z.tok"],
        "encode target /dev/zero": ["encode", "--vocab", "v.model", "--source", "one.txt", "--target", "/dev/zero", "-o", "z.tok"],
        "bleu /dev/zero": ["bleu", "--ref", "one.txt", "/dev/zero"],
        "bleu ref /dev/zero": ["bleu", "--ref", "/dev/zero", "one.txt"],
        "curves /dev/zero": ["curves", "/dev/zero", "-o", "c.svg"]}.items():
    case("tgc-data " + name, D + extra, ("/dev/", "character device"))
case("tgc-data encode --ids from /dev/zero",
     ["sh", "-c", DATA + " encode --vocab v.model --ids < /dev/zero"],
     ("/dev/stdin", "character device"))
case("tgc-data decode --ids from /dev/zero",
     ["sh", "-c", DATA + " decode --vocab v.model --ids < /dev/zero"],
     ("<stdin>", "character device"))
case("program --translate /dev/zero",
     P + ["--translate", "/dev/zero", "--resume", "good.ckpt", "--vocab", "v.model",
          "--force-resume"],
     ("/dev/zero",))
# Nesting deeper than the recursive parsers take.
for name, opener in [("brackets", "["), ("braces", "{"), ("parentheses", "(")]:
    write("deep-%s.jsonl" % name, '{"kind": "train", "step": 1, "x": ' +
          opener * 100_000 + "\n")
    case("tgc-data curves deep " + name,
         D + ["curves", "deep-%s.jsonl" % name, "-o", "c.svg"],
         ("deep-%s.jsonl:1" % name, "nesting deeper than 512"))
    case("tgc-opt --pass-pipeline deep " + name,
         [OPT, "f.mlir", "--pass-pipeline=" + opener * 100_000],
         ("--pass-pipeline", "512"))
case("tgc-opt --pass-pipeline deep modules",
     [OPT, "f.mlir", "--pass-pipeline=" + "builtin.module(" * 8000],
     ("--pass-pipeline", "512"))
case("tgc-opt --pass-pipeline deep, option form",
     [OPT, "f.mlir", "--pass-pipeline", "any(" * 20000 + "cse" + ")" * 20000],
     ("--pass-pipeline", "512"))
case("tgc-opt --pass-pipeline shallow ok",
     [OPT, "f.mlir", "--pass-pipeline=builtin.module(func.func(cse))"], ok=True)

# --- run --------------------------------------------------------------------
CRASH_WORDS = ("Stack dump", "Assertion", "AddressSanitizer", "runtime error:",
               "Segmentation fault", "terminate called", "core dumped")
totals = {}
for name, argv, words, must_fail, kept in cases:
    if args.only not in name:
        continue
    before = [snapshot(path) for path in kept]
    try:
        run = subprocess.run(argv, capture_output=True, timeout=args.timeout,
                             stdin=subprocess.DEVNULL)
        out = (run.stdout + run.stderr).decode(errors="replace")
        code = run.returncode
        if code < 0 or code >= 128 or any(w in out for w in CRASH_WORDS):
            outcome = "crash"
        elif code == 0:
            outcome = "silent" if must_fail else "clear"
        elif not must_fail:
            outcome = "vague"
        elif out.strip() and all(w.lower() in out.lower() for w in words):
            outcome = "clear"
        else:
            outcome = "vague"
    except subprocess.TimeoutExpired:
        outcome, code, out = "hang", None, ""
    changed = [path for path, was in zip(kept, before) if snapshot(path) != was]
    if changed:
        outcome, out = "damage", "changed " + ", ".join(changed) + "; " + out
    totals[outcome] = totals.get(outcome, 0) + 1
    if outcome != "clear" or args.v:
        first = out.strip().splitlines()[0][:150] if out.strip() else ""
        print(f"{outcome:6} {name}: exit {code}: {first}")
print(f"{sum(totals.values())} bad inputs: " +
      ", ".join(f"{totals.get(k, 0)} {k}"
                for k in ("clear", "damage", "crash", "hang", "silent", "vague")))
failures = sum(totals.values()) - totals.get("clear", 0)
os.chdir(root)
if failures or args.keep:
    print("fixtures in " + work)
else:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
