#!/usr/bin/env bash
# Runs every harness that test/fuzz/build.sh built for SECONDS each (default
# 600), JOBS at a time (default: the number of cores), each on a working
# corpus in WORK (default /tmp/tgc-fuzz) that starts from its seeds and
# keeps what it finds between runs. Prints one line per harness: the
# executions, the coverage reached, and the crash files left (none: clean).
# Usage: test/fuzz/run.sh [SECONDS] [BUILD] [WORK]
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
build=${2:-build-fuzz}
work=${3:-/tmp/tgc-fuzz}
jobs=${JOBS:-$(nproc)}
declare -A seeds=([FuzzMlirFile]=mlir [FuzzGraphFile]=graph
  [FuzzConfigFile]=config [FuzzTokenCorpus]=tok [FuzzTokenFiles]=ids
  [FuzzCheckpoint]=ckpt [FuzzPassPipeline]=pipeline [FuzzGeneratedSource]=names)
run_one() {
  local name=$1 dir=$work/$1
  mkdir -p "$dir/corpus" "$dir/crashes"
  "$build/fuzz/$name" -max_total_time="$seconds" -rss_limit_mb=4096 \
    -timeout=30 -print_final_stats=1 -artifact_prefix="$dir/crashes/" \
    "$dir/corpus" "test/fuzz/corpus/${seeds[$name]}" > "$dir/log" 2>&1
  local runs cov crashes
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1)
  crashes=$(ls "$dir/crashes" | wc -l)
  echo "$name: ${runs:-?} executions in $seconds s, $cov, crash files: $crashes ($dir)"
}
for name in "${!seeds[@]}"; do
  [ -x "$build/fuzz/$name" ] || { echo "$name: not built (test/fuzz/build.sh)"; continue; }
  run_one "$name" &
  while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait
