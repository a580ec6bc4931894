// Six linears with every epilogue activation, in the interpreter at bf16
// (interp-weight-bias-grad.test).
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.35) : tensor<12x8xf32>
  tg.variable @ffn.w2 trainable init(xavier_uniform) : tensor<16x8xf32>
  tg.variable @norm.gamma trainable init(ones) : tensor<8xf32>
  tg.variable @norm.beta trainable init(zeros) : tensor<8xf32>
  tg.variable @w0 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @b0 trainable init(normal, 0.3) : tensor<16xf32>
  tg.variable @w1 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @b1 trainable init(normal, 0.3) : tensor<16xf32>
  tg.variable @w2 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @b2 trainable init(normal, 0.3) : tensor<16xf32>
  tg.variable @w3 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @b3 trainable init(normal, 0.3) : tensor<16xf32>
  tg.variable @w4 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @b4 trainable init(normal, 0.3) : tensor<16xf32>
  tg.variable @w5 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @b5 trainable init(normal, 0.3) : tensor<16xf32>
  func.func @loss(%src: tensor<2x5xi32> {tg.name = "source_ids"},
                  %tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"},
                  %key: tensor<2xi32> {tg.name = "dropout_key"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %wout = tg.load @ffn.w2 : tensor<16x8xf32>
    %g = tg.load @norm.gamma : tensor<8xf32>
    %b = tg.load @norm.beta : tensor<8xf32>
    %x0 = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %x = tg.dropout %x0, %key rate 1.000000e-01 op_id 0 : tensor<2x5x8xf32>
    %w0 = tg.load @w0 : tensor<8x16xf32>
    %b0 = tg.load @b0 : tensor<16xf32>
    %m0 = tg.matmul %x, %w0 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %bb0 = tg.broadcast %b0 dims [2] : tensor<16xf32> -> tensor<2x5x16xf32>
    %s0 = tg.add %m0, %bb0 : tensor<2x5x16xf32>
    %a0 = tg.relu %s0 : tensor<2x5x16xf32>
    %w1 = tg.load @w1 : tensor<8x16xf32>
    %b1 = tg.load @b1 : tensor<16xf32>
    %m1 = tg.matmul %x, %w1 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %bb1 = tg.broadcast %b1 dims [2] : tensor<16xf32> -> tensor<2x5x16xf32>
    %s1 = tg.add %m1, %bb1 : tensor<2x5x16xf32>
    %a1 = tg.gelu %s1 : tensor<2x5x16xf32>
    %w2 = tg.load @w2 : tensor<8x16xf32>
    %b2 = tg.load @b2 : tensor<16xf32>
    %m2 = tg.matmul %x, %w2 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %bb2 = tg.broadcast %b2 dims [2] : tensor<16xf32> -> tensor<2x5x16xf32>
    %s2 = tg.add %m2, %bb2 : tensor<2x5x16xf32>
    %a2 = tg.gelu_tanh %s2 : tensor<2x5x16xf32>
    %w3 = tg.load @w3 : tensor<8x16xf32>
    %b3 = tg.load @b3 : tensor<16xf32>
    %m3 = tg.matmul %x, %w3 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %bb3 = tg.broadcast %b3 dims [2] : tensor<16xf32> -> tensor<2x5x16xf32>
    %s3 = tg.add %m3, %bb3 : tensor<2x5x16xf32>
    %a3 = tg.tanh %s3 : tensor<2x5x16xf32>
    %w4 = tg.load @w4 : tensor<8x16xf32>
    %b4 = tg.load @b4 : tensor<16xf32>
    %m4 = tg.matmul %x, %w4 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %bb4 = tg.broadcast %b4 dims [2] : tensor<16xf32> -> tensor<2x5x16xf32>
    %s4 = tg.add %m4, %bb4 : tensor<2x5x16xf32>
    %a4 = tg.sigmoid %s4 : tensor<2x5x16xf32>
    %w5 = tg.load @w5 : tensor<8x16xf32>
    %b5 = tg.load @b5 : tensor<16xf32>
    %m5 = tg.matmul %x, %w5 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %bb5 = tg.broadcast %b5 dims [2] : tensor<16xf32> -> tensor<2x5x16xf32>
    %s5 = tg.add %m5, %bb5 : tensor<2x5x16xf32>
    %sg5 = tg.sigmoid %s5 : tensor<2x5x16xf32>
    %a5 = tg.mul %s5, %sg5 : tensor<2x5x16xf32>
    %acc1 = tg.add %a0, %a1 : tensor<2x5x16xf32>
    %acc2 = tg.add %acc1, %a2 : tensor<2x5x16xf32>
    %acc3 = tg.add %acc2, %a3 : tensor<2x5x16xf32>
    %acc4 = tg.add %acc3, %a4 : tensor<2x5x16xf32>
    %acc5 = tg.add %acc4, %a5 : tensor<2x5x16xf32>
    %f = tg.matmul %acc5, %wout : tensor<2x5x16xf32>, tensor<16x8xf32> -> tensor<2x5x8xf32>
    %r = tg.add %x, %f : tensor<2x5x8xf32>
    %y = tg.layer_norm %r, %g, %b eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %logits = tg.matmul %y, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
