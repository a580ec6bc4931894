"""Compares where two training runs ended: the token-weighted mean loss of
the last STEPS steps of each --loss-log file.

Usage: mean_loss_gap.py LOSSES_A LOSSES_B STEPS TOLERANCE

Prints both means and their gap; exits 1 when the gap is above TOLERANCE
(absolute) or a file has fewer than STEPS steps.
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


a, b = mean_loss(losses_a), mean_loss(losses_b)
print("mean loss of the last %d steps: %.4f and %.4f, gap %.4f"
      % (steps, a, b, abs(a - b)))
if abs(a - b) > tolerance:
    sys.exit("error: the runs end more than %g apart" % tolerance)
