#!/usr/bin/env python3
"""Writes OUT: the checkpoint IN changed as no training program writes one,
with every checksum made right again (a forged or foreign file):
  nan       the first value of the first tensor is NaN
  twice     the second tensor is named as the first (listed twice, one
            missing)
  nameless  the first tensor has no name
  overlap   the second tensor's data starts inside the first's
  negative-step  the step count is -1000 (a run counted on from it)
The metadata goes through protoc's text format; the layout is
Checkpoint.cpp's: a 24-byte header (magic, version, metadata bytes,
metadata CRC-32), the metadata, the data section at the next multiple of
64 bytes.

  forge_checkpoint.py MODE IN OUT PROTO_DIR
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


def field(block, name):
    found = re.search(name + r": (\S+)", block)
    return found.group(1) if found else "0"  # proto3 omits zeros


def main(mode, src, dst, proto_dir):
    blob = open(src, "rb").read()
    size = struct.unpack_from("<I", blob, 12)[0]
    data = bytearray(blob[align(HEADER + size):])
    text = protoc("decode", blob[HEADER:HEADER + size], proto_dir).decode()
    tensors = list(re.finditer(r"tensors \{.*?\n\}", text, re.S))
    first, second = tensors[0].group(0), tensors[1].group(0)
    if mode == "nan":
        offset, count = int(field(first, "offset")), int(field(first, "bytes"))
        struct.pack_into("<f", data, offset, float("nan"))
        crc = zlib.crc32(bytes(data[offset:offset + count]))
        first = re.sub(r"crc32: \d+", f"crc32: {crc}", first, count=1)
    elif mode == "twice":
        second = re.sub(r'name: ".*?"', f'name: {field(first, "name")}', second, count=1)
    elif mode == "nameless":
        first = re.sub(r'  name: ".*?"\n', "", first, count=1)
    elif mode == "overlap":
        second = re.sub(r"offset: \d+", f'offset: {int(field(first, "offset")) + 4}',
                        second, count=1)
    elif mode != "negative-step":
        sys.exit(f"unknown mode {mode}")
    text = (text[:tensors[0].start()] + first + text[tensors[0].end():tensors[1].start()] +
            second + text[tensors[1].end():])
    if mode == "negative-step":
        text = re.sub(r"^step: \d+$", "step: -1000", text, count=1, flags=re.M)
    metadata = protoc("encode", text.encode(), proto_dir)
    header = bytearray(blob[:HEADER])
    struct.pack_into("<II", header, 12, len(metadata), zlib.crc32(metadata))
    body = bytes(header) + metadata
    open(dst, "wb").write(body + bytes(align(len(body)) - len(body)) + bytes(data))


if __name__ == "__main__":
    main(*sys.argv[1:5])
