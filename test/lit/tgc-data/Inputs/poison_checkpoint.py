#!/usr/bin/env python3
"""Writes OUT: the checkpoint IN with the first value of its first tensor
made NaN, every checksum made right again (a state no training program
saves, as a damaged or forged file could hold it). The metadata goes
through protoc's text format; the layout is Checkpoint.cpp's: a 24-byte
header (magic, version, metadata bytes, metadata CRC-32), the metadata,
the data section at the next multiple of 64 bytes.

  poison_checkpoint.py IN OUT PROTO_DIR
"""
import re
import struct
import subprocess
import sys
import zlib

HEADER, ALIGN = 24, 64
MESSAGE = "tgc.runtime.proto.Checkpoint"


def protoc(mode, data, proto_dir):
    return subprocess.run(["protoc", f"--{mode}={MESSAGE}", f"--proto_path={proto_dir}",
                           "Checkpoint.proto"], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def main(src, dst, proto_dir):
    blob = open(src, "rb").read()
    size = struct.unpack_from("<I", blob, 12)[0]
    start = align(HEADER + size)
    data = bytearray(blob[start:])
    text = protoc("decode", blob[HEADER:HEADER + size], proto_dir).decode()
    first = re.search(r"tensors \{(.*?)\n\}", text, re.S)
    found = re.search(r"offset: (\d+)", first.group(1))  # proto3 omits a 0
    offset = int(found.group(1)) if found else 0
    count = int(re.search(r"bytes: (\d+)", first.group(1)).group(1))
    struct.pack_into("<f", data, offset, float("nan"))
    crc = zlib.crc32(bytes(data[offset:offset + count]))
    block = re.sub(r"crc32: \d+", f"crc32: {crc}", first.group(0), count=1)
    metadata = protoc("encode", (text[:first.start()] + block +
                                 text[first.end():]).encode(), proto_dir)
    header = bytearray(blob[:HEADER])
    struct.pack_into("<II", header, 12, len(metadata), zlib.crc32(metadata))
    body = bytes(header) + metadata
    open(dst, "wb").write(body + bytes(align(len(body)) - len(body)) + bytes(data))


if __name__ == "__main__":
    main(*sys.argv[1:4])
