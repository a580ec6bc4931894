#!/usr/bin/env bash
# The GPU halves of run_gpu_checks.sh in a bundle that
# test/gpu/bundle_gpu_checks.sh wrote (its run.sh): on the GPU machine, from
# anywhere.
#
#   run.sh [--results DIR] [--only STEPS] [--deadline SECONDS]
#
# Every step runs under a time limit and says PASS or FAIL (a hung kernel
# fails its step, not the run). DIR (default ./gpu-checks-results) fills as
# the steps go: log.txt (everything printed), verdicts.txt (a line a step),
# the bench's JSON (rewritten after each measured side) and the files that
# bundle_gpu_checks.sh --finish reads; a run cut short keeps what it did.
# STEPS: a comma-separated subset of 1,1b,2,2b,2c,2d,2e,3,4,4b,5,7,6a,6,6p (e.g. the
# checks in one go, then --only 6 for the bench), run in that order.
# --deadline: the run's time, for a short GPU loan: no program runs past it
# (each one's limit is cut to what is left), and a step that would start
# after it says SKIPPED in the verdicts.
set -u
# The CUDA kernel tests fail, not skip, where no GPU is usable: here a
# skipped test would pass unrun.
export TGC_REQUIRE_GPU=1
results=$PWD/gpu-checks-results
only=""
deadline=""
while [ $# -gt 0 ]; do
  case $1 in
    --results) results=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    *) echo "run.sh: unknown argument '$1' (--results DIR, --only STEPS, --deadline SECONDS)" >&2; exit 2 ;;
  esac
done
if [ -n "$deadline" ] && ! [[ $deadline =~ ^[0-9]+$ ]]; then
  echo "run.sh: --deadline takes whole seconds, not '$deadline'" >&2; exit 2
fi
steps=" 1 1b 2 2b 2c 2d 2e 3 4 4b 5 7 6a 6 6p "
for step in ${only//,/ }; do
  if [[ "$steps" != *" $step "* ]]; then
    echo "run.sh: --only: no step '$step' (the steps:$steps)" >&2; exit 2
  fi
done
mkdir -p "$results" || exit 2
results=$(cd "$results" && pwd)
here=$(cd "$(dirname "$0")" && pwd)

# The steps, their output into log.txt as well (the pipe at the end).
checks() {
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cublas=$(find /usr/local /opt /usr/lib -name 'libcublasLt.so.*' 2>/dev/null | head -1)
# CUPTI, which --profile loads (steps 2e and 6p), may live apart from cuBLAS.
cupti=$(find /usr/local /opt /usr/lib -name 'libcupti.so.*' 2>/dev/null | head -1)
export LD_LIBRARY_PATH=$here/lib:${cublas:+$(dirname "$cublas"):}${cupti:+$(dirname "$cupti"):}${LD_LIBRARY_PATH:-}
export TGC_DATA=$here/tgc-data
bin=$here/bin
compare=$here/compare_runs.py
failed=0 skipped=0
say() { printf '\n== %s  [%s s]\n' "$*" $SECONDS; }
verdict() {
  local line
  if [ "$1" -eq 0 ]; then line="PASS $2"; else line="FAIL $2 (exit $1)"; failed=1; fi
  echo "$line"; echo "$line  [${SECONDS} s]" >> "$results/verdicts.txt"
}
# left: the seconds before --deadline (a day without one).
left() { if [ -n "$deadline" ]; then echo $((deadline - SECONDS)); else echo 86400; fi; }
# want STEP: whether --only names it (everything without --only), and there
# is time left to start it.
want() {
  [ -z "$only" ] || [[ ",$only," == *",$1,"* ]] || return 1
  if [ "$(left)" -le 0 ]; then
    echo "SKIPPED $1 (past --deadline $deadline s)" | tee -a "$results/verdicts.txt"
    skipped=$((skipped + 1))
    return 1
  fi
}
# limit SECONDS COMMAND...: the command, killed past its time (said in the
# log and the verdicts: a hang is the likeliest failure of a new kernel);
# Ctrl-C still reaches it.
limit() {
  local seconds=$1 remaining
  remaining=$(left)
  [ "$remaining" -lt "$seconds" ] && seconds=$((remaining > 1 ? remaining : 1))
  timeout --foreground --kill-after=10 "$seconds" "${@:2}"
  local code=$?
  if [ $code -eq 124 ]; then
    echo "TIMED OUT after $seconds s: ${2##*/} ${*:3:2} ..." | tee -a "$results/verdicts.txt"
  elif [ $code -eq 137 ]; then
    echo "KILLED (past $seconds s, or out of memory): ${2##*/} ${*:3:2} ..." | tee -a "$results/verdicts.txt"
  fi
  return $code
}
# keep FILE...: copies what the finish step reads into the results.
keep() { cp "$@" "$results/" 2>/dev/null || true; }
touch "$results/verdicts.txt"
earlier=$(wc -l < "$results/verdicts.txt")
echo "# run.sh${only:+ --only $only}, $(date -u +%FT%TZ)" >> "$results/verdicts.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

if want 1; then
  say "1. CUDA kernels vs CPU kernels"
  limit 300 "$bin/tgc-cuda-kernel-tests" --gtest_brief=1; verdict $? "1 kernels"
fi

if want 1b; then
  say "1b. the fused attention kernels under compute-sanitizer (memcheck, racecheck)"
  sanitizer=$(command -v compute-sanitizer || find /usr/local /opt -name compute-sanitizer -type f 2>/dev/null | head -1)
  if [ -n "$sanitizer" ]; then
    for tool in memcheck racecheck; do
      limit 150 "$sanitizer" --tool $tool --error-exitcode 1 "$bin/tgc-cuda-kernel-tests" \
        --gtest_filter='FusedAttention.*' --gtest_brief=1
      verdict $? "1b fused attention, $tool"
    done
  else
    echo "(compute-sanitizer not found: 1b skipped)"
  fi
fi

common=(--task reverse --steps 3 --seed 5 --eval-sentences 0)
# Step 2's run is step 4's checkpoint for the finish: it runs for either.
if want 2 || want 4; then
  say "2. tiny: GPU step vs CPU step, 3 steps with dropout"
  limit 120 "$bin/gpu" "${common[@]}" --loss-log "$work/gpu.loss" --dump-params "$work/gpu.params" \
    --checkpoint "$work/gpu3.ckpt"
  python3 "$compare" "$work/gpu.loss" "$here/cpu.loss" "$work/gpu.params" "$here/cpu.params" 1e-4
  verdict $? "2 f32 step"
  keep "$work/gpu3.ckpt"
fi

if want 2b; then
  say "2b. tiny in bf16: GPU step vs CPU step"
  limit 120 "$bin/gpu_bf16" "${common[@]}" --loss-log "$work/gpu_bf16.loss" --dump-params "$work/gpu_bf16.params" \
    --checkpoint "$work/gpu_bf16.ckpt"
  python3 "$compare" "$work/gpu_bf16.loss" "$here/cpu_bf16.loss" "$work/gpu_bf16.params" "$here/cpu_bf16.params" \
    2e-4 5e-3
  verdict $? "2b bf16 step"
fi

if want 2c; then
  say "2c. --cuda-graphs: replayed step vs op by op, 6 steps, one and two batches an update"
  for freq in 1 2; do
    graphs=(--task reverse --steps 6 --seed 5 --eval-sentences 0 --update-freq $freq)
    limit 120 "$bin/gpu_bf16" "${graphs[@]}" --cuda-graphs=false --loss-log "$work/eager$freq.loss" --dump-params "$work/eager$freq.params" \
      --checkpoint "$work/eager$freq.ckpt"
    limit 120 "$bin/gpu_bf16" "${graphs[@]}" --cuda-graphs --loss-log "$work/graph$freq.loss" \
      --dump-params "$work/graph$freq.params" --checkpoint "$work/graph$freq.ckpt" 2>&1 | tee "$work/graph$freq.txt"
    ! grep -q "cannot be captured" "$work/graph$freq.txt" &&
      python3 "$compare" "$work/graph$freq.loss" "$work/eager$freq.loss" "$work/graph$freq.params" \
        "$work/eager$freq.params" 1e-6
    verdict $? "2c graphs, update-freq $freq"
  done
fi

if want 2d; then
  say "2d. --fused-attention: the fused attention kernels' bf16 step vs the CPU's"
  limit 120 "$bin/gpu_bf16" "${common[@]}" --fused-attention --loss-log "$work/fused.loss" \
    --dump-params "$work/fused.params" --checkpoint "$work/fused.ckpt" 2>&1 | tee "$work/fused.txt"
  ! grep -q "runs on batched GEMMs" "$work/fused.txt" &&
    python3 "$compare" "$work/fused.loss" "$here/cpu_bf16.loss" "$work/fused.params" "$here/cpu_bf16.params" 2e-4 5e-3
  verdict $? "2d fused attention"
fi

if want 2e; then
  say "2e. --profile: the ops one by one, each timed by its kernels (CUPTI); the same losses and state"
  limit 120 "$bin/gpu_bf16" "${common[@]}" --loss-log "$work/eager.loss" --dump-params "$work/eager.params" \
    --checkpoint "$work/eager.ckpt"
  limit 120 "$bin/gpu_bf16" "${common[@]}" --profile --loss-log "$work/profiled.loss" \
    --dump-params "$work/profiled.params" --checkpoint "$work/profiled.ckpt" 2>&1 | tee "$work/profiled.txt"
  grep -q "^profile of 3 steps: [0-9.]* ms/step in the ops" "$work/profiled.txt" &&
    grep -q "^GPU kernels of 3 steps: [1-9]" "$work/profiled.txt" &&
    grep -q "^steps after the first (medians): " "$work/profiled.txt" &&
    python3 "$compare" "$work/profiled.loss" "$work/eager.loss" "$work/profiled.params" "$work/eager.params" 1e-6
  verdict $? "2e profile"
fi

if want 3; then
  say "3. tiny-train learns reverse on the GPU"
  limit 300 "$bin/gpu16" --task reverse --steps 2000 --log-every 500 --checkpoint "$work/r.ckpt" | tee "$work/reverse.txt"
  grep -qE "exact match on 256 held-out sentences \(greedy\): [0-9]+/256 = (8[0-9]|9[0-9]|100)\." "$work/reverse.txt"
  verdict $? "3 learns reverse"
fi

if want 4; then
  say "4. checkpoints: CPU -> GPU"
  limit 120 "$bin/gpu" --steps 6 --eval-sentences 0 --resume "$here/cpu3.ckpt" --checkpoint "$work/c2g.ckpt" \
    --loss-log "$work/c2g.loss" --dump-params "$work/c2g.params"
  python3 "$compare" "$work/c2g.loss" "$here/cpu6-last.loss" "$work/c2g.params" "$here/cpu6.params" 1e-4
  verdict $? "4 CPU checkpoint resumed on the GPU"
fi

if want 4b; then
  say "4b. --cuda-graphs keeps the loop's guards: a NaN stops the run unsaved, --resume, validation"
  "$here/check_graph_guards.sh" "$work" "$compare" "$bin/diverge_gpu" "$bin/gpu" "$bin/gpu_bf16" "$here/cpu3.ckpt" \
    "$here/cpu6-last.loss" "$here/cpu6.params"
  verdict $? "4b graphs keep the guards"
fi

if want 5; then
  say "5. translation on the GPU: incremental vs full decoder"
  limit 300 "$bin/numbers_gpu" --train-data "$here/train.tok" --vocab "$here/spm.model" --steps 1000 --log-every 500 \
    --eval-sentences 0 --checkpoint "$work/numbers.ckpt"
  keep "$work/numbers.ckpt"
  translate() {
    limit 120 "$bin/numbers_gpu" --translate "$here/test.src" --resume "$work/numbers.ckpt" --vocab "$here/spm.model" \
      --output "$work/$1" "${@:2}"
  }
  translate gpu.beam; translate gpu.beam.full --decoder full
  translate gpu.greedy --search greedy; translate gpu.greedy.full --search greedy --decoder full
  keep "$work/gpu.beam" "$work/gpu.greedy"
  for search in beam greedy; do
    # At most 4 of 200 lines may differ (run_gpu_checks.sh says why); both
    # decoders must have written all 200.
    lines=$(wc -l < "$work/gpu.$search" 2>/dev/null || echo 0)
    full=$(wc -l < "$work/gpu.$search.full" 2>/dev/null || echo 0)
    n=$(diff "$work/gpu.$search" "$work/gpu.$search.full" | grep -c '^<' || true)
    echo "$search: $lines and $full lines, $n of them differ between the incremental and the full decoder"
    [ "$lines" -eq 200 ] && [ "$full" -eq 200 ] && [ "$n" -le 4 ]; verdict $? "5 $search"
  done
fi

if want 7; then
  say "7. the model files (GPT-2, LLaMA with and without grouped-query attention, prefix LM, pre-LN Transformer, score biases, every op, AdamW): GPU step vs CPU step"
  # shellcheck source=test/gpu/step7_models.sh
  source "$here/step7_models.sh"
  for model in $step7_models; do
    for precision in fp32 bf16; do
      lm=${model/@/_}_$precision
      limit 120 "$bin/${lm}_gpu" "${common[@]}" --loss-log "$work/${lm}_gpu.loss" --dump-params "$work/${lm}_gpu.params" \
        --checkpoint "$work/${lm}_gpu.ckpt"
      if [ $precision = fp32 ]; then tolerances=(1e-4); else tolerances=(2e-4 5e-3); fi
      python3 "$compare" "$work/${lm}_gpu.loss" "$here/${lm}_cpu.loss" "$work/${lm}_gpu.params" "$here/${lm}_cpu.params" \
        "${tolerances[@]}"
      verdict $? "7 $model $precision step"
      if [ $precision = bf16 ] && step7_has_attention $model; then
        limit 120 "$bin/${lm}_gpu" "${common[@]}" --fused-attention --loss-log "$work/${lm}_fused.loss" \
          --dump-params "$work/${lm}_fused.params" --checkpoint "$work/${lm}_fused.ckpt" 2>&1 | tee "$work/${lm}_fused.txt"
        # A score bias keeps attention on the batched GEMMs, and says so.
        if [ $model = ScoreBias ]; then
          grep -q "runs on batched GEMMs: it adds a score bias" "$work/${lm}_fused.txt"
        else
          ! grep -q "runs on batched GEMMs" "$work/${lm}_fused.txt"
        fi &&
          python3 "$compare" "$work/${lm}_fused.loss" "$here/${lm}_cpu.loss" "$work/${lm}_fused.params" \
            "$here/${lm}_cpu.params" "${tolerances[@]}"
        verdict $? "7 $model bf16 step, fused attention"
      fi
    done
  done
fi

if want 6a; then
  say "6a. attention alone: tgc's kernels (GEMMs, fused) vs PyTorch's scaled_dot_product_attention backends"
  (cd "$here" && limit 300 python3 gpu_attention.py --tgc "$bin/gpu_attention" --json "$results/attention.json")
  verdict $? "6a attention kernels"
fi

if want 6; then
  say "6. base and big at 384 x 64/64: tgc (op by op, graphs, fused attention) vs PyTorch (eager, compiled)"
  # base in both precisions, big in bf16 (the issue's rows); big fp32 when time allows:
  #   python3 gpu.py --programs bin --configs . --rows big --precisions fp32
  (cd "$here" && limit 3600 python3 gpu.py --programs "$bin" --configs "$here" --rows base --timeout 240 \
    --json "$results/bench-base.json")
  verdict $? "6 bench base"
  (cd "$here" && limit 3600 python3 gpu.py --programs "$bin" --configs "$here" --rows big --precisions bf16 --timeout 240 \
    --json "$results/bench-big.json")
  verdict $? "6 bench big bf16"
fi

if want 6p; then
  say "6p. where base bf16's step goes: --profile op by op, with --fused-attention, and replayed (graphs)"
  for flags in "" "--fused-attention" "--fused-attention --cuda-graphs"; do
    name=profile-base-bf16$(echo "$flags" | tr -d ' ' | sed 's/--/-/g')
    # shellcheck disable=SC2086 # the flags are words
    limit 240 "$bin/base_bf16" --task reverse --steps 6 --log-every 6 --eval-sentences 0 --profile $flags \
      --checkpoint "$work/$name.ckpt" > "$results/$name.txt" 2>&1
    code=$?
    cat "$results/$name.txt"
    [ $code -eq 0 ] && grep -q "^GPU kernels of 6 steps" "$results/$name.txt"
    verdict $? "6p $name"
  done
fi

echo
echo "this run's verdicts (all runs': $results/verdicts.txt):"
tail -n +$((earlier + 1)) "$results/verdicts.txt"
[ $skipped -eq 0 ] || echo "$skipped steps skipped: past --deadline"
if [ $failed -eq 0 ]; then
  echo "all steps run passed; the finish: bundle_gpu_checks.sh --finish $results"
else
  echo "SOME STEPS FAILED"
fi
return $failed
}

checks 2>&1 | tee -a "$results/log.txt"
exit "${PIPESTATUS[0]}"
