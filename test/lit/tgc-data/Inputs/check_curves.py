"""Describes an SVG of `tgc-data curves` for FileCheck, checked against the
metrics files it was drawn from.

usage: check_curves.py CURVES.svg METRICS.jsonl...

Per panel: its title, tick counts and whether the tick labels increase, its
axis titles, and its note if any. Per
series (a <g class="series">): its id, how many points its <path> has and in
how many pieces (gaps split them), its dots, whether x grows with the step,
the direction of its values in runs ("rising then falling"), and whether
every point is the same linear map of (step, value) from the metrics file
as the first and last ones (nulls are gaps, a step's last record wins).
A series id ending "-N" is of the Nth file. A learning rate is checked
against its file's "run" records where it has them: the schedule's rate at
every step (past 2000 steps of a span, 2000 evenly spaced ones, the
warmup's end and the last). Then whether every panel has the same x ticks,
how many colours the runs have, and the legend's entries. Exits 1 if the
SVG is not well-formed.
"""
import json
import math
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
# id -> (kind, key) in the metrics file
SERIES = {
    "series-train-loss": ("train", "loss"),
    "series-valid-loss": ("valid", "loss"),
    "series-valid-bleu": ("valid", "bleu"),
    "series-learning-rate": ("train", "lr"),
}


def schedule_rate(run, step):
    """The test's own reading of common/Schedule.h, given the peak."""
    top, warmup = run["lr_peak"], run["lr_warmup"]
    if step < warmup:
        return top * step / warmup
    kind = run["lr_scheduler"]
    if kind == "inverse_sqrt":
        return top * math.sqrt(max(warmup, 1) / step)
    if kind == "constant":
        return top
    span = run["lr_last_step"] - warmup
    done = min(max((step - warmup) / span, 0.0), 1.0) if span > 0 else 1.0
    shape = 1 - done if kind == "linear" else 0.5 * (1 + math.cos(math.pi * done))
    return run["lr_min"] + (top - run["lr_min"]) * shape


def scheduled_rates(records, by_step):
    """by_step with each "run" record's rates over the steps after it."""
    spans = []
    for record in records:
        if record.get("kind") == "run":
            spans.append([record, record["step"], record["step"]])
        elif record.get("kind") in ("train", "valid") and spans:
            spans[-1][2] = max(spans[-1][2], record["step"])
    for run, after, last in spans:
        if last <= after:
            continue
        for step in [s for s in by_step if after < s <= last]:
            del by_step[step]
        stride = -(-(last - after) // 2000)
        steps = set(range(after + 1, last + 1, stride)) | {last}
        if after < run["lr_warmup"] <= last:
            steps.add(run["lr_warmup"])
        for step in steps:
            by_step[step] = schedule_rate(run, step)
    return bool(spans)


def expected_points(metrics_path, kind, key):
    by_step = {}
    with open(metrics_path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for record in records:
        if record.get("kind") == kind:
            # A split training loss is drawn by its cross-entropy.
            split = kind == "train" and key == "loss" and "cross_entropy" in record
            by_step[record["step"]] = record.get("cross_entropy" if split else key)
    source = "metrics"
    if key == "lr" and scheduled_rates(records, by_step):
        # The log lines' rates (f32; a step's last) lie on the drawn curve.
        logged = {r["step"]: r["lr"] for r in records
                  if r.get("kind") == "train" and r.get("lr") is not None}
        on = all(abs(lr - by_step[step]) <= 1e-6 * lr
                 for step, lr in logged.items() if step in by_step)
        source = "schedule, " + ("the log's lr on it" if on
                                 else "the log's lr OFF it")
    return [(step, by_step[step]) for step in sorted(by_step)
            if by_step[step] is not None], source


def directions(values):
    runs = []
    for a, b in zip(values, values[1:]):
        word = "rising" if b > a else "falling" if b < a else "flat"
        if not runs or runs[-1] != word:
            runs.append(word)
    return " then ".join(runs) or "one value"


def is_linear_map(points, expected):
    """Whether points[i] = (a*step_i + b, c*value_i + d) for all i, within
    the SVG's rounding to 0.01."""
    if len(points) != len(expected):
        return False
    if len(points) < 2:
        return True
    (x0, _), (x1, _) = points[0], points[-1]
    (s0, _), (s1, _) = expected[0], expected[-1]
    # y by the lowest and highest values: the least rounding error.
    low = min(range(len(expected)), key=lambda i: expected[i][1])
    high = max(range(len(expected)), key=lambda i: expected[i][1])
    (y0, y1), (v0, v1) = ((points[low][1], points[high][1]),
                          (expected[low][1], expected[high][1]))
    for (x, y), (s, v) in zip(points, expected):
        if abs(x - (x0 + (s - s0) * (x1 - x0) / (s1 - s0))) > 0.05:
            return False
        want_y = y0 if v1 == v0 else y0 + (v - v0) * (y1 - y0) / (v1 - v0)
        if abs(y - want_y) > 0.05:
            return False
    return True


def series_file(series_id, metrics_paths):
    """The metrics file of a series id, and the id without its run number."""
    match = re.fullmatch(r"(.*)-(\d+)", series_id)
    if match:
        return match.group(1), metrics_paths[int(match.group(2)) - 1]
    return series_id, metrics_paths[0]


def describe_series(group, metrics_paths):
    path = group.find(NS + "path").get("d")
    pieces = [[tuple(map(float, xy.split(","))) for xy in
               re.findall(r"[-\d.]+,[-\d.]+", piece)]
              for piece in re.split(r"(?=M)", path) if piece.strip()]
    points = [p for piece in pieces for p in piece]
    xs = [x for x, _ in points]
    # SVG's y grows downwards: a higher value is a smaller y.
    values = [-y for _, y in points]
    dots = len(group.findall(NS + "circle"))
    name, metrics_path = series_file(group.get("id"), metrics_paths)
    expected, source = expected_points(metrics_path, *SERIES[name])
    increasing = all(a < b for a, b in zip(xs, xs[1:]))
    print(f"{group.get('id')}: {len(points)} points in {len(pieces)} pieces, "
          f"{dots} dots; x {'increasing' if increasing else 'NOT increasing'}; "
          f"values {directions(values)}; "
          f"{'matches' if is_linear_map(points, expected) else 'DIFFERS FROM'}"
          f" the {source}")


def numbers_increase(texts):
    numbers = [float(t) for t in texts]
    return all(a < b for a, b in zip(numbers, numbers[1:]))


def main():
    svg_path, metrics_paths = sys.argv[1], sys.argv[2:]
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as error:
        print(f"not well-formed XML: {error}")
        return 1
    print(f"root {root.tag.replace(NS, 'svg:')}, title "
          f"'{root.find(NS + 'title').text}'")
    x_ticks, colors = [], {}
    for panel in root.iter(NS + "g"):
        if panel.get("class") != "panel":
            continue
        texts = list(panel.iter(NS + "text"))
        title = [t.text for t in texts if t.get("class") == "panel-title"][0]
        ticks = {axis: [t.text for t in texts
                        if t.get("class") == f"tick {axis}-tick"]
                 for axis in ("x", "y")}
        print(f"panel '{title}': " + ", ".join(
            f"{len(labels)} {axis} ticks"
            + (" increasing" if len(labels) > 1 and numbers_increase(labels)
               else "")
            for axis, labels in ticks.items())
            + "; axes " + ", ".join(
                f"{axis} '{t.text}'" for axis in ("x", "y") for t in texts
                if t.get("class") == f"axis-title {axis}-title"))
        for t in texts:
            if t.get("class") == "note":
                print(f"note '{t.text}'")
        for group in panel.iter(NS + "g"):
            if group.get("class") == "series":
                describe_series(group, metrics_paths)
        x_ticks.append(ticks["x"])
        for group in panel.iter(NS + "g"):
            if group.get("class") == "series":
                colors.setdefault(series_file(group.get("id"), metrics_paths)[1],
                                  set()).add(group.find(NS + "path").get("stroke"))
    same = all(t == x_ticks[0] for t in x_ticks)
    print(f"x ticks: {'the same' if same else 'DIFFERENT'} in every panel "
          f"({x_ticks[0][0]} .. {x_ticks[0][-1]})")
    if len(metrics_paths) > 1:
        distinct = all(not (a & b) for i, a in enumerate(colors.values())
                       for b in list(colors.values())[i + 1:])
        print(f"runs: {len(colors)}, "
              f"{'a colour each' if distinct else 'colours SHARED'}")
    legend = [g.find(NS + "text").text for g in root.iter(NS + "g")
              if g.get("class") == "legend"]
    print("legend: " + " | ".join(legend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
