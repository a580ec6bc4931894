"""Fails unless every op defined in the given .td files appears in a test.

Usage: check_op_coverage.py OPS.td [OPS.td...] -- TEST.mlir [TEST.mlir...]
"""
import re
import sys

args = sys.argv[1:]
split = args.index("--")
td_files, test_files = args[:split], args[split + 1:]

op_def = re.compile(r'^def \w+\s*:\s*TG_\w*Op<"(\w+)"', re.M)
ops = sorted({m for f in td_files for m in op_def.findall(open(f).read())})
tests = "\n".join(open(f).read() for f in test_files)
missing = [op for op in ops if not re.search(r"\btg\.%s\b" % op, tests)]

print(f"{len(ops)} ops defined, {len(ops) - len(missing)} covered")
for op in missing:
    print(f"error: tg.{op} appears in no round-trip test")
sys.exit(1 if missing or not ops else 0)
