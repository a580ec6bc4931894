// A language model with an auxiliary head of 4 classes beside its 12-token
// vocabulary: the program's vocabulary was whichever loss came last (4),
// and its decoders and validation read 4-wide rows of 12-wide logits.
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.3) : tensor<12x8xf32>
  tg.variable @aux trainable init(xavier_uniform) : tensor<8x4xf32>
  func.func @loss(%tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %a = tg.load @aux : tensor<8x4xf32>
    %x = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %logits = tg.matmul %x, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 0.0 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    %al = tg.matmul %x, %a : tensor<2x5x8xf32>, tensor<8x4xf32> -> tensor<2x5x4xf32>
    %zero = tg.constant dense<0> : tensor<2x5xi32>
    %aloss, %antok = tg.cross_entropy %al, %zero smoothing 0.0 ignore 0 : tensor<2x5x4xf32>, tensor<2x5xi32>
    %w = tg.constant dense<0.5> : tensor<f32>
    %t = tg.mul %aloss, %w : tensor<f32>
    %sum = tg.add %loss, %t : tensor<f32>
    return %sum, %ntok : tensor<f32>, tensor<i32>
  }
}
