#!/usr/bin/env bash
# Builds the libFuzzer harnesses (test/fuzz/CMakeLists.txt) with clang in
# their own build directory (default build-fuzz): tgc's libraries compiled
# with libFuzzer's coverage, AddressSanitizer and UndefinedBehaviorSanitizer
# (-DTGC_FUZZ=ON); MLIR, Protobuf and zlib are Debian's, uninstrumented.
# Needs clang 19, its libFuzzer and OpenMP (packages clang-19
# libclang-rt-19-dev libomp-19-dev;
# clang 14 lacks std::source_location with GCC 12's library).
# Usage: test/fuzz/build.sh [BUILD]   then e.g.
#   BUILD/fuzz/FuzzMlirFile -max_total_time=600 -rss_limit_mb=4096 \
#       /tmp/mlir-corpus test/fuzz/corpus/mlir
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  if ! command -v clang++-19 > /dev/null; then
    echo "test/fuzz/build.sh: clang++-19 not found (apt-get install clang-19 libclang-rt-19-dev libomp-19-dev)" >&2
    exit 1
  fi
  CC=clang-19 CXX=clang++-19 cmake -S . -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_USE_LINKER=lld \
    -DTGC_FUZZ=ON -DTGC_ENABLE_CUDA=OFF -DTGC_ENABLE_MPI=OFF
fi
cmake --build "$build" -j2 --target fuzzers
echo "built the harnesses in $build/fuzz: $(ls "$build/fuzz" | tr '\n' ' ')"
