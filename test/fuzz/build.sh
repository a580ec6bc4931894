#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the runtime's file readers with clang
# (-fsanitize=fuzzer,address,undefined) into BUILD/fuzz, from the sources
# they test; the Protobuf code of checkpoints comes from BUILD (run after
# building tgc). clang 14's libFuzzer is enough (package clang).
# Usage: test/fuzz/build.sh [BUILD]   then e.g.
#   BUILD/fuzz/FuzzTokenCorpus -max_total_time=600 test/fuzz/corpus/tok
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
out=$build/fuzz
mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I. -I"$build")
clang++ "${flags[@]}" test/fuzz/FuzzTokenCorpus.cpp runtime/data/TokenCorpus.cpp \
  runtime/data/AtomicFile.cpp -lz -o "$out/FuzzTokenCorpus"
clang++ "${flags[@]}" test/fuzz/FuzzTokenFiles.cpp runtime/data/TokenFiles.cpp \
  runtime/data/Tasks.cpp -o "$out/FuzzTokenFiles"
clang++ "${flags[@]}" test/fuzz/FuzzCheckpoint.cpp runtime/program/Checkpoint.cpp \
  "$build"/runtime/program/Checkpoint.pb.cc -lprotobuf -lz -o "$out/FuzzCheckpoint"
echo "built $out/FuzzTokenCorpus $out/FuzzTokenFiles $out/FuzzCheckpoint"
