"""One run owns a checkpoint path; kill -9 during saves loses nothing.

usage: robust_checkpoint.py BINARY WORKDIR [KILLS]

1. Starts BINARY saving <WORKDIR>/owned.ckpt after every step, waits for
   its lock file, starts a second run on the same checkpoint and expects it
   to be refused (exit 1, "checkpoint ... is in use by another run (pid N)"
   naming the first run's pid) without touching the checkpoint, also
   through a symbolic link with --overwrite; then
   interrupts the first run (exit 130) and expects its lock file gone.
2. Kills (SIGKILL) a run that saves after every step, KILLS times (default
   3) at different moments, each time resuming the checkpoint it left: the file
   always loads, its step only grows, and the next run takes the path over
   (the dead run's lock file holds no lock) and removes the temporary files
   the dead run left.
Prints one summary line; exits 1 with a reason otherwise.
"""
import glob
import os
import re
import signal
import subprocess
import sys
import time

binary, workdir = sys.argv[1], sys.argv[2]
kills = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.makedirs(workdir, exist_ok=True)
path = lambda f: os.path.join(workdir, f)
common = ["--task", "copy", "--eval-sentences", "0", "--log-every", "1000000"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def wait_for(predicate, what, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    fail("timed out waiting for " + what)


# 1. The lock.
owned = path("owned.ckpt")
first = subprocess.Popen(
    [binary, *common, "--steps", "1000000", "--save-every", "1",
     "--checkpoint", owned],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
wait_for(lambda: os.path.exists(owned), "the first run's checkpoint")
with open(owned + ".lock") as f:
    if f.read().strip() != str(first.pid):
        fail("the lock file does not hold the first run's pid")
second = subprocess.run([binary, *common, "--steps", "2", "--checkpoint", owned],
                        capture_output=True, text=True)
expected = f"checkpoint {owned} is in use by another run (pid {first.pid})"
if second.returncode != 1 or expected not in second.stderr:
    fail(f"second run: exit {second.returncode}, stderr {second.stderr!r}")
if "saved checkpoint" in second.stdout:
    fail("the second run says it saved: " + second.stdout)
# The same file through a symbolic link, even with --overwrite: the lock is
# the file's, not the name's (the link's own name took no lock).
link = path("link.ckpt")
os.symlink(owned, link)
third = subprocess.run([binary, *common, "--steps", "2", "--checkpoint", link,
                        "--overwrite"], capture_output=True, text=True)
expected = f"checkpoint {link} is in use by another run (pid {first.pid})"
if third.returncode != 1 or expected not in third.stderr:
    fail(f"run through a link: exit {third.returncode}, stderr {third.stderr!r}")
os.unlink(link)
first.send_signal(signal.SIGINT)
_, stderr = first.communicate(timeout=60)
if first.returncode != 130:
    fail(f"first run: exit {first.returncode}: {stderr}")
if os.path.exists(owned + ".lock"):
    fail("the lock file is left after a normal exit")

# 2. kill -9 while saving.
killed = path("killed.ckpt")
last_step = 0
steps = []
for kill in range(kills):
    delay = (0.3, 0.7, 1.1)[kill % 3] + 0.13 * (kill // 3)
    run = subprocess.Popen(
        [binary, *common, "--steps", "1000000", "--save-every", "1",
         "--checkpoint", killed] + (["--resume", killed] if last_step else []),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(killed + ".lock"), "a lock file")
    time.sleep(delay)
    run.kill()
    run.wait()
    # What a killed save may leave, as another dead process would.
    stale = f"{killed}.tmp.{run.pid}.99"
    with open(stale, "w") as f:
        f.write("half a checkpoint")
    # Resume it: it must load, and the new run takes the path over.
    probe = subprocess.Popen(
        [binary, *common, "--resume", killed, "--steps", "1000000000",
         "--save-every", "1", "--checkpoint", killed],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: not os.path.exists(stale), "the stale temporary file's removal",
             seconds=30)
    probe.send_signal(signal.SIGINT)
    stdout, stderr = probe.communicate(timeout=60)
    match = re.search(r"resumed from \S+ at step (\d+)", stdout)
    if probe.returncode != 130 or not match:
        fail(f"resuming after kill -9: exit {probe.returncode}: {stderr}")
    step = int(match.group(1))
    if step < last_step:
        fail(f"the checkpoint went back from step {last_step} to {step}")
    last_step = max(step, 1)
    steps.append(step)
leftovers = glob.glob(killed + ".tmp.*") + glob.glob(killed + ".lock")
if leftovers:
    fail("left behind: " + " ".join(leftovers))
print(f"lock refused a second run; {kills} x kill -9 during saves: every "
      "checkpoint loaded, stale files taken over")
if kills != 3:
    print("steps of the checkpoints left by the kills: " +
          " ".join(map(str, steps)))
