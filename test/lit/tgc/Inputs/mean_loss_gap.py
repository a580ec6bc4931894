"""Compares where two kinds of training runs ended: the token-weighted mean
loss of the last STEPS steps of each --loss-log file, averaged over the
runs of each kind (the same seeds on both sides: one run's curve depends
on its rounding chaotically, by a few hundredths on the tiny model).

Usage: mean_loss_gap.py LOSSES_A[,LOSSES_A2...] LOSSES_B[,LOSSES_B2...] STEPS TOLERANCE

Prints each side's mean (and its runs') and the gap; exits 1 when the gap
is above TOLERANCE (absolute) or a file has fewer than STEPS steps.
"""
import sys

losses_a, losses_b, steps, tolerance = sys.argv[1:5]
steps, tolerance = int(steps), float(tolerance)


def mean_loss(path):
    rows = [line.split() for line in open(path) if line.strip()]
    if len(rows) < steps:
        sys.exit("error: %s has %d steps, fewer than %d" % (path, len(rows), steps))
    last = rows[-steps:]
    tokens = sum(int(t) for _, _, t in last)
    return sum(float(l) * int(t) for _, l, t in last) / tokens


def side(paths):
    means = [mean_loss(path) for path in paths.split(",")]
    return sum(means) / len(means), means


(a, runs_a), (b, runs_b) = side(losses_a), side(losses_b)
describe = lambda runs: "" if len(runs) == 1 else " (%s)" % ", ".join("%.4f" % m for m in runs)
print("mean loss of the last %d steps: %.4f%s and %.4f%s, gap %.4f"
      % (steps, a, describe(runs_a), b, describe(runs_b), abs(a - b)))
if abs(a - b) > tolerance:
    sys.exit("error: the runs end more than %g apart" % tolerance)
