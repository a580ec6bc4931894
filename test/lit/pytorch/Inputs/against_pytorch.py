#!/usr/bin/env python3
"""One training step of a tgc program against the same model in PyTorch.

The program trains one step on a corpus that holds exactly one batch (so the
batch's order, the only thing left to the program, changes neither the mean
loss nor the gradients), twice: with a vanishing learning rate, which leaves
the parameters as initialized and Adam's first moment as (1 - beta1) times the
gradient; and with a real one. This script reads both runs' --dump-params
(names and shapes from `tgc --emit=planned`), puts the initial parameters into
the model written in PyTorch (test/lit/pytorch/Inputs/reference_*.py: PyTorch's
own layers, loss and AdamW), and compares, each with its tolerance:

  loss      the program's first loss against PyTorch's
  gradient  every parameter's gradient (from the first moment) against autograd's
  update    every parameter after the program's AdamW step against torch.optim.AdamW's

Usage:
  against_pytorch.py corpus --lm --vocab V --batch B --context T -o one.tok
  against_pytorch.py corpus --pairs --vocab V --batch B --source S --target T [--padded] -o one.tok
  against_pytorch.py check --model NAME --planned step.mlir --corpus one.tok \\
      --initial P0 --initial-loss L0 [--after P1] --lr LR --betas B1,B2 --eps E \\
      --weight-decay W --heads H [--kv-heads K] [--label-smoothing E] \\
      [--clip-norm C] [--second P2 --second-loss L2] [--bf16]

NAME is reference_NAME.py beside this script, or a path to a .py file that
defines the same two functions: loss(params, pairs, torch, heads, kv_heads,
label_smoothing, inputs) -> (mean loss, counted target tokens) and
decays(names) -> the names AdamW decays. --second: a run of two steps
(same flags), checked against a second PyTorch step on the same batch. A
corpus of K batches, trained with --update-freq K, makes one update of all
of them: PyTorch's is the mean over every pair's tokens. --bf16: the
program's precision is bf16; its loss and gradients must be no further from
the fp32 model than 3 times PyTorch's own mixed precision (autocast) is.
"""
import argparse
import array
import importlib
import importlib.util
import os
import random
import re
import struct
import sys
import zlib

PAD, BOS, EOS, FIRST_SYMBOL = 0, 1, 2, 3


# --- corpora (runtime/data/TokenCorpus.h) -----------------------------------

def write_corpus(path, magic, vocab, pairs):
    """A version-2 .tok file of (source, target) id lists."""
    sources = [s for s, _ in pairs]
    targets = [t for _, t in pairs]

    def offsets(sides):
        at, out = 0, [0]
        for side in sides:
            at += len(side)
            out.append(at)
        return out

    count = len(pairs)
    source_total, target_total = sum(map(len, sources)), sum(map(len, targets))
    body = magic + struct.pack("<IIQQQQ", 2, vocab, 0, count, source_total, target_total)
    body += struct.pack(f"<{count + 1}Q", *offsets(sources))
    body += struct.pack(f"<{count + 1}Q", *offsets(targets))
    for side in sources + targets:
        body += struct.pack(f"<{len(side)}i", *side)
    with open(path, "wb") as f:
        f.write(body + struct.pack("<II", zlib.crc32(body), 0))


def make_corpus(a):
    rng = random.Random(a.seed)
    token = lambda: rng.randrange(FIRST_SYMBOL, a.vocab)
    if a.lm:
        # One document of B * T tokens: with the end-of-document token the
        # program appends, a stream of B * T + 1, cut into B windows of T + 1.
        write_corpus(a.output, b"TGCDOCS\n", a.vocab,
                     [([], [token() for _ in range(a.batch * a.context)])])
    else:
        # B pairs that fill a B x S x T bucket exactly: S - 1 source tokens
        # and EOS, BOS and T - 1 target tokens, the target's EOS last. With
        # --padded the i-th pair is i tokens shorter on each side (at least
        # one token left): the first fills the bucket, the others leave
        # padding, which the loss and the attention to the source must skip.
        def short(i):
            return min(i, a.source - 2, a.target - 2) if a.padded else 0
        write_corpus(a.output, b"TGCTOKS\n", a.vocab,
                     [([token() for _ in range(a.source - 1 - short(i))],
                       [token() for _ in range(a.target - 1 - short(i))])
                      for i in range(a.batch)])


def read_corpus(path):
    """The (source, target) id lists of a .tok file."""
    data = open(path, "rb").read()
    _, _, _, count, source_total, target_total = struct.unpack_from("<IIQQQQ", data, 8)
    at = 48
    source_offsets = struct.unpack_from(f"<{count + 1}Q", data, at)
    at += 8 * (count + 1)
    target_offsets = struct.unpack_from(f"<{count + 1}Q", data, at)
    at += 8 * (count + 1)
    source_ids = struct.unpack_from(f"<{source_total}i", data, at)
    at += 4 * source_total
    target_ids = struct.unpack_from(f"<{target_total}i", data, at)
    pairs = [(list(source_ids[source_offsets[i]:source_offsets[i + 1]]),
              list(target_ids[target_offsets[i]:target_offsets[i + 1]]))
             for i in range(count)]
    return pairs


# --- the program's state -----------------------------------------------------

VARIABLE = re.compile(r"tg\.variable @([\w.]+)([^:]*): tensor<([0-9x]+)xf32>")


def read_variables(planned):
    """(name, shape) of every variable the program dumps, in its order."""
    out = []
    for line in open(planned):
        m = VARIABLE.search(line)
        if m and " cache " not in m.group(2) + " ":
            out.append((m.group(1), [int(d) for d in m.group(3).split("x")]))
    if not out:
        sys.exit(f"error: {planned} declares no f32 variable")
    return out


def read_state(path, variables, torch):
    values = array.array("f")
    values.frombytes(open(path, "rb").read())
    sizes = [1] * len(variables)
    for i, (_, shape) in enumerate(variables):
        for d in shape:
            sizes[i] *= d
    if len(values) != sum(sizes):
        sys.exit(f"error: {path} holds {len(values)} floats, the variables "
                 f"{sum(sizes)}")
    flat = torch.tensor(values, dtype=torch.float32)
    state, at = {}, 0
    for (name, shape), size in zip(variables, sizes):
        state[name] = flat[at:at + size].view(shape).clone()
        at += size
    return state


TOKEN_INPUT = re.compile(r'tensor<([0-9x]+)xi32> \{tg\.name = "(\w+)"\}')


def read_inputs(planned):
    """The shape of each token input of the training step, by name
    (source_ids, target_in_ids, ...: [batch, length]): the bucket."""
    for line in open(planned):
        if "func.func @train_step(" in line:
            arguments = line.split(") ->")[0]
            return {name: [int(d) for d in dims.split("x")]
                    for dims, name in TOKEN_INPUT.findall(arguments)}
    sys.exit(f"error: {planned} has no train_step")


# --- the comparison ----------------------------------------------------------

def worst(a, b, floor):
    """Largest |a - b| over the tensor's largest |b|, or over `floor` where
    that is smaller (a gradient that is zero but for rounding, as a key
    bias's: softmax does not see a score added to a whole row)."""
    return (a - b).abs().max().item() / max(b.abs().max().item(), floor)


def load_reference(model):
    """reference_<model>.py beside this script, or a reference's own path."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    if not model.endswith(".py"):
        return importlib.import_module("reference_" + model)
    sys.path.insert(0, os.path.dirname(os.path.abspath(model)))
    spec = importlib.util.spec_from_file_location("reference", model)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def losses(path):
    """(loss, tokens) of each step of a --loss-log."""
    return [(float(loss), int(tokens))
            for _, loss, tokens in (line.split() for line in open(path) if line.strip())]


class Comparison:
    def __init__(self, a, torch):
        self.a, self.torch, self.failures = a, torch, []

    def loss(self, label, tgc, reference, tokens):
        tgc_loss, tgc_tokens = tgc
        if tgc_tokens != tokens:
            self.failures.append(f"{label}tokens: tgc {tgc_tokens}, PyTorch {tokens}")
        error = abs(tgc_loss - reference) / abs(reference)
        print(f"{label}loss: tgc {tgc_loss:.6f}, PyTorch {reference:.6f}, relative error {error:.2g}")
        if error > self.a.loss_tolerance:
            self.failures.append(f"{label}loss error {error:.3g} > {self.a.loss_tolerance}")

    def gradients(self, params, first_moments, beta1):
        largest = max(p.grad.abs().max().item() for p in params.values() if p.grad is not None)
        errors = {}
        for name, p in params.items():
            if p.grad is None:
                self.failures.append(f"{name}: PyTorch's loss does not use it")
                continue
            errors[name] = worst(first_moments["adam.m." + name] / (1 - beta1), p.grad,
                                 1e-3 * largest)
        name, error = max(errors.items(), key=lambda kv: kv[1])
        print(f"gradients: {len(errors)} parameters, worst relative error {error:.2g} ({name})")
        for name, error in sorted(errors.items()):
            if error > self.a.grad_tolerance:
                self.failures.append(f"{name}: gradient error {error:.3g} > {self.a.grad_tolerance}")

    def updates(self, label, params, after, tolerance, left_out=None):
        """Every parameter after the program's step against PyTorch's, in
        units of lr, past one unit in the last place of the f32 result.
        Adam's step is about g / (|g| + eps) (plus the decay), which the
        gradients' errors decide where |g| is small: entries below
        --small-gradient of the tensor's largest (or 100 eps) are left out,
        here and in every later step (`left_out`, returned)."""
        torch, lr = self.torch, self.a.lr
        errors, skipped, left_out = {}, 0, dict(left_out or {})
        for name, p in params.items():
            expected = p.detach()
            ulp = torch.nextafter(expected, torch.tensor(float("inf"))) - expected
            error = ((after[name] - expected).abs() - ulp).clamp(min=0) / lr
            small = p.grad.abs() <= max(100 * self.a.eps,
                                        self.a.small_gradient * p.grad.abs().max().item())
            left_out[name] = small | left_out.get(name, small)
            clear = ~left_out[name]
            skipped += int(left_out[name].sum())
            errors[name] = (error * clear).max().item()
        name, error = max(errors.items(), key=lambda kv: kv[1])
        print(f"{label}updates: {len(errors)} parameters, worst error {error:.2g} of the "
              f"learning rate ({name}); {skipped} entries with small gradients left out")
        for name, error in sorted(errors.items()):
            if error > tolerance:
                self.failures.append(f"{label}{name}: update error {error:.3g} lr > {tolerance} lr")
        return left_out


class Reference:
    """The model in PyTorch on one corpus, from the program's initial state."""

    def __init__(self, a, torch):
        self.a, self.torch = a, torch
        self.model = load_reference(a.model)
        self.variables = read_variables(a.planned)
        self.initial = read_state(a.initial, self.variables, torch)
        self.pairs = read_corpus(a.corpus)
        self.inputs = read_inputs(a.planned)

    def parameters(self):
        """The initial parameters, each a leaf that takes a gradient."""
        return {name: value.clone().requires_grad_(True)
                for name, value in self.initial.items()
                if not name.startswith(("adam.m.", "adam.v."))}

    def step(self, params, autocast=False):
        """The mean loss over every pair of the corpus (the mean over the
        update's tokens that --update-freq's token-weighted sum makes), its
        gradients into params (clipped as --clip-norm clips), and the tokens
        it counts; with `autocast`, under PyTorch's bf16 mixed precision."""
        torch, a = self.torch, self.a
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss, tokens = self.model.loss(params, self.pairs, torch, heads=a.heads,
                                           kv_heads=a.kv_heads or a.heads,
                                           label_smoothing=a.label_smoothing,
                                           inputs=self.inputs)
        loss.float().backward()
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(list(params.values()), a.clip_norm)
        return loss.item(), tokens


def check(a):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    reference = Reference(a, torch)
    beta1, beta2 = (float(x) for x in a.betas.split(","))
    if a.bf16:
        check_bf16(a, torch, reference, beta1)
        return
    compare = Comparison(a, torch)
    initial, variables = reference.initial, reference.variables
    params = reference.parameters()
    compare.loss("", losses(a.initial_loss)[0], *reference.step(params))
    compare.gradients(params, initial, beta1)

    decayed = reference.model.decays(list(params))
    groups = [{"params": [params[n] for n in params if n in decayed], "weight_decay": a.weight_decay},
              {"params": [params[n] for n in params if n not in decayed], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=a.lr,
                                  betas=(beta1, beta2), eps=a.eps)
    optimizer.step()
    left_out = compare.updates("", params, read_state(a.after, variables, torch),
                               a.update_tolerance)
    if a.second:
        # The same batch again (the corpus is one batch): the step's loss,
        # then Adam's second update (its moments' recurrence and bias
        # correction at step 2), which mixes two gradients: where they
        # nearly cancel, their rounding errors weigh more (measured: 3e-5 lr;
        # a beta2 of 0.99 for 0.95 moves it by 8e-3 lr).
        optimizer.zero_grad()
        second_losses = losses(a.second_loss)
        if len(second_losses) != 2:
            sys.exit(f"error: {a.second_loss} holds {len(second_losses)} steps, not 2")
        compare.loss("step 2: ", second_losses[1], *reference.step(params))
        optimizer.step()
        compare.updates("step 2: ", params, read_state(a.second, variables, torch),
                        a.second_update_tolerance, left_out)
    if compare.failures:
        sys.exit("error: tgc and PyTorch differ:\n  " + "\n  ".join(compare.failures))
    print("tgc and PyTorch agree")


def check_bf16(a, torch, reference, beta1):
    """A bf16 program's loss and gradients against the fp32 model's, each
    allowed 3 times the error of PyTorch's own mixed precision (autocast
    bf16) on the same step, plus 1e-3 of the tensor's largest gradient. The
    updates are not compared: Adam's first step is about the gradient's
    sign, which a bf16 error flips where the gradient is small (the fp32
    runs compare them; the optimizer is f32 in both precisions)."""
    fp32, mixed = reference.parameters(), reference.parameters()
    loss, tokens = reference.step(fp32)
    autocast_loss, _ = reference.step(mixed, autocast=True)
    initial = reference.initial
    grads = {name: p.grad for name, p in fp32.items()}
    autocast_grads = {name: p.grad for name, p in mixed.items()}
    tgc_loss, tgc_tokens = losses(a.initial_loss)[0]
    failures = []
    if tgc_tokens != tokens:
        failures.append(f"tokens: tgc {tgc_tokens}, PyTorch {tokens}")
    error, allowed = (abs(x - loss) / abs(loss) for x in (tgc_loss, autocast_loss))
    print(f"bf16 loss: tgc {tgc_loss:.6f}, fp32 {loss:.6f}: relative error {error:.2g} "
          f"(PyTorch autocast's {allowed:.2g})")
    if error > 3 * allowed + 1e-6:
        failures.append(f"loss error {error:.3g} > 3 x autocast's {allowed:.3g}")
    floor = 1e-3 * max(g.abs().max().item() for g in grads.values())
    errors = {}
    for name, g in grads.items():
        errors[name] = (worst(initial["adam.m." + name] / (1 - beta1), g, floor),
                        worst(autocast_grads[name], g, floor))
    name, (error, allowed) = max(errors.items(), key=lambda kv: kv[1][0])
    autocast_name = max(errors, key=lambda n: errors[n][1])
    print(f"bf16 gradients: {len(errors)} parameters, worst relative error {error:.2g} ({name}); "
          f"PyTorch autocast's {errors[autocast_name][1]:.2g} ({autocast_name})")
    for name, (error, allowed) in sorted(errors.items()):
        if error > 3 * allowed + 1e-3:
            failures.append(f"{name}: gradient error {error:.3g} > 3 x autocast's {allowed:.3g} + 1e-3")
    if failures:
        sys.exit("error: tgc's bf16 step is further from the fp32 model than PyTorch's:\n  "
                 + "\n  ".join(failures))
    print("tgc's bf16 step is as close to the fp32 model as PyTorch's autocast")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus")
    kind = c.add_mutually_exclusive_group(required=True)
    kind.add_argument("--lm", action="store_true")
    kind.add_argument("--pairs", action="store_true")
    for name in ("vocab", "batch"):
        c.add_argument("--" + name, type=int, required=True)
    for name in ("context", "source", "target"):
        c.add_argument("--" + name, type=int)
    c.add_argument("--padded", action="store_true", help="--pairs: of several lengths")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("-o", dest="output", required=True)
    k = sub.add_parser("check")
    for name in ("model", "planned", "corpus", "initial", "initial-loss", "betas"):
        k.add_argument("--" + name, required=True)
    k.add_argument("--after", help="--dump-params after one step (not with --bf16)")
    for name in ("lr", "eps", "weight-decay"):
        k.add_argument("--" + name, type=float, required=True)
    k.add_argument("--heads", type=int, required=True)
    k.add_argument("--kv-heads", type=int, help="key and value heads (default: --heads)")
    k.add_argument("--second", help="--dump-params of a two-step run")
    k.add_argument("--second-loss", help="its --loss-log")
    k.add_argument("--label-smoothing", type=float, default=0.0)
    k.add_argument("--bf16", action="store_true",
                   help="a --precision=bf16 program: loss and gradients against "
                        "the fp32 model, within 3x PyTorch autocast's error")
    k.add_argument("--clip-norm", type=float, default=0.0,
                   help="the runs' --clip-norm (PyTorch's clip_grad_norm_)")
    k.add_argument("--loss-tolerance", type=float, default=1e-5)
    k.add_argument("--grad-tolerance", type=float, default=1e-4)
    k.add_argument("--update-tolerance", type=float, default=1e-4)
    k.add_argument("--second-update-tolerance", type=float, default=1e-3)
    k.add_argument("--small-gradient", type=float, default=1e-3,
                   help="updates are compared where |gradient| is above this "
                        "fraction of its tensor's largest")
    a = p.parse_args()
    if a.command == "check" and not a.bf16 and not a.after:
        p.error("check needs --after (the dump after one step)")
    if a.command == "corpus":
        make_corpus(a)
    else:
        check(a)


if __name__ == "__main__":
    main()
