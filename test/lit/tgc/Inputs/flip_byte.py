"""Flips one bit of a file in place: flip_byte.py FILE OFFSET (negative:
from the end)."""
import sys

path, offset = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    data = bytearray(f.read())
    data[offset] ^= 0x10
    f.seek(0)
    f.write(data)
