#!/usr/bin/env bash
# Step 4b of the GPU checks: a step replayed as a CUDA graph (--cuda-graphs)
# keeps the training loop's guards, as the step run op by op does.
#
#   check_graph_guards.sh WORK COMPARE DIVERGE GPU GPU_BF16 CPU3_CKPT CPU6_LAST_LOSS CPU6_PARAMS
#
# WORK: a scratch directory; COMPARE: compare_runs.py; DIVERGE: tiny's GPU
# program of test/gpu/diverge.pbtxt (learning rate x 1e13: step 2's loss is
# NaN, the step a graph is captured in); GPU,
# GPU_BF16: tiny's fp32 and bf16 GPU programs; CPU3_CKPT: the CPU program's
# checkpoint after 3 steps of reverse (seed 5), CPU6_LAST_LOSS and
# CPU6_PARAMS: its steps 4-6 and state after 6 (what run_gpu_checks.sh's
# step 4 resumes from and compares with).
#   1. a diverging run stops at its first non-finite loss or gradient with
#      the same error as op by op, exit 1, and saves nothing; both name the
#      op that made the first NaN or infinity (checkTrainStep on the GPU);
#   2. a CPU checkpoint resumed and replayed continues as the CPU does;
#   3. validation between replays gives op by op's losses (within 1e-3).
# Every replayed run must have captured its step (a program that cannot
# says so and runs op by op, which would make the comparisons empty).
# Prints what it finds; exits 1 when any of them does not hold.
set -u
if [ $# -ne 8 ]; then
  echo "usage: check_graph_guards.sh WORK COMPARE DIVERGE GPU GPU_BF16 CPU3_CKPT CPU6_LAST_LOSS CPU6_PARAMS" >&2
  exit 2
fi
work=$1 compare=$2 diverge=$3 gpu=$4 gpu_bf16=$5 cpu3=$6 cpu6_loss=$7 cpu6_params=$8
failed=0
fail() { echo "FAIL: $*"; failed=1; }
# limit COMMAND...: at most two minutes; Ctrl-C still reaches it.
limit() { timeout --foreground --kill-after=10 120 "$@"; }
# captured OUTPUT: whether the replayed run behind OUTPUT ran as a graph.
captured() {
  if grep -q "cannot be captured" "$1"; then fail "$1: the step was not captured"; fi
}
# The programs refuse to overwrite a checkpoint: none left from a last run.
rm -f "$work"/diverge_*.ckpt* "$work"/resumed_graphs.ckpt* "$work"/valid_*.ckpt*

for mode in eager graphs; do
  replay=false; [ $mode = graphs ] && replay=true
  flags=(--log-every 1 "--cuda-graphs=$replay")
  limit "$diverge" --task reverse --steps 20 --eval-sentences 0 --checkpoint "$work/diverge_$mode.ckpt" \
    "${flags[@]}" > "$work/diverge_$mode.txt" 2>&1
  code=$?
  # The lines both runs must share (a path names its run: the mode goes).
  grep -E '^(error:|note: the first NaN)' "$work/diverge_$mode.txt" | sed "s/diverge_$mode/diverge_MODE/g" \
    > "$work/diverge_$mode.error"
  echo "diverging, $mode: exit $code, $(cat "$work/diverge_$mode.error")"
  [ $code -eq 1 ] || fail "diverging, $mode: exit $code, not 1"
  grep -qE '^error: the (loss|gradient norm) is (NaN|infinite) at step [0-9]+: training stops, and nothing is saved' \
    "$work/diverge_$mode.error" || fail "diverging, $mode: no non-finite stop"
  grep -qE '^note: the first NaN or infinity of step [0-9]+ comes from tg\.[a-z_]+ at ' \
    "$work/diverge_$mode.error" || fail "diverging, $mode: no op named"
  if ls "$work/diverge_$mode.ckpt"* > /dev/null 2>&1; then fail "diverging, $mode: a checkpoint was saved"; fi
done
captured "$work/diverge_graphs.txt"
cmp -s "$work/diverge_eager.error" "$work/diverge_graphs.error" ||
  fail "diverging: the replayed run stops otherwise than op by op"

limit "$gpu" --steps 6 --eval-sentences 0 --resume "$cpu3" --cuda-graphs --checkpoint "$work/resumed_graphs.ckpt" \
  --loss-log "$work/resumed_graphs.loss" --dump-params "$work/resumed_graphs.params" > "$work/resumed_graphs.txt" 2>&1
cat "$work/resumed_graphs.txt"
captured "$work/resumed_graphs.txt"
python3 "$compare" "$work/resumed_graphs.loss" "$cpu6_loss" "$work/resumed_graphs.params" "$cpu6_params" 1e-4 ||
  fail "a CPU checkpoint resumed and replayed differs from the CPU's steps 4-6"

for mode in eager graphs; do
  replay=false; [ $mode = graphs ] && replay=true
  flags=(--valid-every 2 "--cuda-graphs=$replay")
  limit "$gpu_bf16" --task reverse --steps 4 --seed 5 --eval-sentences 0 --checkpoint "$work/valid_$mode.ckpt" \
    "${flags[@]}" > "$work/valid_$mode.txt" 2>&1
  # "valid step 2: loss 3.1586 ..." -> "2 3.1586"
  sed -n 's/^valid step \([0-9]*\): loss \([0-9.]*\).*/\1 \2/p' "$work/valid_$mode.txt" > "$work/valid_$mode.losses"
done
captured "$work/valid_graphs.txt"
echo "validation losses (step, op by op, replayed):"; paste "$work/valid_eager.losses" "$work/valid_graphs.losses"
paste "$work/valid_eager.losses" "$work/valid_graphs.losses" |
  awk '$1 == $3 { d = $2 - $4; if (d < 0) d = -d; if (d <= 1e-3) ok++ } END { exit ok == 2 ? 0 : 1 }' ||
  fail "validation between replays differs from op by op's (or did not run twice)"
exit $failed
