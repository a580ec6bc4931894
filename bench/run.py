#!/usr/bin/env python3
"""tgc's compiled training step vs the same model in PyTorch, on the CPU.

Rows of full-length batches (the shapes people train with), rows of small
batches (the built-in reverse task), and a row under load (two copies of one
tgc binary at once). For each: step time on both sides, the ratio, MFU against
the machine's GEMM peak (the best f32 GEMM, OpenBLAS's or oneDNN's, for f32
rows; oneDNN's bf16 GEMM for bf16 rows), the GEMMs' share of the step and the
peak RSS. tgc runs in f32 and, with --precision=bf16 (mixed precision), again in
bf16; PyTorch in f32 and, for the bf16 rows, under torch.autocast's bf16 (its
fastest setting on a CPU with bf16 instructions): each tgc row against PyTorch
in the same precision. See bench/README.md.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import sides
import transformer_config

# name: (preset, config in bench/configs, timed steps, warm-up steps, full length,
#        repeats: interleaved runs of both sides, for the rows whose ratio is near its target)
ROWS = {
    "2L-d128-V1k": ("small", "full-2l-d128", 30, 3, True, 3),
    "3L-d256-V8k": ("small", "full-3l-d256", 8, 2, True, 3),
    "6L-d512-V8k": ("base", "full-6l-d512-v8k", 4, 1, True, 1),
    "6L-d512-V37k": ("base", "full-6l-d512-v37k", 4, 1, True, 1),
    "tiny": ("tiny", "tiny", 500, 50, False, 1),
    "small": ("small", "small", 60, 5, False, 1),
    "base": ("base", "base", 15, 3, False, 1),
}
SECTIONS = {"full": ["2L-d128-V1k", "3L-d256-V8k", "6L-d512-V8k", "6L-d512-V37k"],
            "small": ["tiny", "small", "base"]}
LOAD_ROW = "2L-d128-V1k"


def median_run(runs):
    """The run with the median step time (the lower middle one of an even count),
    so that its other figures (RSS, GEMM share) belong to the same run."""
    return sorted(runs, key=lambda r: r["ms"])[(len(runs) - 1) // 2]


def summarize(runs, torch_runs):
    """The median run of one side, with every run's step time and the ratio
    PyTorch/tgc of each repeat (the two sides of a repeat ran back to back, so
    the machine's speed changing between repeats moves both)."""
    side = dict(median_run(runs))
    side["repeats_ms"] = [r["ms"] for r in runs]
    side["ratios"] = [p["ms"] / t["ms"] for t, p in zip(runs, torch_runs)]
    return side


def measure_row(name, args, python, tmp, env, torch_env):
    preset, config_name, steps, warmup, full, repeats = ROWS[name]
    steps, warmup = args.steps or steps, args.warmup or warmup
    repeats = args.repeats or repeats
    config = os.path.join(sides.BENCH, "configs", config_name + ".pbtxt")
    c = transformer_config.load(preset, config)
    print(f"{name}: {warmup} warm-up + {steps} timed steps per side, {repeats} "
          f"repeat{'s' if repeats > 1 else ''} ...", flush=True)
    exe, parameters = sides.compile_tgc(name, preset, config, tmp)
    bf16_exe = (sides.compile_tgc(name, preset, config, tmp, "bf16")[0]
                if "bf16" in args.precisions else None)
    if full:
        files = sides.write_full_length_files(c, c.batch_size * (warmup + steps), tmp)
        data = ["--train-source", files[0], "--train-target", files[1]]
    else:
        data = ["--task", "reverse"]
    runs = {"tgc": [], "tgc_bf16": [], "pytorch": [], "pytorch_bf16": []}
    for _ in range(repeats):
        runs["tgc"].append(sides.run_tgc(exe, data, steps, warmup, env))
        runs["pytorch"].append(sides.run_pytorch(python, preset, config, steps, warmup,
                                                 args.threads, full, torch_env))
        if bf16_exe:
            runs["tgc_bf16"].append(sides.run_tgc(bf16_exe, data, steps, warmup, env))
            runs["pytorch_bf16"].append(sides.run_pytorch(
                python, preset, config, steps, warmup, args.threads, full, torch_env,
                "bf16"))
    torch = summarize(runs["pytorch"], runs["pytorch"])
    tgc = summarize(runs["tgc"], runs["pytorch"])
    tgc["parameters"] = parameters
    tgc_bf16 = summarize(runs["tgc_bf16"], runs["pytorch_bf16"]) if bf16_exe else None
    torch_bf16 = (summarize(runs["pytorch_bf16"], runs["pytorch_bf16"])
                  if bf16_exe else None)
    if tgc["parameters"] != torch["parameters"]:
        sys.exit(f"error: {name}: the parameter counts differ ({tgc['parameters']} vs "
                 f"{torch['parameters']}): the two models are not the same")
    gflop = transformer_config.train_flops(c) / 1e9
    gemm_gflop = transformer_config.train_flops(c, attention_products=False) / 1e9
    return {"row": name, "batch": f"{c.batch_size}x{c.source_length}/{c.target_length}",
            "full_length": full, "train_gflop": gflop, "gemm_gflop": gemm_gflop,
            "tgc": tgc, "tgc_bf16": tgc_bf16,
            "pytorch": torch, "pytorch_bf16": torch_bf16, "repeats": repeats,
            "exe": exe, "data": data, "steps": steps, "warmup": warmup}


def measure_load(row, env):
    """Two copies of the row's binary at once, each with all the threads:
    each one's step time against its idle time (fair share: 2x)."""
    exe, steps, warmup = row["exe"], row["steps"], row["warmup"]
    print(f"{row['row']} under load: two copies at once ...", flush=True)
    argvs = [sides.tgc_argv(exe, row["data"], steps, warmup, tag) for tag in (".a", ".b")]
    children = [sides.start_child(argv, env) for argv in argvs]
    results = []
    for argv, child in zip(argvs, children):
        output, rss = sides.wait_child(child, argv)
        results.append(sides.tgc_result(argv, output, rss, steps, warmup))
    idle = row["tgc"]["ms"]
    return {"row": row["row"], "idle_ms": idle, "copies_ms": [r["ms"] for r in results],
            "slowdown": [r["ms"] / idle for r in results]}


def ratio_text(ratios):
    """The median ratio of the repeats, with their range when there are several."""
    median = statistics.median(ratios)
    if len(ratios) == 1:
        return f"{median:.2f}x"
    return f"{median:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def gemm_rate_text(gemm_gflop, side, peak):
    """tgc's GEMM ops' rate inside the step (their FLOPs over their share of
    the step), against the peak: how far the GEMMs themselves are from it."""
    seconds = side["ms"] / 1e3 * side["gemm_share"]
    if seconds <= 0:
        return "-"
    rate = gemm_gflop / seconds
    return f"{rate:.0f} ({100 * rate / peak:.0f}%)"


def table(rows, peak, peak_bf16):
    header = ("row", "batch", "GFLOP", "ms/step tgc / PT", "PT/tgc", "MFU tgc / PT",
              "GEMM share tgc / PT", "tgc GEMMs GFLOP/s", "tok/s tgc / PT",
              "RSS MiB tgc / PT", "RSS tgc/PT", "tgc RSS / planned")
    lines = [header]
    # Each tgc row against PyTorch in the same precision, and both MFUs
    # against that precision's GEMM peak.
    sides_of = lambda r: [(r["row"], r["tgc"], r["pytorch"], peak)] + (
        [(r["row"] + " bf16", r["tgc_bf16"], r["pytorch_bf16"], peak_bf16)]
        if r.get("tgc_bf16") else [])
    for r, (label, t, p, t_peak) in ((r, side) for r in rows for side in sides_of(r)):
        g = r["train_gflop"]
        mfu = lambda side: 100 * g / side["ms"] * 1e3 / t_peak
        lines.append((label, r["batch"], f"{g:.1f}", f"{t['ms']:.1f} / {p['ms']:.1f}",
                      ratio_text(t["ratios"]), f"{mfu(t):.0f}% / {mfu(p):.0f}%",
                      f"{100 * t['gemm_share']:.0f}% / {100 * p['gemm_share']:.0f}%",
                      gemm_rate_text(r["gemm_gflop"], t, t_peak),
                      f"{t['tokens_per_s']:.0f} / {p['tokens_per_s']:.0f}",
                      f"{t['rss_mib']:.0f} / {p['rss_mib']:.0f}",
                      f"{t['rss_mib'] / p['rss_mib']:.2f}",
                      f"{t['rss_mib']:.0f} / {t['planned_mib']:.0f}"))
    widths = [max(len(l[i]) for l in lines) for i in range(len(header))]
    for i, l in enumerate(lines):
        print("  ".join(v.rjust(w) for v, w in zip(l, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections",
                        help="any of full, load, small (default all; none "
                             "beside --rows)")
    parser.add_argument("--rows", help="rows by name instead (" + ", ".join(ROWS) + ")")
    parser.add_argument("--steps", type=int, help="timed steps (default: per row)")
    parser.add_argument("--warmup", type=int, help="untimed steps first, at least 1")
    parser.add_argument("--repeats", type=int,
                        help="interleaved runs of both sides per row (default: per row, "
                             "3 for the 2L and 3L rows, else 1)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--precisions", default="fp32,bf16",
                        help="the precisions to run (default fp32,bf16), each on both "
                             "sides (PyTorch's bf16: torch.autocast)")
    args = parser.parse_args()
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.warmup is not None and args.warmup < 1:
        parser.error("--warmup must be at least 1 (the log line at step W starts the clock)")
    # --rows alone runs those rows only (the load section added its row).
    sections = (args.sections.split(",") if args.sections
                else [] if args.rows else ["full", "load", "small"])
    names = args.rows.split(",") if args.rows else [
        n for s in ("full", "small") if s in sections for n in SECTIONS[s]]
    if "load" in sections and LOAD_ROW not in names:
        names.insert(0, LOAD_ROW)
    for name in names:
        if name not in ROWS:
            parser.error(f"unknown row '{name}' (rows: {', '.join(ROWS)})")
    if not os.access(sides.TGC, os.X_OK):
        sys.exit(f"error: {sides.TGC} not found; build the project first (README.md)")
    python = sides.torch_python()
    if "bf16" in args.precisions.split(",") and not sides.cpu_has_bf16():
        args.precisions = ",".join(p for p in args.precisions.split(",") if p != "bf16")
        print("note: this CPU has no bf16 instructions (avx512_bf16, amx_bf16): no bf16 "
              "rows (tgc's bf16 GEMMs would be emulated) and no bf16 peak", flush=True)

    # Both sides get the same threads: OpenMP for tgc's kernels and PyTorch's
    # ops, OpenBLAS for the GEMMs (tgc: its OpenMP build; PyTorch: its
    # pthreads build). Each side waits for work in its fastest way: tgc's
    # programs by their own default (passive, or a short spin for large
    # steps), PyTorch as sides.pytorch_wait_env says for each precision.
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))
    # OPENBLAS_CORETYPE (seen set to Haswell on machines with AVX-512) makes
    # OpenBLAS use other kernels than its own pick for the CPU, on both
    # sides: 196 instead of 353 GFLOP/s here. Each library picks its own.
    overridden = sorted(k for k in env if k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
    for key in overridden:
        print(f"note: {key}={env.pop(key)} removed from the environment "
              "(OpenBLAS picks its kernels for this CPU itself)", flush=True)
    torch_env, allocator = sides.pytorch_env(env)
    machine = {"cpu": sides.cpu_model(), "threads": args.threads,
               "pytorch_allocator": allocator, "load_average_start": os.getloadavg()[0]}
    rows, load = [], None
    with tempfile.TemporaryDirectory(prefix="tgc-bench-") as tmp:
        peak, peak_bf16, detail = sides.gemm_peaks(tmp, env)
        print(detail, end="", flush=True)
        machine["f32_gemm_peak_gflops"] = peak
        machine["bf16_gemm_peak_gflops"] = peak_bf16
        for name in names:
            rows.append(measure_row(name, args, python, tmp, env, torch_env))
            if name == LOAD_ROW and "load" in sections:
                load = measure_load(rows[-1], env)
    machine["load_average_end"] = os.getloadavg()[0]
    machine["pytorch"] = rows[0]["pytorch"]["torch"] if rows else None

    bf16_peak = f"{peak_bf16:.1f}" if peak_bf16 else "- (no bf16 instructions)"
    print(f"\n{machine['cpu']}; {args.threads} threads; GEMM peaks: f32 {peak:.1f}, "
          f"bf16 {bf16_peak} GFLOP/s (MFU of the f32 rows against the first, of the "
          f"bf16 rows against the second; PyTorch's bf16 is torch.autocast); PyTorch {machine['pytorch']} with {allocator}; load average "
          f"{machine['load_average_start']:.2f} at start, {machine['load_average_end']:.2f} "
          "at end\n")
    table(rows, peak, peak_bf16)
    if load:
        print(f"\nunder load ({load['row']}, two copies at once): idle {load['idle_ms']:.1f} "
              "ms/step; copies " + ", ".join(
                  f"{ms:.1f} ms ({s:.2f}x)" for ms, s in zip(load["copies_ms"], load["slowdown"]))
              + " (fair share 2x)")
    if args.json:
        for r in rows:
            del r["exe"], r["data"]
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "rows": rows, "load": load}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
