"""Writes a copy of a tgc vocabulary whose normalizer is another one.

usage: forge_normalizer.py IN.model OUT.model charsmap|rule

The model's normalizer_spec (ModelProto field 3: the identity rule) is
replaced by one with a precompiled character map whose one trie unit points
far outside it (charsmap), or by the rule 'nmt_nfkc' without a map (rule).
SentencePiece reads such a map unchecked.
"""
import struct
import sys


def varint(n):
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out += bytes([low | 0x80])
        else:
            return out + bytes([low])


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


source, target, kind = sys.argv[1:4]
model = open(source, "rb").read()
# The spec is "\x1a" LEN "\x0a\x08identity" ...: it and what follows go.
cut = model.rindex(field(1, b"identity")) - 2
assert model[cut] == 0x1A, "no one-byte-long normalizer_spec"
trie = struct.pack("<I", 0xFFFFFC00)
charsmap = struct.pack("<I", len(trie)) + trie + b"x\x00"
spec = (field(1, b"custom") + field(2, charsmap) if kind == "charsmap"
        else field(1, b"nmt_nfkc"))
open(target, "wb").write(model[:cut] + field(3, spec))
