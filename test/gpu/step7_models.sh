# Step 7's model files, sourced by run_gpu_checks.sh, bundle_gpu_checks.sh
# and the bundle's run.sh (which gets a copy). A model is NAME or
# NAME@PRESET (the file's default preset otherwise); ScoreBias, EveryOp and
# AdamW are the lit tests' models of learned and ALiBi score biases, of
# every op of the DSL, and of AdamW's cases.
# shellcheck shell=bash
step7_models="Gpt2 Llama Llama@tiny-gqa DecoderOnlyLm PreLnTransformer
  ScoreBias EveryOp AdamW"

# step7_file MODEL: its source file, from the repository's root.
step7_file() {
  case $1 in
    ScoreBias) echo test/lit/model-file/Inputs/score-bias.cpp ;;
    EveryOp) echo test/lit/model-file/Inputs/every-op.cpp ;;
    AdamW) echo test/lit/model-file/Inputs/adamw.cpp ;;
    *) echo "models/examples/${1%@*}.cpp" ;;
  esac
}

# step7_has_attention MODEL: whether it has attention (for --fused-attention
# to fuse).
step7_has_attention() {
  [ "$1" != EveryOp ] && [ "$1" != AdamW ]
}
