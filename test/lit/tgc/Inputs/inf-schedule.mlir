module attributes {tg.schedule = {name = "warmup", d_model = 32 : i64, warmup = 100 : i64, factor = 0x7FF0000000000000 : f64}} {
tg.variable @w trainable init(normal, 0.02) : tensor<4xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
}
