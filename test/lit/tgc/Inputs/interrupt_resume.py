"""Interrupts a training binary with a signal and checks that resuming its
checkpoint continues bit-identically.

usage: interrupt_resume.py BINARY WORKDIR SIGNAL

Starts BINARY for many steps, sends SIGNAL (INT or TERM) once a few steps
have run, and expects exit code 128 + the signal's number, a message naming
the step K it stopped after, and a checkpoint. Then resumes it to K + 3 and
compares with one uninterrupted run of K + 3 steps: the parameters and Adam
moments (--dump-params) must be byte-identical and the losses of steps
K+1..K+3 equal. Prints one summary line; exits 1 with a reason otherwise.
"""
import os
import re
import signal
import subprocess
import sys
import time

binary, workdir, name = sys.argv[1], sys.argv[2], sys.argv[3]
signum = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[name]
os.makedirs(workdir, exist_ok=True)
path = lambda f: os.path.join(workdir, f)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(*args):
    result = subprocess.run([binary, "--eval-sentences", "0", *args],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{args} exited {result.returncode}: {result.stderr}")
    return result


common = ["--task", "copy", "--seed", "3"]
loss_log = path("interrupted.loss")
process = subprocess.Popen(
    [binary, *common, "--steps", "1000000", "--log-every", "1000000",
     "--checkpoint", path("interrupted.ckpt"), "--loss-log", loss_log],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 120
while time.time() < deadline:  # wait for a few logged steps
    time.sleep(0.05)
    if os.path.exists(loss_log) and os.path.getsize(loss_log) > 0:
        with open(loss_log) as f:
            if len(f.readlines()) >= 3:
                break
process.send_signal(signum)
stdout, stderr = process.communicate(timeout=120)
if process.returncode != 128 + signum:
    fail(f"exit code {process.returncode}, expected {128 + signum}: {stderr}")
match = re.search(rf"interrupted by SIG{name} after step (\d+); continue with "
                  rf"--resume (\S+)", stderr)
if not match or match.group(2) != path("interrupted.ckpt"):
    fail("no interruption message naming the step and checkpoint: " + stderr)
stopped = int(match.group(1))
if f"saved checkpoint {path('interrupted.ckpt')} at step {stopped}" not in stdout:
    fail("the checkpoint was not saved at the step it stopped after: " + stdout)

end = stopped + 3
run("--resume", path("interrupted.ckpt"), "--steps", str(end),
    "--loss-log", path("resumed.loss"), "--dump-params", path("resumed.bin"),
    "--checkpoint", path("resumed.ckpt"))
run(*common, "--steps", str(end), "--loss-log", path("straight.loss"),
    "--dump-params", path("straight.bin"), "--checkpoint", path("straight.ckpt"))
with open(path("resumed.bin"), "rb") as a, open(path("straight.bin"), "rb") as b:
    if a.read() != b.read():
        fail("parameters after resuming differ from the uninterrupted run")
with open(path("resumed.loss")) as a, open(path("straight.loss")) as b:
    resumed, straight = a.read().splitlines(), b.read().splitlines()[stopped:]
if resumed != straight:
    fail(f"losses differ: resumed {resumed}, uninterrupted {straight}")
print(f"SIG{name} after step N, resumed to N+3: parameters and losses identical")
