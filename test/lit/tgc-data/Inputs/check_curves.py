"""Describes an SVG of `tgc-data curves` for FileCheck, checked against the
metrics file it was drawn from.

usage: check_curves.py CURVES.svg METRICS.jsonl

Per panel: its title, tick counts and whether the tick labels increase. Per
series (a <g class="series">): its id, how many points its <path> has and in
how many pieces (gaps split them), its dots, whether x grows with the step,
the direction of its values in runs ("rising then falling"), and whether
every point is the same linear map of (step, value) from the metrics file
as the first and last ones (nulls are gaps, a step's last record wins).
The legend's entries come last. Exits 1 if the SVG is not well-formed.
"""
import json
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


def expected_points(metrics_path, kind, key):
    by_step = {}
    with open(metrics_path) as f:
        for line in f:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("kind") == kind:
                # A split training loss is drawn by its cross-entropy.
                split = kind == "train" and key == "loss" and "cross_entropy" in record
                by_step[record["step"]] = record.get("cross_entropy" if split else key)
    return [(step, by_step[step]) for step in sorted(by_step)
            if by_step[step] is not None]


def directions(values):
    runs = []
    for a, b in zip(values, values[1:]):
        word = "rising" if b > a else "falling" if b < a else "flat"
        if not runs or runs[-1] != word:
            runs.append(word)
    return " then ".join(runs) or "one value"


def is_linear_map(points, expected):
    """Whether points[i] = (a*step_i + b, c*value_i + d) for all i."""
    if len(points) != len(expected):
        return False
    if len(points) < 2:
        return True
    (x0, y0), (x1, y1) = points[0], points[-1]
    (s0, v0), (s1, v1) = expected[0], expected[-1]
    for (x, y), (s, v) in zip(points, expected):
        if abs(x - (x0 + (s - s0) * (x1 - x0) / (s1 - s0))) > 0.05:
            return False
        want_y = y0 if v1 == v0 else y0 + (v - v0) * (y1 - y0) / (v1 - v0)
        if abs(y - want_y) > 0.05:
            return False
    return True


def describe_series(group, metrics_path):
    path = group.find(NS + "path").get("d")
    pieces = [[tuple(map(float, xy.split(","))) for xy in
               re.findall(r"[-\d.]+,[-\d.]+", piece)]
              for piece in re.split(r"(?=M)", path) if piece.strip()]
    points = [p for piece in pieces for p in piece]
    xs = [x for x, _ in points]
    # SVG's y grows downwards: a higher value is a smaller y.
    values = [-y for _, y in points]
    dots = len(group.findall(NS + "circle"))
    expected = expected_points(metrics_path, *SERIES[group.get("id")])
    increasing = all(a < b for a, b in zip(xs, xs[1:]))
    print(f"{group.get('id')}: {len(points)} points in {len(pieces)} pieces, "
          f"{dots} dots; x {'increasing' if increasing else 'NOT increasing'}; "
          f"values {directions(values)}; "
          f"{'matches' if is_linear_map(points, expected) else 'DIFFERS FROM'}"
          f" the metrics")


def numbers_increase(texts):
    numbers = [float(t) for t in texts]
    return all(a < b for a, b in zip(numbers, numbers[1:]))


def main():
    svg_path, metrics_path = sys.argv[1:]
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as error:
        print(f"not well-formed XML: {error}")
        return 1
    print(f"root {root.tag.replace(NS, 'svg:')}, title "
          f"'{root.find(NS + 'title').text}'")
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
            for axis, labels in ticks.items()))
        for group in panel.iter(NS + "g"):
            if group.get("class") == "series":
                describe_series(group, metrics_path)
    legend = [g.find(NS + "text").text for g in root.iter(NS + "g")
              if g.get("class") == "legend"]
    print("legend: " + " | ".join(legend))
    return 0


if __name__ == "__main__":
    sys.exit(main())
