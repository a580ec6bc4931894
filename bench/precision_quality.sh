#!/usr/bin/env bash
# Translation quality of --precision=bf16 against fp32 on a real corpus: the
# same model, data and seeds trained in both precisions for STEPS steps on
# German translations of Debian's message catalogues (README, "Real text"),
# then BLEU of each on the test set (beam 4, the last checkpoint), per seed
# and averaged over the seeds.
#
#   bench/precision_quality.sh [STEPS] [WORK-DIR] [SEEDS]
#     defaults: 6000, ./precision-quality, "1 2"
#
# Needs the README's build, gettext (msgunfmt) and the catalogues under
# /usr/share/locale/de. A (precision, seed) whose translation exists in
# WORK-DIR is not trained again, so an interrupted run resumes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-6000}
work=${2:-precision-quality}
seeds=${3:-1 2}
bin=$root/build/bin
mkdir -p "$work" && cd "$work"
if [ ! -f train.tok ]; then
  python3 "$root/tools/corpora/po_pairs.py" -o . /usr/share/locale/de/LC_MESSAGES/*.mo
  "$bin/tgc-data" vocab --size 8000 -o spm train.src train.tgt
  "$bin/tgc-data" encode --vocab spm.model --source train.src --target train.tgt -o train.tok
  "$bin/tgc-data" encode --vocab spm.model --source valid.src --target valid.tgt -o valid.tok
fi
for precision in fp32 bf16; do
  [ -x train_$precision ] ||
    "$bin/tgc" --model transformer --preset small --config "$root/models/configs/messages.pbtxt" \
      --corpus train.tok --max-tokens 2048 --precision=$precision -o train_$precision
  for seed in $seeds; do
    run=${precision}_s$seed
    [ -f test_$run.out ] && continue
    ./train_$precision --train-data train.tok --valid-data valid.tok --vocab spm.model \
      --steps "$steps" --seed "$seed" --log-every 100 --valid-every 500 --valid-sentences 300 \
      --metrics run_$run.jsonl --eval-sentences 0 --checkpoint $run.ckpt > train_$run.log
    ./train_$precision --translate test.src --resume $run.ckpt --vocab spm.model \
      --output test_$run.out > translate_$run.log
  done
done
# Per seed, then the means: BLEU moves by about a point between neighbouring
# checkpoints of one run, so a single seed says little about a 0.5 gap.
for seed in $seeds; do
  for precision in fp32 bf16; do
    run=${precision}_s$seed
    echo "== $precision, seed $seed: $(grep '^trained' train_$run.log)"
    grep '^valid step' train_$run.log | tail -1
    score=$("$bin/tgc-data" bleu --ref test.tgt test_$run.out)
    echo "test $score"
    echo "$precision $(echo "$score" | sed -E 's/^BLEU = ([0-9.]+).*/\1/')" >> scores.txt.tmp
  done
done
awk '{ sum[$1] += $2; n[$1]++ }
     END { f = sum["fp32"] / n["fp32"]; b = sum["bf16"] / n["bf16"];
           printf "mean test BLEU over %d seeds: fp32 %.2f, bf16 %.2f, bf16 - fp32 %+.2f\n",
                  n["fp32"], f, b, b - f }' scores.txt.tmp
rm -f scores.txt.tmp
