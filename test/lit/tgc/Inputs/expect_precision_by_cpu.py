"""Checks tgc --precision=auto's choice (the IR on stdin) against this CPU:
bf16 (tg.to_bf16 in the step) where /proc/cpuinfo lists avx512_bf16 or
amx_bf16, fp32 (none) elsewhere. Prints the choice; exits 1 on a mismatch."""
import sys

flags = set()
for line in open("/proc/cpuinfo"):
    if line.startswith("flags"):
        flags = set(line.split(":", 1)[1].split())
        break
expected = "bf16" if flags & {"avx512_bf16", "amx_bf16"} else "fp32"
chosen = "bf16" if "tg.to_bf16" in sys.stdin.read() else "fp32"
print(f"--precision=auto chose {chosen}")
if chosen != expected:
    sys.exit(f"error: expected {expected} on this CPU")
