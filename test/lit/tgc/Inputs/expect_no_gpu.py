"""Runs a GPU program on a machine without a usable GPU: prints "exit N" and
its stderr, for FileCheck. Where a GPU is present the program would train;
then this prints "exit 0" and the check that expects the message fails
visibly rather than silently passing.

usage: expect_no_gpu.py PROGRAM [ARGS...]
"""
import subprocess
import sys

result = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)
print(f"exit {result.returncode}")
sys.stdout.write(result.stderr)
