#!/usr/bin/env bash
# Sets up a Debian 12 machine for tgc and configures the build in ./build.
#  - installs only the Debian packages that are missing (a second run is fast);
#  - configures CMake with Ninja, MLIR/LLVM 19 and the lld linker.
# Usage: ./bootstrap.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")"
build_dir=${1:-build}

packages=(
  cmake ninja-build g++ python3            # build
  llvm-19-dev libmlir-19-dev mlir-19-tools  # MLIR/LLVM 19: the dialect, passes, tgc-opt
  llvm-19-tools                             # lit.py and FileCheck for test/lit
  lld                                       # ld.lld: links about 5x faster than GNU ld
  libgtest-dev                              # unit tests
  libprotobuf-dev protobuf-compiler         # model configs (text format), graph files, checkpoints
  libopenblas-dev libopenblas-openmp-dev    # OpenBLAS (OpenMP build): the CPU GEMMs of generated steps
  libdnnl-dev                               # oneDNN: the bf16 GEMMs of --precision=bf16
  zlib1g-dev                                # zlib: CRC-32 checksums of checkpoints
  libsentencepiece-dev pkgconf              # SentencePiece (found with pkg-config): BPE vocabularies of real corpora (tgc-data)
  libopenmpi-dev openmpi-bin                # Open MPI: data-parallel training (mpirun -np N ./train)
  python3-torch                             # PyTorch: the cross-checks of test/lit/pytorch, and bench/'s peer
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A unity build (8 files a unit, CMake's default): each unit parses MLIR's
# headers once for its files, about a third less CPU time for a whole
# build. A developer who rebuilds one file at a time may prefer
# -DCMAKE_UNITY_BUILD=OFF.
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_UNITY_BUILD=ON
fi
