"""Interrupts `tgc --emit=train --target=interp` with a signal and checks that
the shared training loop (runtime/program/train/TrainingLoop.h) stops cleanly.

usage: interrupt_interp.py WORKDIR SIGNAL TGC ARGS...

Starts TGC ARGS --steps 1000000 --loss-log WORKDIR/loss, sends SIGNAL (INT or
TERM) once two steps are logged, and expects exit code 128 + the signal's
number, the totals line and "interrupted by SIG<NAME> after step K" with K the
steps in the loss log. Prints one summary line; exits 1 with a reason
otherwise.
"""
import os
import re
import signal
import subprocess
import sys
import time

workdir, name, command = sys.argv[1], sys.argv[2], sys.argv[3:]
signum = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[name]
os.makedirs(workdir, exist_ok=True)
loss_log = os.path.join(workdir, "loss")
if os.path.exists(loss_log):
    os.remove(loss_log)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def logged_steps():
    if not os.path.exists(loss_log):
        return 0
    with open(loss_log) as f:
        return len(f.read().splitlines())


process = subprocess.Popen(
    [*command, "--steps", "1000000", "--log-every", "1000000", "--loss-log", loss_log],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 120
while time.time() < deadline and logged_steps() < 2:
    time.sleep(0.05)
process.send_signal(signum)
stdout, stderr = process.communicate(timeout=120)
if process.returncode != 128 + signum:
    fail(f"exit code {process.returncode}, expected {128 + signum}: {stderr}")
match = re.search(rf"interrupted by SIG{name} after step (\d+)\n", stderr)
if not match:
    fail("no interruption message naming the step: " + stderr)
if int(match.group(1)) != logged_steps():
    fail(f"stopped after step {match.group(1)} but logged {logged_steps()} steps")
if not re.search(rf"trained {match.group(1)} steps in ", stdout):
    fail("no totals line for the steps that ran: " + stdout)
print(f"SIG{name} after step N: exit {128 + signum}, N steps logged and totalled")
