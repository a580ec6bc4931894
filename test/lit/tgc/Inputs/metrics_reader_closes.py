"""Runs a training program whose --metrics is a FIFO that its reader closes
after two records, so that a validation's record cannot be written.

usage: metrics_reader_closes.py DIR PROGRAM ARGS...

Makes DIR/metrics.fifo, reads two lines from it on a thread and closes it,
runs PROGRAM ARGS... --metrics DIR/metrics.fifo, and prints its exit status
and its standard error, for FileCheck.
"""
import os
import subprocess
import sys
import threading

directory, program, args = sys.argv[1], sys.argv[2], sys.argv[3:]
fifo = os.path.join(directory, "metrics.fifo")
if os.path.exists(fifo):
    os.remove(fifo)
os.mkfifo(fifo)
opened = threading.Event()


def read_two():
    with open(fifo) as records:
        opened.set()
        records.readline()
        records.readline()


reader = threading.Thread(target=read_two)
reader.start()
# The program opens the FIFO for writing; its reader must be there first
# (a FIFO that no process reads is refused).
process = subprocess.Popen([program] + args + ["--metrics", fifo],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
_, stderr = process.communicate(timeout=600)
reader.join(timeout=60)
print("exit %d" % process.returncode)
sys.stdout.write(stderr)
