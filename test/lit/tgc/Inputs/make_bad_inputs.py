"""Writes the inputs of bad-inputs-compiler.test into DIR.

usage: make_bad_inputs.py DIR [GRAPH.tgpb GRAPH.pbtxt]

Deeply nested .mlir files, a sparse file over the 256 MiB input limit, bad
configs and, given a graph file of each format, damaged copies of them: cut
at a top-level field boundary (it still parses as a protobuf), with a flipped
byte, without its last line, with an unknown attribute or one given twice, with a deeply nested
attribute.
"""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, text, mode="w"):
    with open(os.path.join(out, name), mode) as f:
        f.write(text)


# 10,000 levels: each overflowed the parser's stack (SIGSEGV).
write("deep-attr.mlir", "module attributes {tg.x = " + "[" * 10000 +
      "]" * 10000 + "} {}\n")
write("deep-module.mlir", "module {\n" * 10000 + "}\n" * 10000)
# A `>` that closes no `<` (an integer set's `>=`) must not hide a level.
write("deep-set.mlir", "module attributes {tg.x = " +
      "[affine_set<(d0) : (d0 >= 0)>, " * 10000 + "]" * 10000 + "} {}\n")
# 500 levels parse (brackets in strings and comments do not count).
write("deep-ok.mlir", "// " + "[" * 1000 + "\nmodule attributes {tg.x = " +
      "[" * 500 + "\"" + "{" * 1000 + "\"" + "]" * 500 + "} {}\n")
with open(os.path.join(out, "huge.mlir"), "w") as f:
    f.truncate(300 << 20)  # sparse: no disk space used

configs = {
    "vocab": "vocab_size: 4611686018427387904",
    "source": "source_length: 100000",
    "target": "target_length: 5000",
    "layers": "encoder_layers: 65",
    "dlayers": "decoder_layers: 1000",
    "dmodel": "d_model: 32768\nnum_heads: 8",
    "dff": "d_ff: 1000000",
    "lr-inf": "lr_factor: inf",
    "eps": "adam_epsilon: 1e-60",
    "pad": "pad_id: 3",
    "logits": "vocab_size: 16000000\nbatch_size: 65536",
}
for name, text in configs.items():
    write("config-" + name + ".pbtxt", text + "\n")

if len(sys.argv) > 3:
    binary = open(sys.argv[2], "rb").read()
    text = open(sys.argv[3]).read()

    def fields(data):
        """Top-level (field number, start, end) of a protobuf message."""
        def varint(i):
            value = shift = 0
            while True:
                byte = data[i]
                i += 1
                value |= (byte & 0x7F) << shift
                shift += 7
                if byte < 0x80:
                    return value, i
        i, result = 0, []
        while i < len(data):
            start = i
            tag, i = varint(i)
            wire = tag & 7
            if wire == 0:
                _, i = varint(i)
            elif wire == 1:
                i += 8
            elif wire == 2:
                length, i = varint(i)
                i += length
            elif wire == 5:
                i += 4
            result.append((tag >> 3, start, i))
        return result

    ends = {number: end for number, _, end in fields(binary)}
    # Cut right after the function (field 5): the optimizer, the schedule,
    # the end marker and the checksum are gone, and the rest parses.
    write("cut-after-function.tgpb", binary[:ends[5]], "wb")
    write("cut-checksum.tgpb", binary[:-5], "wb")
    flipped = bytearray(binary)
    flipped[len(binary) // 2] ^= 0x01
    write("flipped.tgpb", bytes(flipped), "wb")
    # One letter of a location's file name: still a valid protobuf.
    write("renamed.tgpb", binary.replace(b"Transformer.cpp", b"Transformez.cpp", 1),
          "wb")

    lines = text.rstrip("\n").split("\n")
    assert lines[-1] == "complete: true", lines[-1]
    write("no-end.pbtxt", "\n".join(lines[:-1]) + "\n")
    # Everything up to the schedule (a cut at a line boundary that parses).
    write("cut-schedule.pbtxt", text[:text.index("schedule {")])
    first = text.index("attributes {")
    write("unknown-attr.pbtxt", text[:first] +
          'attributes {\n      name: "bogus"\n      i64: 3\n    }\n    ' +
          text[first:])
    # The first op's attribute given twice (one value won without a word).
    block_end = text.index("\n    }\n", first) + len("\n    }\n")
    write("twice-attr.pbtxt", text[:first] + text[first:block_end] + "    " +
          text[first:])
    # The first variable's type with nine dimensions (a tg tensor has at
    # most 8): refused before its type is made.
    first_shape = text.index("    shape: ")
    write("rank-nine.pbtxt", text[:first_shape] + "    shape: 1\n" * 7 +
          text[first_shape:])
    first_op = text.index("  ops {\n")
    deep = "[" * 10000 + "]" * 10000
    write("deep-attr.pbtxt", text[:first_op + len("  ops {\n")] +
          '    attributes {\n      name: "tg.deep"\n      mlir: "' + deep +
          '"\n    }\n' + text[first_op + len("  ops {\n"):])
