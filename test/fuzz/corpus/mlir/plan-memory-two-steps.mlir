// Two step functions, for tg-plan-memory's `function` option
// (tg-plan-memory.mlir).
func.func @train_step(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}
func.func @step(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = tg.transpose %x permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %b = tg.transpose %a permutation [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
