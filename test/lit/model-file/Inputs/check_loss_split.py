"""Checks the split of a loss with extra terms in two runs' logs and a --metrics file.

Usage: check_loss_split.py LOG_A LOG_B METRICS TOLERANCE

Every log line of both runs reads `loss L (cross-entropy C + other terms O)  ppl P`
with L = C + O and P = exp(C) within the printed rounding; the runs log the
same steps and their cross-entropies agree within TOLERANCE (absolute). Every
"train" record of METRICS (run A's) has "cross_entropy" and "other_terms",
with the same sums, and the cross-entropy run A printed.
"""
import json
import math
import re
import sys

log_a, log_b, metrics_path, tolerance = sys.argv[1:5]
tolerance = float(tolerance)

LINE = re.compile(r"^step +(\d+)/\d+ .* loss ([0-9.]+) \(cross-entropy ([0-9.]+) "
                  r"\+ other terms (-?[0-9.]+)\)  ppl +([0-9.]+)  ")


def fail(message):
    sys.exit("error: " + message)


def read_log(path):
    rows = {}
    for line in open(path):
        if not line.startswith("step "):
            continue
        match = LINE.match(line)
        if not match:
            fail("%s: the loss is not split: %s" % (path, line.strip()))
        step = int(match.group(1))
        loss, ce, other, ppl = (float(x) for x in match.groups()[1:])
        # Each number is rounded to 4 decimals (ppl to 3).
        if abs(ce + other - loss) > 1.5e-4:
            fail("%s step %d: %g + %g is not the loss %g" % (path, step, ce, other, loss))
        if abs(ppl - math.exp(ce)) > 1e-4 * ppl + 1e-3:
            fail("%s step %d: ppl %g is not exp(cross-entropy %g)" % (path, step, ppl, ce))
        rows[step] = ce
    if not rows:
        fail("%s has no log lines" % path)
    return rows


a, b = read_log(log_a), read_log(log_b)
if sorted(a) != sorted(b):
    fail("the runs log different steps")
worst = max(abs(a[s] - b[s]) for s in a)
if worst > tolerance:
    fail("the runs' cross-entropies differ by %g" % worst)

records = [json.loads(line) for line in open(metrics_path) if line.strip()]
train = [r for r in records if r["kind"] == "train"]
for r in train:
    if "cross_entropy" not in r or "other_terms" not in r:
        fail("step %d's record has no cross_entropy and other_terms" % r["step"])
    if abs(r["cross_entropy"] + r["other_terms"] - r["loss"]) > 1e-6:
        fail("step %d's record: the parts do not add up to the loss" % r["step"])
    if abs(r["ppl"] - math.exp(r["cross_entropy"])) > 1e-6 * r["ppl"]:
        fail("step %d's record: ppl is not exp(cross_entropy)" % r["step"])
    if abs(r["cross_entropy"] - a.get(r["step"], float("inf"))) > 5.1e-5:
        fail("step %d's record does not match the log line" % r["step"])
if not train:
    fail("%s has no train records" % metrics_path)

print("%d steps split into cross-entropy and other terms, ppl = exp(cross-entropy); "
      "the runs' cross-entropies agree within %.3g; %d records with cross_entropy "
      "and other_terms" % (len(a), worst, len(train)))
