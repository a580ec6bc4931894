"""Ctrl-C ends a run resumed from a checkpoint whose count of batches drawn
is forged past any run's (the walk over the corpus's epochs to find its
place ran on without end, deaf to SIGINT).

usage: interrupt_forged_count.py BINARY WORKDIR SOURCE TARGET

Trains BINARY two steps on the token-id files SOURCE/TARGET, rewrites the
checkpoint's batches_drawn (field 17 of its metadata, checksum redone) to
10^15, resumes it, sends SIGINT once it has claimed its checkpoint (its lock
file; a signal then finds it walking) and expects exit 130 within
ten seconds, the message naming the walk, and the checkpoint as it was.
Prints one summary line; exits 1 with a reason otherwise.
"""
import os
import signal
import struct
import subprocess
import sys
import time
import zlib

binary, workdir, source, target = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
checkpoint = os.path.join(workdir, "forged.ckpt")
data = ["--train-source", source, "--train-target", target,
        "--eval-sentences", "0", "--log-every", "1000"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def varint(value):
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def read_varint(buffer, i):
    value = shift = 0
    while True:
        byte = buffer[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def with_batches_drawn(metadata, count):
    """The metadata's fields with field 17 (a varint) set to `count`."""
    out, i, done = bytearray(), 0, False
    while i < len(metadata):
        start = i
        key, i = read_varint(metadata, i)
        kind = key & 7
        if kind == 0:
            _, i = read_varint(metadata, i)
        elif kind == 1:
            i += 8
        elif kind == 2:
            length, i = read_varint(metadata, i)
            i += length
        elif kind == 5:
            i += 4
        else:
            fail("unexpected wire type %d in the metadata" % kind)
        if key >> 3 == 17:
            out += varint(17 << 3) + varint(count)
            done = True
        else:
            out += metadata[start:i]
    if not done:
        out += varint(17 << 3) + varint(count)
    return bytes(out)


trained = subprocess.run([binary, *data, "--steps", "2", "--checkpoint",
                          checkpoint], capture_output=True, text=True)
if trained.returncode != 0:
    fail("training failed: " + trained.stderr)
with open(checkpoint, "rb") as f:
    whole = f.read()
size = struct.unpack("<I", whole[12:16])[0]
start = (24 + size + 63) // 64 * 64
metadata = with_batches_drawn(whole[24:24 + size], 10**15)
header = whole[:8] + struct.pack("<III", struct.unpack("<I", whole[8:12])[0],
                                 len(metadata), zlib.crc32(metadata)) + whole[20:24]
forged = header + metadata
forged += b"\0" * ((len(forged) + 63) // 64 * 64 - len(forged)) + whole[start:]
with open(checkpoint, "wb") as f:
    f.write(forged)

run = subprocess.Popen([binary, *data, "--steps", "3", "--resume", checkpoint],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
# The run claims its checkpoint (the lock file) after it takes Ctrl-C as a
# request and before it resumes: the signal then finds it walking, however
# slowly it starts (under the sanitizers).
deadline = time.time() + 120
while not os.path.exists(checkpoint + ".lock") and run.poll() is None:
    if time.time() > deadline:
        run.kill()
        fail("the resumed run did not claim its checkpoint in 120 s")
    time.sleep(0.05)
time.sleep(0.5)
if run.poll() is not None:
    fail("the resumed run ended before the signal: " + run.stderr.read())
run.send_signal(signal.SIGINT)
try:
    out, err = run.communicate(timeout=10)
except subprocess.TimeoutExpired:
    run.kill()
    fail("the resumed run went on 10 s after SIGINT")
expected = "interrupted by SIGINT while finding the checkpoint's place in the corpus"
if run.returncode != 130 or expected not in err:
    fail("exit %d, stderr: %s" % (run.returncode, err))
with open(checkpoint, "rb") as f:
    if f.read() != forged:
        fail("the checkpoint changed")
print("forged count: interrupted with exit 130, checkpoint unchanged")
