// A zero-size dimension: before the verifier refused it, tg-autodiff's
// gradient of @w (the shared rhs of a batched matmul) divided by dy's last
// dimension, 0 (SIGFPE).
tg.variable @w trainable init(normal, 0.02) : tensor<4x0xf32>
func.func @loss(%x: tensor<2x3x4xf32>) -> tensor<f32> {
  %w = tg.load @w : tensor<4x0xf32>
  %y = tg.matmul %x, %w : tensor<2x3x4xf32>, tensor<4x0xf32> -> tensor<2x3x0xf32>
  %l = tg.reduce_sum %y dims [0, 1, 2] : tensor<2x3x0xf32> -> tensor<f32>
  return %l : tensor<f32>
}
