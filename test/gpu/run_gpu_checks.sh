#!/usr/bin/env bash
# The checks of the CUDA backend that need a GPU (the test suite only
# compiles and links GPU programs). Run from the repository root on a machine
# with an NVIDIA GPU after the README's build:
#
#   test/gpu/run_gpu_checks.sh [build-dir]
#
# It stops at the first check that fails. Each GPU program may run
# $TGC_GPU_RUN_LIMIT seconds (default 600), so that a hung kernel fails its
# check instead of holding the GPU.
#
# (A GPU machine without the build: test/gpu/bundle_gpu_checks.sh builds the
# same checks here and packs them with the libraries they need.)
#
# 1. runtime/kernels/cuda's kernels against the CPU kernels (ctest -R '^cuda\.');
#    1b. the fused attention kernels' tests under compute-sanitizer's memcheck
#    and racecheck (shared-memory races between a block's warps), where the
#    machine has it;
# 2. the compiled tiny step on the GPU against the CPU binary: 3 steps of
#    reverse with dropout on, losses and all state within 1e-4;
#    2b. the same in mixed precision (--precision=bf16: tensor-core GEMMs on
#    bf16 operands), GPU against CPU: losses within 2e-4, state within 5e-3
#    (the tolerances lit/tgc/mixed-precision.test states for CPU vs
#    interpreter);
#    2c. --cuda-graphs (the step captured once, replayed every step) against
#    the same program op by op: losses and state within 1e-6, with dropout
#    and with --update-freq 2 (a graph per accumulation phase);
#    2d. --fused-attention (attention in one kernel forward, two backward)
#    against the CPU step, as 2b, with no call left to the batched GEMMs;
#    2e. --profile (the ops one by one, each timed by its kernels through
#    CUPTI) prints the ops' and the kernels' tables and changes no value;
# 3. tiny learns reverse on the GPU (exact match on held-out sentences);
# 4. checkpoints cross over: GPU -> CPU and CPU -> GPU resumes match;
#    4b. --cuda-graphs keeps the training loop's guards (check_graph_guards.sh):
#    a diverging run stops at its first NaN as op by op does, saving nothing;
#    a CPU checkpoint resumed and replayed continues as the CPU; validation
#    between replays gives op by op's losses and BLEU;
# 5. translation on the GPU: the incremental decoder (caches on the device,
#    beam search's reorder there too) gives the full recomputation's
#    tokens, and the CPU program translates the GPU's checkpoint as well;
# 6. bench/gpu.py: base (f32, bf16) and big (bf16) at a 25k-token batch,
#    tgc (op by op, --cuda-graphs; bf16 also --fused-attention, alone and
#    with graphs) against PyTorch on the GPU (eager with its fused attention,
#    scaled_dot_product_attention, and fused Adam; then torch.compile; bf16
#    under autocast): ms/step, tokens/s, MFU against the GEMM peaks measured
#    in the same run, peak device memory, launches per step, the targets;
#    then where base bf16's step goes: --profile op by op, with
#    --fused-attention, and replayed as graphs (the device's busy share);
#    6a (first): bench/gpu_attention.py, the attention kernels alone (the
#    batched GEMMs, the fused kernels) against PyTorch's
#    scaled_dot_product_attention on each of its backends (cuDNN, flash,
#    memory-efficient, math) on base's and big's calls;
# 7. the model files of models/examples (GPT-2, LLaMA, the prefix LM and the
#    pre-LN Transformer, tiny) and three of the lit tests' models (learned
#    and ALiBi score biases; every op of the DSL; AdamW's cases): the GPU
#    step against the CPU step (3 steps of a task, fp32 and bf16; bf16 with
#    attention also with --fused-attention), and a GPT
#    trained on documents continuing 60 prompts on the GPU, incremental
#    against full decoding, then scoring the corpus. It runs before 6: the
#    bench stays last.
set -euo pipefail
# The CUDA kernel tests fail, not skip, where no GPU is usable: here a
# skipped test would pass unrun.
export TGC_REQUIRE_GPU=1
build=${1:-build}
tgc=$build/bin/tgc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compare=test/lit/tgc/Inputs/compare_runs.py
say() { printf '\n== %s\n' "$*"; }
# on_gpu COMMAND...: a GPU program, killed after $TGC_GPU_RUN_LIMIT seconds
# (default 600): a hung kernel ends the checks with a message instead of
# holding the GPU. Ctrl-C still reaches it.
on_gpu() {
  timeout --foreground --kill-after=10 "${TGC_GPU_RUN_LIMIT:-600}" "$@" || {
    local code=$?
    [ $code -eq 124 ] && echo "FAIL: ${1##*/} ran past ${TGC_GPU_RUN_LIMIT:-600} s" >&2
    return $code
  }
}

say "1. CUDA kernels vs CPU kernels"
ctest --test-dir "$build" -R '^cuda\.' --output-on-failure --timeout 600

say "1b. the fused attention kernels under compute-sanitizer (memcheck, racecheck)"
kernel_tests=$(find "$build" -name tgc-cuda-kernel-tests -type f | head -1)
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 1 "$kernel_tests" --gtest_filter='FusedAttention.*' --gtest_brief=1
  done
else
  echo "(compute-sanitizer not found: skipped)"
fi

say "2. tiny: GPU step vs CPU step, 3 steps with dropout"
$tgc --model transformer --preset tiny --precision=fp32 -o "$work/cpu"
$tgc --model transformer --preset tiny --precision=fp32 --target=cuda -o "$work/gpu"
common=(--task reverse --steps 3 --seed 5 --eval-sentences 0)
"$work/cpu" "${common[@]}" --loss-log "$work/cpu.loss" --dump-params "$work/cpu.params" --checkpoint "$work/cpu3.ckpt"
on_gpu "$work/gpu" "${common[@]}" --loss-log "$work/gpu.loss" --dump-params "$work/gpu.params" --checkpoint "$work/gpu3.ckpt"
python3 $compare "$work/gpu.loss" "$work/cpu.loss" "$work/gpu.params" "$work/cpu.params" 1e-4

say "2b. tiny in bf16: GPU step vs CPU step, 3 steps with dropout"
$tgc --model transformer --preset tiny --precision=bf16 -o "$work/cpu_bf16"
$tgc --model transformer --preset tiny --precision=bf16 --target=cuda -o "$work/gpu_bf16"
"$work/cpu_bf16" "${common[@]}" --loss-log "$work/cpu_bf16.loss" --dump-params "$work/cpu_bf16.params" --checkpoint "$work/cpu_bf16.ckpt"
on_gpu "$work/gpu_bf16" "${common[@]}" --loss-log "$work/gpu_bf16.loss" --dump-params "$work/gpu_bf16.params" --checkpoint "$work/gpu_bf16.ckpt"
python3 $compare "$work/gpu_bf16.loss" "$work/cpu_bf16.loss" "$work/gpu_bf16.params" "$work/cpu_bf16.params" 2e-4 5e-3

say "2c. --cuda-graphs: the replayed step against the step run op by op, 6 steps with dropout, one and two batches an update"
for freq in 1 2; do
  graphs=(--task reverse --steps 6 --seed 5 --eval-sentences 0 --update-freq $freq)
  on_gpu "$work/gpu_bf16" "${graphs[@]}" --cuda-graphs=false --loss-log "$work/eager$freq.loss" --dump-params "$work/eager$freq.params" --checkpoint "$work/eager$freq.ckpt"
  on_gpu "$work/gpu_bf16" "${graphs[@]}" --cuda-graphs --loss-log "$work/graph$freq.loss" --dump-params "$work/graph$freq.params" --checkpoint "$work/graph$freq.ckpt" 2>&1 | tee "$work/graph$freq.txt"
  if grep -q "cannot be captured" "$work/graph$freq.txt"; then
    echo "FAIL: the step was not captured"; exit 1
  fi
  # The same kernels on the same data: equal up to cuBLAS's choices.
  python3 $compare "$work/graph$freq.loss" "$work/eager$freq.loss" "$work/graph$freq.params" "$work/eager$freq.params" 1e-6
done

say "2d. --fused-attention: the fused attention kernels' bf16 step against the CPU's, 3 steps with dropout"
on_gpu "$work/gpu_bf16" "${common[@]}" --fused-attention --loss-log "$work/fused.loss" --dump-params "$work/fused.params" --checkpoint "$work/fused.ckpt" 2>&1 | tee "$work/fused.txt"
if grep -q "runs on batched GEMMs" "$work/fused.txt"; then
  echo "FAIL: an attention call did not run fused"; exit 1
fi
python3 $compare "$work/fused.loss" "$work/cpu_bf16.loss" "$work/fused.params" "$work/cpu_bf16.params" 2e-4 5e-3

say "2e. --profile: the ops one by one, each timed by its kernels; the same losses and state"
on_gpu "$work/gpu_bf16" "${common[@]}" --loss-log "$work/plain.loss" --dump-params "$work/plain.params" --checkpoint "$work/plain.ckpt"
on_gpu "$work/gpu_bf16" "${common[@]}" --profile --loss-log "$work/profiled.loss" --dump-params "$work/profiled.params" --checkpoint "$work/profiled.ckpt" | tee "$work/profiled.txt"
grep -q "^profile of 3 steps: [0-9.]* ms/step in the ops" "$work/profiled.txt"
grep -q "^GPU kernels of 3 steps: [1-9]" "$work/profiled.txt"
grep -q "^steps after the first (medians): " "$work/profiled.txt"
python3 $compare "$work/profiled.loss" "$work/plain.loss" "$work/profiled.params" "$work/plain.params" 1e-6

say "3. tiny-train learns reverse on the GPU"
$tgc --model transformer --preset tiny --config models/configs/tiny-train.pbtxt --target=cuda -o "$work/gpu16"
on_gpu "$work/gpu16" --task reverse --steps 2000 --log-every 500 --checkpoint "$work/r.ckpt" | tee "$work/reverse.txt"
grep -E "exact match on 256 held-out sentences \(greedy\): [0-9]+/256 = (8[0-9]|9[0-9]|100)\." "$work/reverse.txt"

say "4. checkpoints: GPU -> CPU and CPU -> GPU"
more=(--steps 6 --eval-sentences 0)
"$work/cpu" "${more[@]}" --task reverse --seed 5 --loss-log "$work/cpu6.loss" --dump-params "$work/cpu6.params" --checkpoint "$work/cpu6.ckpt"
"$work/cpu" "${more[@]}" --resume "$work/gpu3.ckpt" --checkpoint "$work/g2c.ckpt" --loss-log "$work/g2c.loss" --dump-params "$work/g2c.params"
on_gpu "$work/gpu" "${more[@]}" --resume "$work/cpu3.ckpt" --checkpoint "$work/c2g.ckpt" --loss-log "$work/c2g.loss" --dump-params "$work/c2g.params"
tail -n 3 "$work/cpu6.loss" > "$work/cpu6-last.loss"
python3 $compare "$work/g2c.loss" "$work/cpu6-last.loss" "$work/g2c.params" "$work/cpu6.params" 1e-4
python3 $compare "$work/c2g.loss" "$work/cpu6-last.loss" "$work/c2g.params" "$work/cpu6.params" 1e-4

say "4b. --cuda-graphs keeps the loop's guards: a NaN stops the run unsaved, --resume, validation"
$tgc --model transformer --preset tiny --config test/gpu/diverge.pbtxt --target=cuda -o "$work/diverge_gpu"
test/gpu/check_graph_guards.sh "$work" $compare "$work/diverge_gpu" "$work/gpu" "$work/gpu_bf16" "$work/cpu3.ckpt" \
  "$work/cpu6-last.loss" "$work/cpu6.params"

say "5. translation on the GPU: incremental vs full decoder, GPU vs CPU"
data=$(cd "$build/bin" && pwd)/tgc-data  # absolute: used after cd
(
  cd "$work"
  $data sample --pairs 6000 -o train
  $data sample --split test --pairs 200 -o test
  $data vocab --size 320 -o spm train.src train.tgt
  $data encode --vocab spm.model --source train.src --target train.tgt -o train.tok
)
numbers=(--model transformer --preset tiny --config models/configs/numbers.pbtxt --corpus "$work/train.tok" --max-tokens 640)
$tgc "${numbers[@]}" --precision=fp32 --target=cuda -o "$work/numbers_gpu"
$tgc "${numbers[@]}" --precision=fp32 -o "$work/numbers_cpu"
on_gpu "$work/numbers_gpu" --train-data "$work/train.tok" --vocab "$work/spm.model" --steps 1000 --log-every 500 --eval-sentences 0 --checkpoint "$work/numbers.ckpt"
translate() { on_gpu "$1" --translate "$work/test.src" --resume "$work/numbers.ckpt" --vocab "$work/spm.model" --output "$work/$2" "${@:3}"; }
translate "$work/numbers_gpu" gpu.beam
translate "$work/numbers_gpu" gpu.beam.full --decoder full
translate "$work/numbers_gpu" gpu.greedy --search greedy
translate "$work/numbers_gpu" gpu.greedy.full --search greedy --decoder full
# cuBLAS may pick other kernels for one position's rows than for whole
# prefixes, so a near tie may flip: at most 4 of the 200 lines may differ
# (the CPU programs give the same bytes, test/lit/tgc-data/translate-numbers).
differing() { diff "$1" "$2" | grep -c '^<' || true; }
for search in beam greedy; do
  n=$(differing "$work/gpu.$search" "$work/gpu.$search.full")
  echo "$search: $n of 200 lines differ between the incremental and the full decoder"
  [ "$n" -le 4 ]
done
translate "$work/numbers_cpu" cpu.beam
for out in gpu.beam gpu.greedy cpu.beam; do
  printf '%-12s ' "$out"; $data bleu --ref "$work/test.tgt" "$work/$out"
done
echo "lines where the GPU's and the CPU's beam search differ: $(differing "$work/gpu.beam" "$work/cpu.beam")"

say "7. the model files on the GPU: GPU step vs CPU step; a GPT generating"
# shellcheck source=test/gpu/step7_models.sh
source "$(dirname "$0")/step7_models.sh"
for model in $step7_models; do
  file=$(step7_file "$model")
  preset=(); [[ $model == *@* ]] && preset=(--preset "${model#*@}")
  for precision in fp32 bf16; do
    lm=$work/${model/@/_}_$precision
    $tgc --model-file "$file" "${preset[@]}" --precision=$precision -o "${lm}_cpu" 2>/dev/null
    $tgc --model-file "$file" "${preset[@]}" --precision=$precision --target=cuda -o "${lm}_gpu" 2>/dev/null
    for side in cpu gpu; do
      on_gpu "${lm}_$side" "${common[@]}" --loss-log "${lm}_$side.loss" --dump-params "${lm}_$side.params" --checkpoint "${lm}_$side.ckpt"
    done
    if [ $precision = fp32 ]; then tolerances=(1e-4); else tolerances=(2e-4 5e-3); fi
    python3 $compare "${lm}_gpu.loss" "${lm}_cpu.loss" "${lm}_gpu.params" "${lm}_cpu.params" "${tolerances[@]}"
    if [ $precision = bf16 ] && step7_has_attention "$model"; then
      on_gpu "${lm}_gpu" "${common[@]}" --fused-attention --loss-log "${lm}_fused.loss" --dump-params "${lm}_fused.params" --checkpoint "${lm}_fused.ckpt" 2>&1 | tee "${lm}_fused.txt"
      # A score bias keeps attention on the batched GEMMs, and says so.
      if [ "$model" = ScoreBias ]; then
        grep -q "runs on batched GEMMs: it adds a score bias" "${lm}_fused.txt" ||
          { echo "FAIL: $model's biased attention did not say why it is not fused"; exit 1; }
      elif grep -q "runs on batched GEMMs" "${lm}_fused.txt"; then
        echo "FAIL: an attention call of $model did not run fused"; exit 1
      fi
      python3 $compare "${lm}_fused.loss" "${lm}_cpu.loss" "${lm}_fused.params" "${lm}_cpu.params" "${tolerances[@]}"
    fi
  done
done
# A GPT on documents, then 60 prompts continued greedily on the GPU by the
# incremental decoder (caches on the device) and by full recomputation: as in
# step 5, cuBLAS may break a near tie otherwise, so at most 3 lines may differ.
python3 -c "import sys; w = 'the a one two red blue cat dog sees runs home far'.split(); open(sys.argv[1], 'w').write('\n\n'.join(' '.join(w[(i * 7 + j * 3) % len(w)] for j in range(3 + i % 9)) for i in range(300)) + '\n')" "$work/docs.txt"
python3 -c "import random; w = 'the a one two red blue cat dog sees runs home far'.split(); r = random.Random(3); print('\n'.join(' '.join(r.choice(w) for _ in range(r.randrange(1, 9))) for _ in range(60)))" > "$work/prompts.txt"
$data vocab --size 280 -o "$work/docs" "$work/docs.txt" > /dev/null
$data encode --vocab "$work/docs.model" --text "$work/docs.txt" -o "$work/docs.tok" > /dev/null
$tgc --model-file models/examples/Gpt2.cpp --corpus "$work/docs.tok" --precision=fp32 --target=cuda -o "$work/gpt_docs" 2>/dev/null
on_gpu "$work/gpt_docs" --train-data "$work/docs.tok" --steps 200 --log-every 100 --checkpoint "$work/gpt_docs.ckpt"
for decoder in incremental full; do
  on_gpu "$work/gpt_docs" --generate "$work/prompts.txt" --resume "$work/gpt_docs.ckpt" --vocab "$work/docs.model" \
    --max-new-tokens 20 --temperature 0 --decoder $decoder --output "$work/generated.$decoder"
done
n=$(differing "$work/generated.incremental" "$work/generated.full")
echo "generation: $n of 60 lines differ between the incremental and the full decoder"
[ "$n" -le 3 ]
on_gpu "$work/gpt_docs" --score "$work/docs.tok" --resume "$work/gpt_docs.ckpt"

say "6a. attention alone: tgc's kernels vs PyTorch's scaled_dot_product_attention backends"
ninja -C "$build" bench-gpu_attention
python3 bench/gpu_attention.py --tgc "$build/bench/gpu_attention"

say "6. base and big at 384 x 64/64 (about 25k target positions): tgc vs PyTorch (bench/gpu.py)"
for preset in base big; do
  for precision in fp32 bf16; do
    $tgc --model transformer --preset $preset --config bench/configs/$preset-gpu.pbtxt --target=cuda --precision=$precision -o "$work/${preset}_$precision"
  done
done
python3 bench/gpu.py --programs "$work" --rows base
python3 bench/gpu.py --programs "$work" --rows big --precisions bf16
for flags in "" "--fused-attention" "--fused-attention --cuda-graphs"; do
  rm -f "$work"/profiled_base.ckpt*
  # shellcheck disable=SC2086 # the flags are words
  on_gpu "$work/base_bf16" --task reverse --steps 6 --log-every 6 --eval-sentences 0 --profile $flags --checkpoint "$work/profiled_base.ckpt"
done
