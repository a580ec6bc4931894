#!/usr/bin/env python3
"""Parallel text from gettext message catalogues: English msgid, translated msgstr.

Usage: po_pairs.py [--max-words N] -o DIR FILE.mo|FILE.po ...

Debian installs every package's translations as compiled catalogues
(/usr/share/locale/<lang>/LC_MESSAGES/*.mo); `msgunfmt` (gettext) turns one
back into a .po file. This reads each given catalogue (.mo through msgunfmt),
keeps the translated messages (not the header, not fuzzy or empty ones; the
first plural form), joins a message's lines with spaces, drops pairs whose
sides are equal or longer than --max-words words, removes duplicate pairs and
splits them by a hash of the English side (so no source sentence is in two
splits): DIR/{train,valid,test}.{src,tgt}, one sentence a line, valid and
test about 2% each. Prints the counts. Errors name the file and line.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys


def fail(message):
    sys.exit("error: " + message)


def po_text(path):
    if path.endswith(".mo"):
        if not shutil.which("msgunfmt"):
            fail("msgunfmt not found (Debian package gettext) for " + path)
        run = subprocess.run(["msgunfmt", path], capture_output=True)
        if run.returncode != 0:
            fail(f"msgunfmt {path}: {run.stderr.decode(errors='replace').strip()}")
        data = run.stdout
    else:
        try:
            data = open(path, "rb").read()
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror}")
    # The header's Content-Type names the catalogue's charset (UTF-8 mostly).
    charset = "utf-8"
    marker = data.find(b"charset=")
    if marker >= 0:
        end = marker + len(b"charset=")
        while end < len(data) and (data[end:end + 1].isalnum() or data[end:end + 1] in b"-_"):
            end += 1
        charset = data[marker + len(b"charset="):end].decode("ascii") or "utf-8"
    try:
        return data.decode(charset)
    except (LookupError, UnicodeDecodeError) as e:
        fail(f"{path}: not {charset}: {e}")


def unquote(path, number, text):
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        fail(f"{path}:{number}: expected a quoted string, not {text[:60]!r}")
    body, out, i = text[1:-1], [], 0
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": ""}
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def entries(path, text):
    """(msgid, msgstr, fuzzy) of each entry; msgstr[0] for plurals."""
    fields, current, fuzzy = {}, None, False
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            if fields:
                yield fields.get("msgid", ""), fields.get("msgstr", ""), fuzzy
            fields, current, fuzzy = {}, None, False
            continue
        if line.startswith("#"):
            fuzzy |= line.startswith("#,") and "fuzzy" in line
            continue
        if line.startswith('"'):
            if current is None:
                fail(f"{path}:{number}: a continuation line outside an entry")
            fields[current] += unquote(path, number, line)
            continue
        keyword, _, rest = line.partition(" ")
        if keyword == "msgstr[0]":
            keyword = "msgstr"
        elif keyword.startswith("msgstr[") or keyword == "msgid_plural":
            current = "ignored"
            fields[current] = ""
            continue
        if keyword not in ("msgid", "msgstr", "msgctxt"):
            fail(f"{path}:{number}: unknown keyword {keyword[:40]!r}")
        current = keyword
        fields[current] = unquote(path, number, rest)
    if fields:
        yield fields.get("msgid", ""), fields.get("msgstr", ""), fuzzy


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", dest="out", required=True, help="output directory")
    parser.add_argument("--max-words", type=int, default=40)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    pairs, seen = [], set()
    for path in args.files:
        for source, target, fuzzy in entries(path, po_text(path)):
            source, target = " ".join(source.split()), " ".join(target.split())
            if fuzzy or not source or not target or source == target:
                continue
            if max(len(source.split()), len(target.split())) > args.max_words:
                continue
            if (source, target) not in seen:
                seen.add((source, target))
                pairs.append((source, target))
    if not pairs:
        fail("no translated message in " + " ".join(args.files))
    os.makedirs(args.out, exist_ok=True)
    splits = {"train": [], "valid": [], "test": []}
    for source, target in pairs:
        bucket = hashlib.sha1(source.encode()).digest()[0] % 50
        splits["valid" if bucket == 0 else "test" if bucket == 1 else "train"].append(
            (source, target))
    for name, rows in splits.items():
        for side, index in (("src", 0), ("tgt", 1)):
            path = os.path.join(args.out, f"{name}.{side}")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(row[index] + "\n" for row in rows)
    print(" ".join(f"{name} {len(rows)}" for name, rows in splits.items()),
          f"pairs from {len(args.files)} catalogues")


if __name__ == "__main__":
    main()
