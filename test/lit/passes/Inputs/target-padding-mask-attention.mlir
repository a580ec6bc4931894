// A causal self-attention masked by the target's own padding mask: no
// incremental decoder (tg-derive-decoder-padding-mask.mlir).
tg.variable @embedding trainable init(normal, 0.3) : tensor<10x8xf32>
func.func @predict(%tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
  %e = tg.load @embedding : tensor<10x8xf32>
  %tpad = tg.padding_mask %tin pad_id 0 : tensor<2x4xi32> -> tensor<2x4xf32>
  %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %x4 = tg.reshape %x : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
  %a, %alse = tg.attention %x4, %x4, %x4 mask %tpad causal scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x4xf32>) -> (tensor<2x1x4x8xf32>, tensor<2x1x4xf32>)
  %c3 = tg.reshape %a : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
  %logits = tg.matmul %c3, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
  return %logits : tensor<2x4x10xf32>
}
