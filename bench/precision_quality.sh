#!/usr/bin/env bash
# Translation quality of --precision=bf16 against fp32 on a real corpus: the
# same model, data and seed trained in both precisions for STEPS steps on
# German translations of Debian's message catalogues (README, "Real text"),
# then BLEU of each on the test set (beam 4) and their validation curves.
#
#   bench/precision_quality.sh [STEPS] [WORK-DIR]     # defaults: 1500, ./precision-quality
#
# Needs the README's build, gettext (msgunfmt) and the catalogues under
# /usr/share/locale/de. Prints the two BLEUs and the last validation lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-1500}
work=${2:-precision-quality}
bin=$root/build/bin
mkdir -p "$work" && cd "$work"
if [ ! -f train.tok ]; then
  python3 "$root/tools/corpora/po_pairs.py" -o . /usr/share/locale/de/LC_MESSAGES/*.mo
  "$bin/tgc-data" vocab --size 8000 -o spm train.src train.tgt
  "$bin/tgc-data" encode --vocab spm.model --source train.src --target train.tgt -o train.tok
  "$bin/tgc-data" encode --vocab spm.model --source valid.src --target valid.tgt -o valid.tok
fi
for precision in fp32 bf16; do
  "$bin/tgc" --model transformer --preset small --config "$root/models/configs/messages.pbtxt" \
    --corpus train.tok --max-tokens 2048 --precision=$precision -o train_$precision
  ./train_$precision --train-data train.tok --valid-data valid.tok --vocab spm.model \
    --steps "$steps" --log-every 100 --valid-every 500 --valid-sentences 300 \
    --metrics run_$precision.jsonl --eval-sentences 0 --checkpoint $precision.ckpt \
    > train_$precision.log
  ./train_$precision --translate test.src --resume $precision.ckpt --vocab spm.model \
    --output test_$precision.out > translate_$precision.log
done
for precision in fp32 bf16; do
  echo "== $precision: $(grep '^trained' train_$precision.log)"
  grep '^valid step' train_$precision.log | tail -2
  echo "test $("$bin/tgc-data" bleu --ref test.tgt test_$precision.out)"
done
