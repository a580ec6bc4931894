"""Says, step by step, whether two --loss-log files have the same loss.

Usage: compare_losses.py LOSSES_A LOSSES_B

Prints `step S: same` or `step S: differs` for each step of A (bit for bit,
as the logs print them); exits 1 when the runs log different steps.
"""
import sys


def read(path):
    return [line.split() for line in open(path) if line.strip()]


a, b = read(sys.argv[1]), read(sys.argv[2])
if [row[0] for row in a] != [row[0] for row in b]:
    sys.exit("error: the runs log different steps")
for x, y in zip(a, b):
    print("step %s: %s" % (x[0], "same" if x[1] == y[1] else "differs"))
