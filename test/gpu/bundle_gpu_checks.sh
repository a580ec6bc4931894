#!/usr/bin/env bash
# run_gpu_checks.sh for a GPU machine that has no tgc build (no MLIR, none of
# the Debian packages), e.g. a cluster's GPU node next to the machine that
# builds. Three parts:
#
#   test/gpu/bundle_gpu_checks.sh [build-dir]     here: writes gpu-checks/ and
#       gpu-checks.tar.xz: the checks' GPU programs (built here), the shared
#       libraries they need (all but glibc's, the C++ runtime's and CUDA's,
#       which the GPU machine has), the CPU halves' results (run here), run.sh;
#   tar xJf gpu-checks.tar.xz && gpu-checks/run.sh [--results DIR] [--only STEPS]
#       [--deadline SECONDS]
#       there: the GPU halves of steps 1-7 (7 without generation: no
#       SentencePiece there), each under a time limit, into DIR (default
#       gpu-checks-results: the log, a verdict a step, the bench's JSON, the
#       files the finish reads), filled as it goes; --only runs a subset
#       (e.g. the checks, then --only 6 for the bench: run.sh says more);
#       With minutes of GPU time, runs of at most ten minutes each: the
#       checks of what is new first (--only 1,2,2b,2c,2d,2e,4,4b,7), then
#       the bench (--only 6a,6,6p: 6a times the attention kernels alone
#       against PyTorch's on each of its backends, 6p is --profile's table of
#       where base bf16's step goes; gpu.py --pytorch eager skips torch.compile's minutes of
#       compiling), then 1b (compute-sanitizer, slow), 3 and 5 (training to
#       a result) when time is left; --deadline cuts the whole run to a
#       loan's seconds (the steps it leaves out say SKIPPED);
#   test/gpu/bundle_gpu_checks.sh --finish DIR [build-dir]
#       here: what needs this machine (GPU checkpoint resumed on the CPU, the
#       translations decoded, scored and compared with the CPU's).
#
# Build for the GPU machine's CPU too: configure with -DTGC_CPU_ARCH=x86-64-v3
# (or its -march) and -DTGC_ENABLE_MPI=OFF (Open MPI's plug-ins do not
# travel); the programs' --cuda-arch is that GPU's ($TGC_CUDA_ARCH, default 90).
set -euo pipefail
finish=""
if [ "${1:-}" = "--finish" ]; then finish=$2; shift 2; fi
build=${1:-build}
arch=${TGC_CUDA_ARCH:-90}
tgc=$build/bin/tgc
data=$(cd "$build/bin" && pwd)/tgc-data  # absolute: used after cd
bundle=gpu-checks
compare=test/lit/tgc/Inputs/compare_runs.py
say() { printf '\n== %s\n' "$*"; }

if [ -n "$finish" ]; then
  # A copy: the GPU machine's results may come back read-only.
  results=$bundle/results
  if [ ! -d "$finish" ]; then
    echo "bundle_gpu_checks.sh --finish: $finish is not the directory run.sh wrote (--results)" >&2
    exit 2
  fi
  if [ "$(cd "$finish" && pwd)" = "$(mkdir -p "$results" && cd "$results" && pwd)" ]; then
    echo "bundle_gpu_checks.sh --finish: give the results where run.sh wrote them, not $results" >&2
    exit 2
  fi
  rm -rf "$results"
  cp -r "$finish" "$results"
  chmod -R u+w "$results"
  cpu=$bundle/cpu
  say "4. checkpoints: GPU -> CPU"
  "$cpu/cpu" --steps 6 --eval-sentences 0 --resume "$results/gpu3.ckpt" --checkpoint "$results/g2c.ckpt" \
    --loss-log "$results/g2c.loss" --dump-params "$results/g2c.params"
  python3 $compare "$results/g2c.loss" "$bundle/cpu6-last.loss" "$results/g2c.params" "$bundle/cpu6.params" 1e-4
  say "5. translation: the GPU's lines scored, the CPU program on the GPU's checkpoint"
  for out in gpu.beam gpu.greedy; do
    "$data" decode --vocab "$bundle/spm.model" --ids < "$results/$out" > "$results/$out.txt"
    printf '%-12s ' "$out"; "$data" bleu --ref "$cpu/test.tgt" "$results/$out.txt"
  done
  "$cpu/numbers_cpu" --translate "$bundle/test.src" --resume "$results/numbers.ckpt" --vocab "$bundle/spm.model" \
    --output "$results/cpu.beam.txt"
  printf '%-12s ' cpu.beam; "$data" bleu --ref "$cpu/test.tgt" "$results/cpu.beam.txt"
  echo "lines where the GPU's and the CPU's beam search differ:" \
    "$(diff "$results/gpu.beam.txt" "$results/cpu.beam.txt" | grep -c '^<' || true)"
  exit 0
fi

rm -rf $bundle && mkdir -p $bundle/bin $bundle/lib $bundle/cpu
cpu=$bundle/cpu
gpu=(--target=cuda --cuda-arch=$arch)
say "programs"
$tgc --model transformer --preset tiny --precision=fp32 -o $cpu/cpu
$tgc --model transformer --preset tiny --precision=fp32 "${gpu[@]}" -o $bundle/bin/gpu
$tgc --model transformer --preset tiny --precision=bf16 -o $cpu/cpu_bf16
$tgc --model transformer --preset tiny --precision=bf16 "${gpu[@]}" -o $bundle/bin/gpu_bf16
$tgc --model transformer --preset tiny --config models/configs/tiny-train.pbtxt "${gpu[@]}" -o $bundle/bin/gpu16
$tgc --model transformer --preset tiny --config test/gpu/diverge.pbtxt "${gpu[@]}" -o $bundle/bin/diverge_gpu
for preset in base big; do
  for precision in fp32 bf16; do
    $tgc --model transformer --preset $preset --config bench/configs/$preset-gpu.pbtxt --precision=$precision \
      "${gpu[@]}" -o $bundle/bin/${preset}_$precision
  done
done
cp "$(find "$build" -name tgc-cuda-kernel-tests -type f | head -1)" $bundle/bin/
cp "$build/bench/gpu_attention" $bundle/bin/

say "the CPU halves of steps 2 and 4"
common=(--task reverse --steps 3 --seed 5 --eval-sentences 0)
$cpu/cpu "${common[@]}" --loss-log $bundle/cpu.loss --dump-params $bundle/cpu.params --checkpoint $bundle/cpu3.ckpt
$cpu/cpu_bf16 "${common[@]}" --loss-log $bundle/cpu_bf16.loss --dump-params $bundle/cpu_bf16.params \
  --checkpoint $cpu/cpu_bf16.ckpt
$cpu/cpu --steps 6 --eval-sentences 0 --task reverse --seed 5 --loss-log $cpu/cpu6.loss \
  --dump-params $bundle/cpu6.params --checkpoint $cpu/cpu6.ckpt
tail -n 3 $cpu/cpu6.loss > $bundle/cpu6-last.loss

say "step 7: the model files' GPU programs and CPU halves"
# shellcheck source=test/gpu/step7_models.sh
source "$(dirname "$0")/step7_models.sh"
for model in $step7_models; do
  file=$(step7_file "$model")
  preset=(); [[ $model == *@* ]] && preset=(--preset "${model#*@}")
  for precision in fp32 bf16; do
    lm=${model/@/_}_$precision
    $tgc --model-file "$file" "${preset[@]}" --precision=$precision -o "$cpu/${lm}_cpu" 2>/dev/null
    $tgc --model-file "$file" "${preset[@]}" --precision=$precision "${gpu[@]}" -o "$bundle/bin/${lm}_gpu" 2>/dev/null
    "$cpu/${lm}_cpu" "${common[@]}" --loss-log "$bundle/${lm}_cpu.loss" --dump-params "$bundle/${lm}_cpu.params" \
      --checkpoint "$cpu/${lm}_cpu.ckpt"
  done
done

say "step 5's corpus; the test sentences' ids for the stand-in tgc-data"
(
  cd $cpu
  $data sample --pairs 6000 -o train
  $data sample --split test --pairs 200 -o test
  $data vocab --size 320 -o spm train.src train.tgt
  $data encode --vocab spm.model --source train.src --target train.tgt -o train.tok
)
cp $cpu/spm.model $cpu/train.tok $cpu/test.src $bundle/
$data encode --vocab $bundle/spm.model --ids < $bundle/test.src > $bundle/test.src.ids
numbers=(--model transformer --preset tiny --config models/configs/numbers.pbtxt --corpus $cpu/train.tok --max-tokens 640)
$tgc "${numbers[@]}" --precision=fp32 "${gpu[@]}" -o $bundle/bin/numbers_gpu
$tgc "${numbers[@]}" --precision=fp32 -o $cpu/numbers_cpu

# The programs run tgc-data to encode and decode text (VocabularyTool.h);
# there, this stand-in gives the ids computed here and writes ids back.
cat > $bundle/tgc-data <<'EOF'
#!/usr/bin/env python3
"""Stand-in for tgc-data encode/decode --ids: test.src's lines to the ids
computed by the real tool; ids are written back as they are."""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
lines = sys.stdin.read().splitlines()
if sys.argv[1] == "encode":
    read = lambda name: open(os.path.join(here, name)).read().splitlines()
    table = dict(zip(read("test.src"), read("test.src.ids")))
    for line in lines:
        if line not in table:
            sys.exit("tgc-data stand-in: no ids for " + repr(line))
        print(table[line])
else:
    print("\n".join(lines))
EOF
chmod +x $bundle/tgc-data
cp $compare bench/gpu.py bench/gpu_attention.py bench/sides.py bench/pytorch_transformer.py bench/transformer_config.py \
  bench/configs/base-gpu.pbtxt bench/configs/big-gpu.pbtxt $bundle/
cp "$(dirname "$0")/bundle_run.sh" $bundle/run.sh
cp "$(dirname "$0")/check_graph_guards.sh" "$(dirname "$0")/step7_models.sh" $bundle/

say "shared libraries"
for program in $bundle/bin/*; do ldd "$program"; done | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libmvec|libpthread|libdl|librt|libstdc\+\+|libgcc_s|libcuda|libcublas|libcublasLt|libcudart|libnccl)\.so|ld-linux' |
  while read -r library; do cp -L "$library" $bundle/lib/; done
ls $bundle/lib
# The programs share most of their bytes (the kernels' archive): a dictionary
# that spans them packs the bundle to a fraction of xz's default (2.2 against
# 6.0 MB for three programs).
tar --exclude=$bundle/cpu -cf - $bundle | xz -6 --lzma2=preset=6,dict=256MiB > $bundle.tar.xz
ls -l $bundle.tar.xz
