// A query row whose every key is padding (a padding row of a batch): the
// kernels add the -1e9 mask in float, where -1e9 + s is -1e9 for |s| < 32,
// so the keys weigh alike and the output is the mean of the values, which
// result 1 computes directly.
module {
  func.func @masked_row() -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>) {
    %q = tg.constant dense<[[[[2.0, -1.0]]]]> : tensor<1x1x1x2xf32>
    %k = tg.constant dense<[[[[1.0, 0.5], [-1.0, 2.0], [0.5, 0.5]]]]> : tensor<1x1x3x2xf32>
    %v = tg.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [3.0, -3.0]]]]> : tensor<1x1x3x2xf32>
    %ids = tg.constant dense<[[0, 0, 0]]> : tensor<1x3xi32>
    %pad = tg.padding_mask %ids pad_id 0 : tensor<1x3xi32> -> tensor<1x3xf32>
    %o, %lse = tg.attention %q, %k, %v mask %pad scale 1.0 dropout 0.0 op_id 1
      : (tensor<1x1x1x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x3xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x1xf32>)
    %mean = tg.reduce_mean %v dims [2] : tensor<1x1x3x2xf32> -> tensor<1x1x2xf32>
    return %o, %mean : tensor<1x1x1x2xf32>, tensor<1x1x2xf32>
  }
}
