// tiny-lm.mlir (test/lit/passes/Inputs) as a pre-LN stack with RMSNorm: two
// blocks x + dropout(ffn(rms_norm(x))), then a final rms_norm. The first
// norm reads the embedding (no residual sum: it stays a tg.rms_norm); the
// second reads x1, which the second block's residual adds to as well, so
// it fuses keeping the sum; the final one reads the last sum alone, the
// post-LN pattern norm(x + dropout(y)). The kernels and gradient rules of
// all three against the interpreter (compiled-vs-interp.test,
// mixed-precision.test), and the fused step against the unfused one
// (test/lit/passes/fuse-rms-norm.test).
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.35) : tensor<12x8xf32>
  tg.variable @block0.norm.gamma trainable init(ones) : tensor<8xf32>
  tg.variable @block0.w1 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @block0.w2 trainable init(xavier_uniform) : tensor<16x8xf32>
  tg.variable @block1.norm.gamma trainable init(ones) : tensor<8xf32>
  tg.variable @block1.w1 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @block1.w2 trainable init(xavier_uniform) : tensor<16x8xf32>
  tg.variable @final_norm.gamma trainable init(ones) : tensor<8xf32>
  func.func @loss(%src: tensor<2x5xi32> {tg.name = "source_ids"},
                  %tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"},
                  %key: tensor<2xi32> {tg.name = "dropout_key"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %g0 = tg.load @block0.norm.gamma : tensor<8xf32>
    %w01 = tg.load @block0.w1 : tensor<8x16xf32>
    %w02 = tg.load @block0.w2 : tensor<16x8xf32>
    %g1 = tg.load @block1.norm.gamma : tensor<8xf32>
    %w11 = tg.load @block1.w1 : tensor<8x16xf32>
    %w12 = tg.load @block1.w2 : tensor<16x8xf32>
    %gf = tg.load @final_norm.gamma : tensor<8xf32>
    %x = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %x0 = tg.dropout %x, %key rate 1.000000e-01 op_id 0 : tensor<2x5x8xf32>
    %n0 = tg.rms_norm %x0, %g0 eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %h0 = tg.matmul %n0, %w01 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %a0 = tg.relu %h0 : tensor<2x5x16xf32>
    %f0 = tg.matmul %a0, %w02 : tensor<2x5x16xf32>, tensor<16x8xf32> -> tensor<2x5x8xf32>
    %fd0 = tg.dropout %f0, %key rate 1.000000e-01 op_id 1 : tensor<2x5x8xf32>
    %x1 = tg.add %x0, %fd0 : tensor<2x5x8xf32>
    %n1 = tg.rms_norm %x1, %g1 eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %h1 = tg.matmul %n1, %w11 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %a1 = tg.relu %h1 : tensor<2x5x16xf32>
    %f1 = tg.matmul %a1, %w12 : tensor<2x5x16xf32>, tensor<16x8xf32> -> tensor<2x5x8xf32>
    %fd1 = tg.dropout %f1, %key rate 1.000000e-01 op_id 2 : tensor<2x5x8xf32>
    %x2 = tg.add %x1, %fd1 : tensor<2x5x8xf32>
    %y = tg.rms_norm %x2, %gf eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %logits = tg.matmul %y, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
