"""Checks one AdamW step against plain Adam, parameter by parameter.

Usage: check_weight_decay.py STEP_CPP ADAM_PARAMS ADAMW_PARAMS LONGER_PARAMS LR WD

STEP_CPP is the program's --emit=cpp (its kVariables table gives each
variable's offset and size); ADAM_PARAMS and ADAMW_PARAMS are --dump-params
after step 1 at --weight-decay 0 and WD; LONGER_PARAMS after more steps.
After step 1, p_adamw - p_adam = -LR * WD * p0, where p0 (the initial value)
is p_adam + LR * g / (|g| + eps), within LR of p_adam; a parameter that does
not decay is the same bit for bit; a frozen one (not trainable, no moments)
is the same in every run, while every trained one moves.
"""
import array
import re
import sys

step_cpp, adam_path, adamw_path, longer_path, lr, wd = sys.argv[1:7]
lr, wd = float(lr), float(wd)


def floats(path):
    values = array.array("f")
    values.frombytes(open(path, "rb").read())
    return values


adam, adamw, longer = floats(adam_path), floats(adamw_path), floats(longer_path)
table = re.findall(r'\{"([^"]+)", \d+, \{[0-9, ]*\}, (\d+), (\d+), \d+, [^,]+, (true|false)\}',
                   open(step_cpp).read())
names = {name for name, _, _, _ in table}
failed = False
for name, size, offset, trainable in table:
    if name.startswith(("adam.m.", "adam.v.")):
        continue
    lo, hi = int(offset), int(offset) + int(size)
    a, w, l = adam[lo:hi], adamw[lo:hi], longer[lo:hi]
    if trainable == "false":
        ok = a == w == l and "adam.m." + name not in names
        kind = "frozen"
    elif a == w:
        ok = l != a
        kind = "no decay"
    else:
        # The initial value the decay implies, within LR of the Adam step's.
        worst = max(abs(-(x - y) / (lr * wd) - y) for x, y in zip(w, a))
        ok = worst <= lr * 1.001 + 1e-4 and l != a
        kind = "decays"
    print(f"{name}: {kind}" + ("" if ok else " MISMATCH"))
    failed |= not ok
sys.exit(1 if failed else 0)
