#!/usr/bin/env python3
"""Attention alone on the GPU: tgc's CUDA kernels against PyTorch's
scaled_dot_product_attention on each of its backends (cuDNN, flash,
memory-efficient, math), on the shapes of the base and big GPU steps (384
sentences of 64 tokens, heads of 64, bf16), forward and backward.

tgc's side is build/bench/gpu_attention (bench/gpu_attention.cpp): the
batched GEMMs and row kernels (the default) and the fused kernels
(--fused-attention), called as the generated step calls them. PyTorch's side
runs each backend twice where it can: with the additive float mask the step's
peer passes (bench/pytorch_transformer.py: a zero [B, 1, 1, S] key-padding
mask, a [S, S] causal one), and in the backend's own form (no mask for the
full-length padded call, is_causal for the causal one), the fastest it
offers. A backend that refuses a form is reported as such.

Then the attention of one step, from the calls' times: base and big each run
12 padded calls (6 encoder self-attentions, 6 cross-attentions) and 6 causal
ones (the decoder's self-attentions) forward and backward.

  python3 bench/gpu_attention.py --tgc build/bench/gpu_attention [--repeats N] [--json FILE]
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import warnings

BACKENDS = ["CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH"]
# Per step: (padded calls, causal calls) of the 6+6-layer models.
CALLS_PER_STEP = {"padded": 12, "causal": 6}


def tgc_rows(binary, repeats):
    """tgc's rows: one dict per (model, kind, path), and the fused-vs-GEMMs
    differences per (model, kind)."""
    # Its errors go to stderr, as they come.
    output = subprocess.run([binary, "--repeats", str(repeats)], check=True,
                            stdout=subprocess.PIPE, text=True).stdout
    rows, differences = [], {}
    for line in output.splitlines():
        record = json.loads(line)
        if "fused_vs_gemms" in record:
            differences[(record["model"], record["kind"])] = record["fused_vs_gemms"]
        else:
            rows.append(record)
    return rows, differences


def median_ms(torch, repeats, call):
    """Median milliseconds of call() on the current stream, after a warm-up."""
    for _ in range(3):
        call()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def torch_row(torch, model, kind, backend, form, repeats):
    """PyTorch's forward and backward ms for one backend and form, or the
    reason it cannot run them."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    b, h, s, d = model["batch"], model["heads"], model["length"], model["head_width"]
    generator = torch.Generator(device="cuda").manual_seed(1)

    def uniform(*shape):
        return (torch.rand(*shape, generator=generator, device="cuda") * 2 - 1).to(torch.bfloat16)

    # The projections' layout, [B, S, H, D], viewed as [B, H, S, D].
    q, k, v = (uniform(b, s, h, d).requires_grad_() for _ in range(3))
    grad = uniform(b, s, h, d).transpose(1, 2)
    kwargs = {"scale": 1.0 / math.sqrt(d)}
    if form == "mask" and kind == "padded":
        kwargs["attn_mask"] = torch.zeros(b, 1, 1, s, device="cuda", dtype=torch.bfloat16)
    elif form == "mask":
        kwargs["attn_mask"] = torch.full((s, s), float("-inf"), device="cuda",
                                         dtype=torch.bfloat16).triu(1)
    elif kind == "causal":
        kwargs["is_causal"] = True

    def forward():
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                              v.transpose(1, 2), **kwargs)

    def forward_backward():  # the gradients returned, not accumulated
        torch.autograd.grad(forward(), (q, k, v), grad)

    # A backend that cannot take the call warns why, then raises.
    with warnings.catch_warnings(record=True) as why:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel(getattr(SDPBackend, backend)):
                with torch.no_grad():
                    forward_ms = median_ms(torch, repeats, forward)
                both_ms = median_ms(torch, repeats, forward_backward)
        except RuntimeError as error:
            reasons = [str(w.message).splitlines()[0] for w in why] or [str(error)]
            return {"refused": "; ".join(reasons)[:200]}
    return {"forward_ms": forward_ms, "backward_ms": max(both_ms - forward_ms, 0.0)}


def step_ms(times):
    """The attention of one step, forward and backward, from each kind's
    (forward, backward) ms per call; None without both kinds."""
    if any(k not in times for k in CALLS_PER_STEP):
        return None
    return sum(n * sum(times[k]) for k, n in CALLS_PER_STEP.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tgc", required=True, help="build/bench/gpu_attention")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    try:
        rows, differences = tgc_rows(args.tgc, args.repeats)
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"gpu_attention.py: tgc's side did not run: {error}")
    import torch
    print(f"GPU: {torch.cuda.get_device_name()}; PyTorch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    models = {r["model"]: r for r in rows}
    # sides[(model, implementation)] = {kind: (forward, backward)}
    sides = {}
    for r in rows:
        sides.setdefault((r["model"], "tgc " + r["path"]), {})[r["kind"]] = (
            r["forward_ms"], r["backward_ms"])
        if r["path"] == "fused" and r["fused_calls"] != 2 * (3 + args.repeats):
            print(f"note: {r['model']} {r['kind']}: the fused kernels ran "
                  f"{r['fused_calls']} of {2 * (3 + args.repeats)} calls")
    refused = []
    for name, model in models.items():
        for kind in CALLS_PER_STEP:
            for backend in BACKENDS:
                for form in ("mask", "native"):
                    result = torch_row(torch, model, kind, backend, form, args.repeats)
                    label = f"torch {backend.split('_')[0].lower()} {form}"
                    if "refused" in result:
                        refused.append(f"{name} {kind} {label}: {result['refused']}")
                        continue
                    sides.setdefault((name, label), {})[kind] = (
                        result["forward_ms"], result["backward_ms"])

    table = print_table(models, sides, args.repeats)
    for (name, kind), d in differences.items():
        print(f"{name} {kind}: fused against GEMMs, largest difference: "
              + ", ".join(f"{k} {v:.3g}" for k, v in d.items()))
    for line in refused:
        print("refused: " + line)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "cudnn": torch.backends.cudnn.version(), "rows": table,
                       "fused_vs_gemms": {f"{m} {k}": d for (m, k), d in differences.items()},
                       "refused": refused}, out, indent=1)
    return 0


def print_table(models, sides, repeats):
    """The table of every implementation's calls and step, each step against
    tgc's default (the GEMMs); returns its rows."""
    print(f"\nms per call (median of {repeats}), forward / backward:")
    print("| model | implementation | padded | causal | attention of a step (ms) | tgc's default / it |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    table = []
    for name in models:
        default = step_ms(sides.get((name, "tgc gemms"), {}))
        for (model, label), times in sides.items():
            if model != name:
                continue
            cell = lambda kind: ("%.3f / %.3f" % times[kind]) if kind in times else "refused"
            step = step_ms(times)
            ratio = f"{default / step:.2f}x" if step and default else ""
            print(f"| {name} | {label} | {cell('padded')} | {cell('causal')} | "
                  f"{step:.2f} | {ratio} |" if step else
                  f"| {name} | {label} | {cell('padded')} | {cell('causal')} | | |")
            table.append({"model": name, "implementation": label, "calls": times,
                          "step_ms": step})
    return table


if __name__ == "__main__":
    sys.exit(main())
