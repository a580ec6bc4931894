// tanh-lm.mlir's shape with one causal self-attention layer whose queries
// and keys are turned by tg.rotary: the generated program's rotary calls
// (forward and the inverse of the backward) against the interpreter
// (compiled-vs-interp.test); the chain still fuses into tg.attention.
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.35) : tensor<12x8xf32>
  tg.variable @attention.wq trainable init(xavier_uniform) : tensor<8x8xf32>
  tg.variable @attention.wk trainable init(xavier_uniform) : tensor<8x8xf32>
  tg.variable @attention.wv trainable init(xavier_uniform) : tensor<8x8xf32>
  tg.variable @attention.wo trainable init(xavier_uniform) : tensor<8x8xf32>
  tg.variable @norm.gamma trainable init(ones) : tensor<8xf32>
  tg.variable @norm.beta trainable init(zeros) : tensor<8xf32>
  func.func @loss(%src: tensor<2x5xi32> {tg.name = "source_ids"},
                  %tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"},
                  %key: tensor<2xi32> {tg.name = "dropout_key"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %wq = tg.load @attention.wq : tensor<8x8xf32>
    %wk = tg.load @attention.wk : tensor<8x8xf32>
    %wv = tg.load @attention.wv : tensor<8x8xf32>
    %wo = tg.load @attention.wo : tensor<8x8xf32>
    %g = tg.load @norm.gamma : tensor<8xf32>
    %b = tg.load @norm.beta : tensor<8xf32>
    %x = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %q0 = tg.matmul %x, %wq : tensor<2x5x8xf32>, tensor<8x8xf32> -> tensor<2x5x8xf32>
    %q1 = tg.reshape %q0 : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
    %q2 = tg.transpose %q1 permutation [0, 2, 1, 3] : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
    %q = tg.rotary %q2 base 1.000000e+01 : tensor<2x2x5x4xf32>
    %k0 = tg.matmul %x, %wk : tensor<2x5x8xf32>, tensor<8x8xf32> -> tensor<2x5x8xf32>
    %k1 = tg.reshape %k0 : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
    %k2 = tg.transpose %k1 permutation [0, 2, 1, 3] : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
    %k = tg.rotary %k2 base 1.000000e+01 : tensor<2x2x5x4xf32>
    %v0 = tg.matmul %x, %wv : tensor<2x5x8xf32>, tensor<8x8xf32> -> tensor<2x5x8xf32>
    %v1 = tg.reshape %v0 : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
    %v = tg.transpose %v1 permutation [0, 2, 1, 3] : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
    %c = tg.causal_mask : tensor<5x5xf32>
    %s = tg.matmul %q, %k transpose_rhs : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32> -> tensor<2x2x5x5xf32>
    %t = tg.scale %s by 5.000000e-01 : tensor<2x2x5x5xf32>
    %m = tg.broadcast %c dims [2, 3] : tensor<5x5xf32> -> tensor<2x2x5x5xf32>
    %u = tg.add %t, %m : tensor<2x2x5x5xf32>
    %p = tg.softmax %u axis 3 : tensor<2x2x5x5xf32>
    %pd = tg.dropout %p, %key rate 1.000000e-01 op_id 0 : tensor<2x2x5x5xf32>
    %o = tg.matmul %pd, %v : tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32> -> tensor<2x2x5x4xf32>
    %o1 = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x2x5x4xf32> -> tensor<2x5x2x4xf32>
    %o2 = tg.reshape %o1 : tensor<2x5x2x4xf32> -> tensor<2x5x8xf32>
    %f = tg.matmul %o2, %wo : tensor<2x5x8xf32>, tensor<8x8xf32> -> tensor<2x5x8xf32>
    %r = tg.add %x, %f : tensor<2x5x8xf32>
    %y = tg.layer_norm %r, %g, %b eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %logits = tg.matmul %y, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
