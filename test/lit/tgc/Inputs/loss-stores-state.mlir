// A loss that reads a frozen variable and then stores into it (a running
// statistic): d loss / d w is c as loaded (ones), whatever the store writes.
module {
  tg.variable @w trainable init(normal, 1.0) : tensor<3xf32>
  tg.variable @c init(ones) : tensor<3xf32>
  func.func @loss() -> (tensor<f32>, tensor<i32>) {
    %w = tg.load @w : tensor<3xf32>
    %c = tg.load @c : tensor<3xf32>
    %p = tg.mul %w, %c : tensor<3xf32>
    %l = tg.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    %twice = tg.scale %w by 2.0 : tensor<3xf32>
    tg.store %twice, @c : tensor<3xf32>
    %n = tg.constant dense<3> : tensor<i32>
    return %l, %n : tensor<f32>, tensor<i32>
  }
}
