"""Fails unless every op defined in the given .td files appears in a test.

Usage: check_op_coverage.py OPS.td [OPS.td...] -- TEST.mlir [TEST.mlir...]

Follows `include "ir/..."` lines (ir/TgOps.td includes one file per op
family), resolved from the repository root.
"""
import os
import re
import sys

args = sys.argv[1:]
split = args.index("--")
td_files, test_files = args[:split], args[split + 1:]

op_def = re.compile(r'^def \w+\s*:\s*TG_\w*Op<"(\w+)"', re.M)
project_include = re.compile(r'^include "(ir/[\w/]+\.td)"', re.M)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def td_text(path, seen):
    """The file's text followed by that of the project files it includes."""
    if path in seen:
        return ""
    seen.add(path)
    text = open(path).read()
    return text + "".join(td_text(os.path.join(root, included), seen)
                          for included in project_include.findall(text))


seen = set()
ops = sorted({m for f in td_files for m in op_def.findall(td_text(f, seen))})
tests = "\n".join(open(f).read() for f in test_files)
missing = [op for op in ops if not re.search(r"\btg\.%s\b" % op, tests)]

print(f"{len(ops)} ops defined, {len(ops) - len(missing)} covered")
for op in missing:
    print(f"error: tg.{op} appears in no round-trip test")
sys.exit(1 if missing or not ops else 0)
