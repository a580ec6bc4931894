// tiny-lm.mlir (test/lit/passes/Inputs) with a trainable variable that
// does not reach the loss (tgc warns of it): its gradient is a constant
// zero outside the summed gradient region, and AdamW's decay alone
// changes it.
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.35) : tensor<12x8xf32>
  tg.variable @ffn.w1 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @ffn.w2 trainable init(xavier_uniform) : tensor<16x8xf32>
  tg.variable @norm.gamma trainable init(ones) : tensor<8xf32>
  tg.variable @norm.beta trainable init(zeros) : tensor<8xf32>
  tg.variable @unused trainable init(normal, 0.5) : tensor<6x4xf32>
  func.func @loss(%src: tensor<2x5xi32> {tg.name = "source_ids"},
                  %tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"},
                  %key: tensor<2xi32> {tg.name = "dropout_key"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %w1 = tg.load @ffn.w1 : tensor<8x16xf32>
    %w2 = tg.load @ffn.w2 : tensor<16x8xf32>
    %g = tg.load @norm.gamma : tensor<8xf32>
    %b = tg.load @norm.beta : tensor<8xf32>
    %x = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %x0 = tg.dropout %x, %key rate 1.000000e-01 op_id 0 : tensor<2x5x8xf32>
    %h = tg.matmul %x0, %w1 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %a = tg.relu %h : tensor<2x5x16xf32>
    %f = tg.matmul %a, %w2 : tensor<2x5x16xf32>, tensor<16x8xf32> -> tensor<2x5x8xf32>
    %fd = tg.dropout %f, %key rate 1.000000e-01 op_id 1 : tensor<2x5x8xf32>
    %r = tg.add %x0, %fd : tensor<2x5x8xf32>
    %y0 = tg.layer_norm %r, %g, %b eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %y = tg.add %y0, %r : tensor<2x5x8xf32>
    %logits = tg.matmul %y, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
