func.func @attention() -> tensor<3x2xf32> {
  %q = tg.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %k = tg.constant dense<[[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]> : tensor<3x2xf32>
  %v = tg.constant dense<[[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]]> : tensor<3x2xf32>
  %s = tg.matmul %q, %k transpose_rhs : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x3xf32>
  %scaled = tg.scale %s by 0.707106781 : tensor<3x3xf32>
  %p = tg.softmax %scaled axis 1 : tensor<3x3xf32>
  %out = tg.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %out : tensor<3x2xf32>
}
