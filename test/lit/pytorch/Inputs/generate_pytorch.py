#!/usr/bin/env python3
"""A language model's greedy continuations and corpus loss in PyTorch, from a
tgc program's parameters, against the program's --generate and --score.

The model is one of against_pytorch.py's references (reference_llama.py,
reference_gpt2.py, or a path: the same loss() function), in float64 on the
parameters of --dump-params (names and shapes from `tgc --emit=planned`;
reference_llama.py's rotary cos and sin are f32 values, as it has them).
To continue a prompt, the reference's loss() runs on the prefix alone, as
one document of one window, and the logits it gives to cross_entropy are
kept (this script changes nothing else of the model).

generate: greedy continuation as `--generate --temperature 0` makes it
(runtime/program/decode/Translate.cpp, continuePrompts): a prompt keeps its
last context - 1 tokens and an empty one is the end-of-document token (EOS);
the next token is the largest logit among the ids from EOS on (PAD and BOS
are never picked); EOS, --max-new-tokens or a full context ends it. Unlike
the program's incremental decoder, which caches each position's keys and
values, every step recomputes the whole prefix from position 0. Each output
line is the whole prompt and its continuation, as ids (tgc-data decode
--ids makes them text); it prints how many tokens it picked and the smallest
gap between the largest and the second largest logit it picked from (how
far from a tie the comparison is).

score: the mean next-token loss over every window of a document corpus
(windows of context + 1 tokens every context tokens), against the line
`--score` printed (its loss has 4 decimals, so within 1e-4).

compare: two files of lines, which must be equal.

Usage:
  generate_pytorch.py generate --model NAME --heads H [--kv-heads K] \\
      --planned step.mlir --params P --prompts prompts.ids --max-new-tokens N -o out.ids
  generate_pytorch.py score --model NAME --heads H [--kv-heads K] \\
      --planned step.mlir --params P --corpus corpus.tok --tgc score.txt
  generate_pytorch.py compare expected.txt actual.txt
"""
import argparse
import re
import sys
import types

import against_pytorch as ap

EOS = ap.EOS


def load(a, torch):
    reference = ap.load_reference(a.model)
    state = ap.read_state(a.params, ap.read_variables(a.planned), torch)
    params = {name: value.double() for name, value in state.items()
              if not name.startswith(("adam.m.", "adam.v."))}
    return reference, params, ap.read_inputs(a.planned)


def logits_of(reference, params, torch, heads, kv_heads):
    """tokens -> the reference model's logits [len(tokens), vocabulary]."""
    kept = []

    def cross_entropy(logits, targets, **options):
        kept.append(logits)
        return logits.sum() * 0

    # torch as the reference sees it: the same module, but for
    # nn.functional.cross_entropy, which keeps the logits it is given.
    class Functional:
        def __getattr__(self, name):
            return getattr(torch.nn.functional, name)

    class Torch:
        nn = types.SimpleNamespace(functional=Functional())

        def __getattr__(self, name):
            return getattr(torch, name)

    Functional.cross_entropy = staticmethod(cross_entropy)
    wrapped = Torch()

    def logits(tokens):
        kept.clear()
        # One document of exactly the prefix: the stream is the prefix and
        # an EOS, one window of len(tokens) + 1, whose input is the prefix.
        reference.loss(params, [([], list(tokens))], wrapped, heads=heads,
                       kv_heads=kv_heads, label_smoothing=0.0,
                       inputs={"target_in_ids": [1, len(tokens)]})
        return kept[0].reshape(len(tokens), -1)

    return logits


def generate(a):
    import torch
    torch.set_num_threads(1)
    reference, params, inputs = load(a, torch)
    context = inputs["target_in_ids"][1]
    logits = logits_of(reference, params, torch, a.heads, a.kv_heads or a.heads)
    lines, picked, margin = [], 0, float("inf")
    with torch.no_grad():
        for line in open(a.prompts):
            prompt = [int(t) for t in line.split()]
            tokens = prompt[len(prompt) - min(len(prompt), context - 1):] or [EOS]
            continuation = []
            while len(continuation) < a.max_new_tokens and len(tokens) < context:
                last = logits(tokens)[-1].clone()
                last[:EOS] = float("-inf")
                top = torch.topk(last, 2)
                margin = min(margin, (top.values[0] - top.values[1]).item())
                picked += 1
                token = int(top.indices[0])
                if token == EOS:
                    break
                tokens.append(token)
                continuation.append(token)
            lines.append(" ".join(map(str, prompt + continuation)))
    with open(a.output, "w") as out:
        out.write("".join(line + "\n" for line in lines))
    print(f"{len(lines)} prompts: {picked} tokens picked; smallest gap between the "
          f"two largest logits {margin:.2g}")


def score(a):
    import torch
    torch.set_num_threads(1)
    reference, params, inputs = load(a, torch)
    with torch.no_grad():
        loss, tokens = reference.loss(params, ap.read_corpus(a.corpus), torch, heads=a.heads,
                                      kv_heads=a.kv_heads or a.heads, label_smoothing=0.0,
                                      inputs=inputs)
    text = open(a.tgc).read()
    m = re.search(r": loss ([0-9.]+) .* on ([0-9]+) tokens", text)
    if not m:
        sys.exit(f"error: {a.tgc} holds no --score line")
    tgc_loss, tgc_tokens = float(m.group(1)), int(m.group(2))
    difference = abs(tgc_loss - loss.item())
    print(f"score: tgc {tgc_loss:.4f} on {tgc_tokens} tokens, PyTorch {loss.item():.6f} "
          f"on {tokens} tokens: difference {difference:.2g}")
    if tgc_tokens != tokens or difference > 1e-4:
        sys.exit("error: tgc's score and PyTorch's differ")
    print("tgc and PyTorch agree")


def compare(a):
    expected, actual = (open(path).read().splitlines() for path in (a.expected, a.actual))
    if len(expected) != len(actual):
        sys.exit(f"error: {a.expected} has {len(expected)} lines, {a.actual} {len(actual)}")
    differ = [i for i, (x, y) in enumerate(zip(expected, actual)) if x != y]
    print(f"{len(differ)} of {len(expected)} lines differ")
    for i in differ[:3]:
        print(f"line {i + 1}:\n  {expected[i]!r}\n  {actual[i]!r}")
    if differ:
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, run in (("generate", generate), ("score", score)):
        s = sub.add_parser(name)
        s.set_defaults(run=run)
        for flag in ("model", "planned", "params"):
            s.add_argument("--" + flag, required=True)
        s.add_argument("--heads", type=int, required=True)
        s.add_argument("--kv-heads", type=int, help="key and value heads (default: --heads)")
    g = sub.choices["generate"]
    g.add_argument("--prompts", required=True, help="one prompt of ids a line")
    g.add_argument("--max-new-tokens", type=int, required=True)
    g.add_argument("-o", dest="output", required=True)
    s = sub.choices["score"]
    s.add_argument("--corpus", required=True)
    s.add_argument("--tgc", required=True, help="what the program's --score printed")
    c = sub.add_parser("compare")
    c.set_defaults(run=compare)
    c.add_argument("expected")
    c.add_argument("actual")
    a = p.parse_args()
    a.run(a)


if __name__ == "__main__":
    main()
