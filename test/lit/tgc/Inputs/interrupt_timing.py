"""Sends a signal to a long-running command and times how fast it ends.

usage: interrupt_timing.py [--after REGEX] [--after-file PATH] [--delay S]
                           [--signal INT|TERM] [--group] -- COMMAND...

Starts COMMAND, waits until a line of its output (stdout or stderr) matches
REGEX and PATH exists (if given), then --delay seconds more (default 0.5), checks it is
still running and sends it the signal (to its pid only; with --group, to
the process group it leads, as timeout and a shell's job control do). It
must end within 3 seconds (times TGC_TIME_SCALE: test/sanitizers.sh sets it, as
instrumented programs run several times slower). Prints "ended within 3 s,
exit CODE" (the nominal limit), then the
command's stderr, for FileCheck; exits 1 with a reason otherwise.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--after")
parser.add_argument("--after-file")
parser.add_argument("--delay", type=float, default=0.5)
parser.add_argument("--signal", default="INT", choices=["INT", "TERM"])
parser.add_argument("--group", action="store_true")
parser.add_argument("command", nargs=argparse.REMAINDER)
args = parser.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
signum = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[args.signal]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


process = subprocess.Popen(command, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           start_new_session=args.group)
seen = threading.Event()
stderr_lines = []


def pump(stream, keep):
    for line in stream:
        if keep is not None:
            keep.append(line)
        if args.after and re.search(args.after, line):
            seen.set()


threads = [threading.Thread(target=pump, args=(process.stdout, None)),
           threading.Thread(target=pump, args=(process.stderr, stderr_lines))]
for t in threads:
    t.start()
if args.after and not seen.wait(timeout=300):
    process.kill()
    fail("no output line matched " + args.after)
deadline = time.time() + 300
while args.after_file and not os.path.exists(args.after_file):
    if process.poll() is not None or time.time() > deadline:
        process.kill()
        fail(args.after_file + " did not appear")
    time.sleep(0.02)
time.sleep(args.delay)
if process.poll() is not None:
    fail(f"the command ended (exit {process.returncode}) before the signal: "
         "give it more work")
start = time.time()
if args.group:
    os.killpg(process.pid, signum)
else:
    process.send_signal(signum)
limit = 3 * float(os.environ.get("TGC_TIME_SCALE", "1"))
try:
    process.wait(timeout=limit)
except subprocess.TimeoutExpired:
    process.kill()
    process.wait()
    for t in threads:
        t.join()
    fail(f"still running {limit:g} seconds after SIG" + args.signal + ": " +
         "".join(stderr_lines))
for t in threads:
    t.join()
print(f"ended within 3 s, exit {process.returncode}")
sys.stdout.write("".join(stderr_lines))
