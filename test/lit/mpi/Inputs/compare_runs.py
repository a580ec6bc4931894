"""Compares two training runs within an absolute tolerance:
    compare_runs.py TOLERANCE A.loss B.loss [A.bin B.bin]
The loss logs ("step loss tokens" a line) must list the same steps and
token counts, with losses within TOLERANCE; the parameter dumps (raw
float32) must have the same size and agree within TOLERANCE element by
element. Prints the largest differences."""
import struct
import sys


def losses(path):
    rows = {}
    with open(path) as f:
        for line in f:
            step, loss, tokens = line.split()
            rows[int(step)] = (float(loss), int(tokens))
    return rows


def floats(path):
    with open(path, "rb") as f:
        data = f.read()
    return struct.unpack("<%df" % (len(data) // 4), data)


def main():
    tolerance = float(sys.argv[1])
    a, b = losses(sys.argv[2]), losses(sys.argv[3])
    if sorted(a) != sorted(b):
        sys.exit("error: the runs logged steps %s and %s" % (sorted(a), sorted(b)))
    worst = 0.0
    for step in sorted(a):
        if a[step][1] != b[step][1]:
            sys.exit("error: step %d counted %d and %d tokens" %
                     (step, a[step][1], b[step][1]))
        worst = max(worst, abs(a[step][0] - b[step][0]))
    print("steps %d, tokens equal, largest loss difference %.3g" % (len(a), worst))
    ok = worst <= tolerance
    if len(sys.argv) > 5:
        p, q = floats(sys.argv[4]), floats(sys.argv[5])
        if len(p) != len(q):
            sys.exit("error: %d and %d parameters" % (len(p), len(q)))
        largest = max(abs(x - y) for x, y in zip(p, q))
        print("parameters %d, largest difference %.3g" % (len(p), largest))
        ok = ok and largest <= tolerance
    if not ok:
        sys.exit("error: the runs differ by more than %g" % tolerance)
    print("equal within %g" % tolerance)


main()
