#!/usr/bin/env bash
# Installs tgc into a temporary prefix, builds a driver for an example model
# file against the installed package (find_package(tgc), tgc_add_model),
# compiles the model with it and trains a few steps; then the installed
# tgc compiles the same file with --model-file. Nothing of the source or
# build tree may be used past the install.
# Usage: install_and_build.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work/install.log"

compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$source/test/package" -B "$work/project" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$compiler" \
  -DCMAKE_PREFIX_PATH="$prefix" \
  -DMODEL_FILE="$source/models/examples/PreLnTransformer.cpp" > "$work/configure.log"
cmake --build "$work/project" -j1 > "$work/build.log"

cd "$work"
# expect FILE PATTERN: fail, showing FILE, unless a line of FILE matches.
expect() {
  grep -q -e "$2" "$1" || { echo "expected '$2' in $1:"; cat "$1"; exit 1; }
}
project/my_tgc --list-models > models.txt
expect models.txt '^pre_ln_transformer: '
# The programs are built against the prefix, not the build tree.
project/my_tgc --model pre_ln_transformer --preset tiny -o train_driver -v \
  2> driver.log
expect driver.log "-I$prefix/include/tgc .* $prefix/lib/tgc/libTgcProgramMain.a"
./train_driver --task reverse --steps 20 --log-every 10 --eval-sentences 0 \
  > train_driver.log
expect train_driver.log '^trained 20 steps'

# The docs and the examples are installed; the installed example compiles.
test -f "$prefix/share/doc/tgc/writing-models.md"
test -f "$prefix/share/doc/tgc/README.md"
"$prefix/bin/tgc" --model-file "$prefix/share/doc/tgc/examples/PreLnTransformer.cpp" \
  -o train_file -v 2> file.log
expect file.log "-shared -I$prefix/include/tgc "
expect file.log "$prefix/lib/tgc/libTgcProgramMain.a"
./train_file --task reverse --steps 20 --log-every 10 --eval-sentences 0 \
  > train_file.log
expect train_file.log '^trained 20 steps'
echo "installed package: driver and --model-file built and trained"
