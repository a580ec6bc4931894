// A dropout of a softmax over a middle axis: still --attention-dropout's
// after the softmax is written between transposes (dropout-rates.test).
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32},
                   tg.schedule = {name = "warmup", d_model = 8 : i64, warmup = 10 : i64}} {
  tg.variable @embedding trainable init(normal, 0.35) : tensor<12x8xf32>
  func.func @loss(%tin: tensor<2x5xi32> {tg.name = "target_in_ids"},
                  %tout: tensor<2x5xi32> {tg.name = "target_out_ids"},
                  %key: tensor<2xi32> {tg.name = "dropout_key"}) -> (tensor<f32>, tensor<i32>) {
    %e = tg.load @embedding : tensor<12x8xf32>
    %x = tg.embedding %e[%tin] : tensor<12x8xf32>, tensor<2x5xi32> -> tensor<2x5x8xf32>
    %p = tg.softmax %x axis 1 : tensor<2x5x8xf32>
    %d = tg.dropout %p, %key rate 1.000000e-01 op_id 3 : tensor<2x5x8xf32>
    %logits = tg.matmul %d, %e transpose_rhs : tensor<2x5x8xf32>, tensor<12x8xf32> -> tensor<2x5x12xf32>
    %loss, %ntok = tg.cross_entropy %logits, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
    return %loss, %ntok : tensor<f32>, tensor<i32>
  }
}
