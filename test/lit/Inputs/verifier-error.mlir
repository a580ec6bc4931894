func.func @f(%x: tensor<2x7x16xf32>, %w: tensor<8x64xf32>) -> tensor<2x7x64xf32> {
  %y = tg.matmul %x, %w : tensor<2x7x16xf32>, tensor<8x64xf32> -> tensor<2x7x64xf32>
  return %y : tensor<2x7x64xf32>
}
