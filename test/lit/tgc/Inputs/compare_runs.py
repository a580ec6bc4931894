"""Compares two training runs: their --loss-log files and --dump-params files.

Usage: compare_runs.py LOSSES_A LOSSES_B PARAMS_A PARAMS_B TOLERANCE [STATE_TOLERANCE]

Losses: same steps and token counts, each loss within TOLERANCE relative.
Parameters: same size; every value within STATE_TOLERANCE (default:
TOLERANCE) as min(absolute, relative) error. Prints the worst errors; exits
1 on a mismatch.
"""
import array
import sys

losses_a, losses_b, params_a, params_b, tolerance = sys.argv[1:6]
tolerance = float(tolerance)
state_tolerance = float(sys.argv[6]) if len(sys.argv) > 6 else tolerance


def read_losses(path):
    rows = [line.split() for line in open(path) if line.strip()]
    return [(int(s), float(l), int(t)) for s, l, t in rows]


def read_params(path):
    values = array.array("f")
    values.frombytes(open(path, "rb").read())
    return values


a, b = read_losses(losses_a), read_losses(losses_b)
if [(s, t) for s, _, t in a] != [(s, t) for s, _, t in b] or not a:
    sys.exit("error: the runs differ in steps or token counts")
worst_loss = max(abs(x - y) / max(abs(y), 1e-30) for (_, x, _), (_, y, _) in zip(a, b))

pa, pb = read_params(params_a), read_params(params_b)
if len(pa) != len(pb) or not pa:
    sys.exit("error: the parameter dumps differ in size (%d vs %d floats)" % (len(pa), len(pb)))
worst_param = max(min(abs(x - y), abs(x - y) / max(abs(y), 1e-30)) for x, y in zip(pa, pb))
changed = sum(1 for x, y in zip(pa, pb) if x != 0.0)

print("%d steps, %d state floats: worst loss error %.3g, worst state error %.3g"
      % (len(a), len(pa), worst_loss, worst_param))
if worst_loss > tolerance or worst_param > state_tolerance or changed == 0:
    sys.exit("error: the runs differ by more than %g (losses) or %g (state)"
             % (tolerance, state_tolerance))
