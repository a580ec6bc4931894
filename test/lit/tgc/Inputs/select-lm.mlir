// tiny-lm.mlir (test/lit/passes/Inputs) whose FFN selects and compares:
// maximum, minimum, pow, the comparisons and where, splat constants read
// as literals by the loops (and one read by a broadcast, stored), and an
// iota-like table: their generated loops and gradient rules against the
// interpreter (compiled-vs-interp.test).
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.35) : tensor<12x8xf32>
  tg.variable @ffn.w1 trainable init(xavier_uniform) : tensor<8x16xf32>
  tg.variable @ffn.w2 trainable init(xavier_uniform) : tensor<16x8xf32>
  tg.variable @norm.gamma trainable init(ones) : tensor<8xf32>
  tg.variable @norm.beta trainable init(zeros) : tensor<8xf32>
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
    %pos = tg.constant dense<[[0.0], [0.1], [0.2], [0.3], [0.4]]> : tensor<5x1xf32>
    %posb = tg.broadcast %pos dims [1, 2] : tensor<5x1xf32> -> tensor<2x5x8xf32>
    %xp = tg.add %x, %posb : tensor<2x5x8xf32>
    %x0 = tg.dropout %xp, %key rate 1.000000e-01 op_id 0 : tensor<2x5x8xf32>
    %h = tg.matmul %x0, %w1 : tensor<2x5x8xf32>, tensor<8x16xf32> -> tensor<2x5x16xf32>
    %half = tg.constant dense<0.05> : tensor<2x5x16xf32>
    %zero = tg.constant dense<0.0> : tensor<2x5x16xf32>
    %mx = tg.maximum %h, %half : tensor<2x5x16xf32>
    %sq = tg.pow %h, 2.0 : tensor<2x5x16xf32>
    %mn = tg.minimum %sq, %mx : tensor<2x5x16xf32>
    %pos16 = tg.greater %h, %zero : tensor<2x5x16xf32>
    %leak = tg.scale %h by 0.1 : tensor<2x5x16xf32>
    %sel = tg.where %pos16, %mn, %leak : tensor<2x5x16xf32>
    %lt = tg.less %h, %half : tensor<2x5x16xf32>
    %le = tg.less_equal %h, %half : tensor<2x5x16xf32>
    %ge = tg.greater_equal %h, %zero : tensor<2x5x16xf32>
    %eq = tg.equal %h, %h : tensor<2x5x16xf32>
    %ne = tg.not_equal %h, %zero : tensor<2x5x16xf32>
    %m1 = tg.add %lt, %le : tensor<2x5x16xf32>
    %m2 = tg.add %ge, %eq : tensor<2x5x16xf32>
    %m3 = tg.add %m1, %m2 : tensor<2x5x16xf32>
    %m4 = tg.mul %m3, %ne : tensor<2x5x16xf32>
    %cube = tg.pow %h, 3.0 : tensor<2x5x16xf32>
    %mc = tg.mul %m4, %cube : tensor<2x5x16xf32>
    %a = tg.add %sel, %mc : tensor<2x5x16xf32>
    %f = tg.matmul %a, %w2 : tensor<2x5x16xf32>, tensor<16x8xf32> -> tensor<2x5x8xf32>
    %fd = tg.dropout %f, %key rate 1.000000e-01 op_id 1 : tensor<2x5x8xf32>
    %r = tg.add %x0, %fd : tensor<2x5x8xf32>
    %y = tg.layer_norm %r, %g, %b eps 1.0e-06 : tensor<2x5x8xf32>, tensor<8xf32>
    %logits = tg.matmul %y, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
