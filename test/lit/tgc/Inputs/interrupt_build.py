"""Ctrl-C during `tgc -o` leaves no temporary file and no half program.

usage: interrupt_build.py TGC WORKDIR [--wait-for GLOB] [TGC ARGS...]

Runs TGC ARGS -o WORKDIR/program with TMPDIR=WORKDIR/tmp in a process group
of its own, waits for its generated source (tgc-step-*.cpp, or GLOB: the
shared object of --model-file, tgc-model-*.so) to appear there,
sends SIGINT to the group as a terminal's Ctrl-C does, and expects tgc to end
within 5 seconds with WORKDIR/tmp empty and no WORKDIR/program. Prints one
summary line; exits 1 with a reason otherwise.
"""
import glob
import os
import signal
import subprocess
import sys
import time

tgc, workdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pattern = "tgc-step-*.cpp"
if args[:1] == ["--wait-for"]:
    pattern, args = args[1], args[2:]
tmp = os.path.join(workdir, "tmp")
os.makedirs(tmp, exist_ok=True)
program = os.path.join(workdir, "program")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


# No build cache: a program found there would leave no compile to interrupt.
environment = {k: v for k, v in os.environ.items() if k != "TGC_BUILD_CACHE"}
environment["TMPDIR"] = tmp
process = subprocess.Popen([tgc, *args, "-o", program],
                           env=environment,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
deadline = time.time() + 120
while not glob.glob(os.path.join(tmp, pattern)):
    if process.poll() is not None or time.time() > deadline:
        fail(f"no {pattern} appeared (exit {process.returncode})")
    time.sleep(0.01)
time.sleep(0.2)  # the compiler is running
if process.poll() is not None:
    fail("tgc ended before the signal; give it a larger model")
start = time.time()
os.killpg(process.pid, signal.SIGINT)
# TGC_TIME_SCALE: slower instrumented builds (test/sanitizers.sh).
limit = 5 * float(os.environ.get("TGC_TIME_SCALE", "1"))
try:
    process.communicate(timeout=limit)
except subprocess.TimeoutExpired:
    os.killpg(process.pid, signal.SIGKILL)
    fail(f"tgc did not end within {limit:g} seconds of SIGINT")
if process.returncode == 0:
    fail("tgc exited 0 after SIGINT")
left = os.listdir(tmp)
if left:
    fail("left in TMPDIR: " + " ".join(sorted(left)))
if os.path.exists(program):
    fail("a program was left at " + program)
print(f"SIGINT during tgc -o: ended in under 5 s, no temporary files, no program")
