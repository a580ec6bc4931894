// The loss of w is sum(w * stop_gradient(w)): tg-autodiff gives w, the
// derivative is 2w, so --check-gradients reports @w.
module {
  tg.variable @w trainable init(normal, 1.0) : tensor<2x3xf32>
  tg.variable @u trainable init(normal, 1.0) : tensor<2x3xf32>
  func.func @loss() -> (tensor<f32>, tensor<i32>) {
    %w = tg.load @w : tensor<2x3xf32>
    %u = tg.load @u : tensor<2x3xf32>
    %s = tg.stop_gradient %w : tensor<2x3xf32>
    %p = tg.mul %w, %s : tensor<2x3xf32>
    %q = tg.mul %p, %u : tensor<2x3xf32>
    %l = tg.reduce_sum %q dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
    %n = tg.constant dense<6> : tensor<i32>
    return %l, %n : tensor<f32>, tensor<i32>
  }
}
