// A language model whose loss keeps state in a `cache` variable, which is
// the incremental decoder's (tg-derive-decoder): the program has no place
// for it outside @encode and @decode_step (its reads and writes went to the
// state's first bytes, over the embedding, at every step).
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.3) : tensor<12x8xf32>
  tg.variable @scale init(ones) : tensor<8xf32>
  tg.variable @running cache init(zeros) : tensor<8xf32>
  func.func @loss(%tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %g = tg.load @scale : tensor<8xf32>
    %r = tg.load @running : tensor<8xf32>
    %s = tg.add %g, %r : tensor<8xf32>
    %x0 = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %rb = tg.broadcast %r dims [2] : tensor<8xf32> -> tensor<2x5x8xf32>
    %x = tg.add %x0, %rb : tensor<2x5x8xf32>
    %logits = tg.matmul %x, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 0.0 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    tg.store %s, @running : tensor<8xf32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
