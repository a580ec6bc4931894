func.func @ffn() -> tensor<3x2xf32> {
  %x = tg.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %w1 = tg.constant dense<[[1.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %b1 = tg.constant dense<[[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]> : tensor<3x2xf32>
  %w2 = tg.constant dense<[[1.0, 0.0], [2.0, 1.0]]> : tensor<2x2xf32>
  %b2 = tg.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %h = tg.matmul %x, %w1 : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %hb = tg.add %h, %b1 : tensor<3x2xf32>
  %r = tg.relu %hb : tensor<3x2xf32>
  %y = tg.matmul %r, %w2 : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %b2b = tg.broadcast %b2 dims [1] : tensor<2xf32> -> tensor<3x2xf32>
  %out = tg.add %y, %b2b : tensor<3x2xf32>
  return %out : tensor<3x2xf32>
}
