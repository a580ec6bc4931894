// A loss through a fused attention with dropout (a .mlir written after
// fusion): --check-gradients keeps that dropout, whose mask is the same in
// every probe.
module {
  tg.variable @wq trainable init(normal, 0.5) : tensor<1x1x3x2xf32>
  tg.variable @wk trainable init(normal, 0.5) : tensor<1x1x3x2xf32>
  func.func @loss(%key: tensor<2xi32> {tg.name = "dropout_key"}) -> (tensor<f32>, tensor<i32>) {
    %q = tg.load @wq : tensor<1x1x3x2xf32>
    %k = tg.load @wk : tensor<1x1x3x2xf32>
    %o, %lse = tg.attention %q, %k, %k key %key scale 0.707106769 dropout 0.3 op_id 1
      : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<2xi32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3xf32>)
    %s = tg.reduce_sum %o dims [0, 1, 2, 3] : tensor<1x1x3x2xf32> -> tensor<f32>
    %n = tg.constant dense<6> : tensor<i32>
    return %s, %n : tensor<f32>, tensor<i32>
  }
}
