func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tg.relu %x tensor<4xf32>
  return %y : tensor<4xf32>
}
