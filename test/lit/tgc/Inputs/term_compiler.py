"""SIGTERM to tgc alone (`kill PID`, not a terminal's Ctrl-C to the process
group) while its host compiler runs stops that compiler too.

usage: term_compiler.py TGC WORKDIR [TGC ARGS...]

Runs TGC ARGS -o WORKDIR/program --cxx FAKE, where FAKE records its pid and
sleeps for a minute, in a process group of its own; once FAKE runs, sends
SIGTERM to tgc's pid only, and expects tgc to end within 5 seconds, killed
by SIGTERM, with FAKE gone and no WORKDIR/program. Prints one summary line;
exits 1 with a reason otherwise. Under the suite's build cache
($TGC_BUILD_CACHE) FAKE's first call is the cache's preprocessing run, which
must stop the same way; interrupt_build.py covers the compile itself.
"""
import os
import signal
import subprocess
import sys
import time

tgc, workdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(workdir, exist_ok=True)
pid_file = os.path.join(workdir, "compiler.pid")
fake = os.path.join(workdir, "fake-cxx.sh")
with open(fake, "w") as f:
    f.write(f"#!/bin/sh\necho $$ > {pid_file}.tmp\nmv {pid_file}.tmp {pid_file}\n"
            "exec sleep 60\n")
os.chmod(fake, 0o755)
program = os.path.join(workdir, "program")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


process = subprocess.Popen([tgc, *args, "-o", program, "--cxx", fake],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
deadline = time.time() + 120
while not os.path.exists(pid_file):
    if process.poll() is not None or time.time() > deadline:
        os.killpg(process.pid, signal.SIGKILL)
        fail(f"the compiler did not start (exit {process.returncode})")
    time.sleep(0.01)
compiler = int(open(pid_file).read())
process.send_signal(signal.SIGTERM)
try:
    process.communicate(timeout=5)
except subprocess.TimeoutExpired:
    os.killpg(process.pid, signal.SIGKILL)
    fail("tgc did not end within 5 seconds of SIGTERM")


def running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (its parent, tgc, is gone; init reaps it) has stopped.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


# The compiler got the signal before tgc ended; on a loaded machine it may
# take a moment more to be gone.
stop_by = time.time() + 3
while running(compiler) and time.time() < stop_by:
    time.sleep(0.05)
if running(compiler):
    os.killpg(process.pid, signal.SIGKILL)
    fail("the compiler still runs after tgc ended")
if process.returncode != -signal.SIGTERM:
    fail(f"tgc ended with {process.returncode}, not by SIGTERM")
if os.path.exists(program):
    fail("a program was left at " + program)
print("SIGTERM to tgc during tgc -o: the compiler stopped, no program")
