#!/usr/bin/env python3
"""English text for language models: the docstrings of Python's standard library.

Usage: docstrings.py [--min-words N] -o DIR [SOURCE_DIR ...]

Debian's python3 (libpython3.X-stdlib) installs the standard library's
sources under /usr/lib/python3.X: tens of thousands of docstrings, English
prose written by people, on every Debian machine. This parses each .py file
under the given directories (default: the running interpreter's standard
library; test suites, site-packages and dist-packages left out) with `ast`,
takes the docstring of every module, class and function, joins each
paragraph's lines with single spaces (a docstring's blank lines still
separate its paragraphs), keeps docstrings of at least --min-words words,
drops duplicates and splits them by a hash of their text (so a docstring
copied into two files lands in one split): DIR/{train,valid,test}.txt, one
document after another with a blank line between, valid and test about 2%
each. `tgc-data encode --text` reads them as documents when each paragraph is
a line and documents are separated by blank lines: paragraphs are joined
here with " " so that a document has no blank line inside. Prints the counts.
A file that does not parse is skipped with a warning naming it (the
standard library holds a few on purpose, e.g. lib2to3's test data).
"""
import argparse
import ast
import hashlib
import os
import sys
import sysconfig
import warnings


def fail(message):
    sys.exit("error: " + message)


def python_files(roots):
    for root in roots:
        if not os.path.isdir(root):
            fail(f"{root}: not a directory")
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs
                                if d not in ("test", "tests", "idle_test", "site-packages",
                                             "dist-packages", "__pycache__"))
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.join(directory, name)


def docstrings(path):
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in old files
            tree = ast.parse(source, filename=path)
    except (SyntaxError, UnicodeDecodeError, ValueError) as e:
        print(f"warning: {path}: skipped, it does not parse ({type(e).__name__})",
              file=sys.stderr)
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text:
                yield text


def one_document(text):
    """A docstring's paragraphs, each on one line, joined by spaces."""
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    return " ".join(p for p in paragraphs if p)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", dest="out", required=True)
    parser.add_argument("--min-words", type=int, default=12)
    parser.add_argument("roots", nargs="*", default=[sysconfig.get_paths()["stdlib"]])
    args = parser.parse_args()
    if args.min_words < 1:
        fail("--min-words must be at least 1")
    seen, splits, files = set(), {"train": [], "valid": [], "test": []}, 0
    for path in python_files(args.roots):
        files += 1
        for text in docstrings(path):
            document = one_document(text)
            if len(document.split()) < args.min_words or document in seen:
                continue
            seen.add(document)
            bucket = int(hashlib.sha256(document.encode()).hexdigest()[:8], 16) % 100
            split = "valid" if bucket < 2 else "test" if bucket < 4 else "train"
            splits[split].append(document)
    if not splits["train"]:
        fail(f"no docstring of {args.min_words} words or more in {files} files under "
             + ", ".join(args.roots))
    os.makedirs(args.out, exist_ok=True)
    for split, documents in splits.items():
        path = os.path.join(args.out, split + ".txt")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n\n".join(documents) + ("\n" if documents else ""))
        os.replace(path + ".tmp", path)
    words = sum(len(d.split()) for d in splits["train"])
    print(f"train {len(splits['train'])} valid {len(splits['valid'])} test "
          f"{len(splits['test'])} documents ({words} training words) from {files} files")


if __name__ == "__main__":
    main()
