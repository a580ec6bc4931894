// A loss that stores a value of its parameter into a frozen variable and
// loads it again (as docs/limits.md advises after a write): the load reads
// 2w, so d loss / d w = 4w (sum(c2 * w) = sum(2 w^2)). tg-autodiff gave 2w:
// the second load counted as a constant.
module {
  tg.variable @w trainable init(normal, 1.0) : tensor<3xf32>
  tg.variable @c init(ones) : tensor<3xf32>
  func.func @loss() -> (tensor<f32>, tensor<i32>) {
    %w = tg.load @w : tensor<3xf32>
    %twice = tg.scale %w by 2.0 : tensor<3xf32>
    tg.store %twice, @c : tensor<3xf32>
    %c2 = tg.load @c : tensor<3xf32>
    %p = tg.mul %c2, %w : tensor<3xf32>
    %l = tg.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    %n = tg.constant dense<3> : tensor<i32>
    return %l, %n : tensor<f32>, tensor<i32>
  }
}
