#!/usr/bin/env bash
# The test suite's second stage: tgc built with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DTGC_SANITIZE=ON, CUDA off) in build-asan/,
# the training programs its tests generate instrumented too, and the whole
# suite run under it. A unity build (8 files a unit): each unit parses and
# instantiates MLIR's templates once for its files, which took the
# instrumented build from about 1330 to about 850 CPU seconds. Any report
# fails the test that triggered it.
# Usage: test/sanitizers.sh [build-dir]   (from anywhere; after ./bootstrap.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-asan}
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_USE_LINKER=lld \
    -DTGC_SANITIZE=ON -DTGC_ENABLE_CUDA=OFF \
    -DCMAKE_UNITY_BUILD=ON
fi
cmake --build "$build_dir" -j2
# ctest starts the longest tests first when it knows their times: a first run
# here borrows the first stage's (same test names), so that no long test is
# left to run alone at the end.
costs=Testing/Temporary/CTestCostData.txt
if [ ! -f "$build_dir/$costs" ] && [ -f "build/$costs" ]; then
  mkdir -p "$build_dir/Testing/Temporary"
  cp "build/$costs" "$build_dir/$costs"
fi
# halt_on_error: the first report ends the process with an error exit.
# Leak checking is off: MLIR's and Protobuf's process-lifetime registries are
# reported as leaks at exit.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Instrumented programs are slower: the tests that time how fast a signal
# takes effect wait this many times longer.
export TGC_TIME_SCALE=5
ctest --test-dir "$build_dir" -j2 --output-on-failure
