// A padding mask of the target ids is one value per id: @decode_step
// computes it for its one position (here zeroing a padded position's
// embedding), and as a self-attention's mask it is refused at the
// attention, with the reason (it was refused at tg.padding_mask, "no rule
// for this op").
// RUN: tgc-opt --tg-derive-decoder %s | FileCheck %s
// RUN: tgc-opt --tg-derive-decoder=required=false %S/Inputs/target-padding-mask-attention.mlir 2>&1 | FileCheck %s --check-prefix=ATTENTION

// CHECK-LABEL: func.func @decode_step
// CHECK:      tg.padding_mask %{{.*}} pad_id 0 : tensor<2x1xi32> -> tensor<2x1xf32>
// CHECK:      tg.broadcast %{{.*}} : tensor<2x1xf32> -> tensor<2x1x8xf32>
// ATTENTION: target-padding-mask-attention.mlir:{{[0-9]+}}:{{[0-9]+}}: warning: no incremental decoder (decoding recomputes every prefix with @predict): 'tg.attention' op cannot run one target position at a time: self-attention over the target must be causal, unmasked, without a score bias and without dropout

tg.variable @embedding trainable init(normal, 0.3) : tensor<10x8xf32>
func.func @predict(%tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
  %e = tg.load @embedding : tensor<10x8xf32>
  %pad = tg.padding_mask %tin pad_id 0 : tensor<2x4xi32> -> tensor<2x4xf32>
  %wide = tg.broadcast %pad dims [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %masked = tg.add %x, %wide : tensor<2x4x8xf32>
  %logits = tg.matmul %masked, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
  return %logits : tensor<2x4x10xf32>
}
