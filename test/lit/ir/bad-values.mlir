// Values the verifier refuses because later stages cannot handle them: zero-
// size or absurdly large dimensions (passes divide by dimension sizes and
// compute element counts), more than 8 dimensions (the kernels' shape
// arrays), dropout op ids beyond 32 bits (the generated code
// holds them in a uint32_t) and non-finite numbers (the generated C++ spells
// them as literals).
// RUN: tgc-opt %s -split-input-file -verify-diagnostics

func.func @zero_operand(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error @+1 {{operand #0 has type 'tensor<0x4xf32>': every dimension of a tg tensor must be >= 1}}
  %y = tg.exp %x : tensor<0x4xf32>
  return %y : tensor<0x4xf32>
}

// -----

func.func @zero_result() -> tensor<0x16xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<0x16xf32>': every dimension of a tg tensor must be >= 1}}
  %pe = tg.positional_encoding : tensor<0x16xf32>
  return %pe : tensor<0x16xf32>
}

// -----

// expected-error @+1 {{'tg.variable' op type 'tensor<16x0xf32>': every dimension of a tg tensor must be >= 1}}
tg.variable @w trainable init(normal, 0.02) : tensor<16x0xf32>

// -----

// expected-error @+1 {{'tg.variable' op type 'tensor<1048576x1048577xf32>': a tg tensor holds at most 2^40 elements}}
tg.variable @w trainable init(normal, 0.02) : tensor<1048576x1048577xf32>

// -----

func.func @rank_nine(%x: tensor<2x1x1x1x1x1x1x1x2xf32>) -> tensor<2x1x1x1x1x1x1x1x2xf32> {
  // expected-error @+1 {{operand #0 has type 'tensor<2x1x1x1x1x1x1x1x2xf32>': a tg tensor has at most 8 dimensions}}
  %y = tg.transpose %x permutation [8, 7, 6, 5, 4, 3, 2, 1, 0] : tensor<2x1x1x1x1x1x1x1x2xf32> -> tensor<2x1x1x1x1x1x1x1x2xf32>
  return %y : tensor<2x1x1x1x1x1x1x1x2xf32>
}

// -----

// expected-error @+1 {{'tg.variable' op type 'tensor<1x1x1x1x1x1x1x1x1xf32>': a tg tensor has at most 8 dimensions}}
tg.variable @w trainable init(normal, 0.02) : tensor<1x1x1x1x1x1x1x1x1xf32>

// -----

func.func @rank_eight(%x: tensor<2x1x1x1x1x1x1x2xf32>) -> tensor<2x1x1x1x1x1x1x2xf32> {
  %y = tg.transpose %x permutation [7, 6, 5, 4, 3, 2, 1, 0] : tensor<2x1x1x1x1x1x1x2xf32> -> tensor<2x1x1x1x1x1x1x2xf32>
  return %y : tensor<2x1x1x1x1x1x1x2xf32>
}

// -----

// expected-error @+1 {{'tg.variable' op name "w\FF\FE" is not UTF-8: names key the tensors of checkpoints, which hold UTF-8}}
tg.variable @"w\FF\FE" trainable init(normal, 0.02) : tensor<4xf32>

// -----

// expected-error @+1 {{'tg.variable' op name holds a NUL byte, which would end it in the program's table of variables}}
tg.variable @"w\00x" trainable init(normal, 0.02) : tensor<4xf32>

// -----

func.func @huge(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  // expected-error @+1 {{operand #0 has type 'tensor<4294967296x4294967296xf32>': a tg tensor holds at most 2^40 elements}}
  %y = tg.exp %x : tensor<4294967296x4294967296xf32>
  return %y : tensor<4294967296x4294967296xf32>
}

// -----

// The largest op_id is 2^32 - 1.
func.func @dropout_op_id_max(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %y = tg.dropout %x, %key rate 1.000000e-01 op_id 4294967295 : tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

func.func @dropout_op_id(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{op_id must fit in 32 bits (at most 4294967295) but is 4294967296}}
  %y = tg.dropout %x, %key rate 1.000000e-01 op_id 4294967296 : tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

func.func @dropout_grad_op_id(%dy: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{op_id must fit in 32 bits (at most 4294967295) but is 9223372036854775807}}
  %dx = tg.dropout_grad %dy, %key rate 1.000000e-01 op_id 9223372036854775807 : tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// -----

func.func @attention_op_id(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x6xf32>) -> tensor<2x4x5x6xf32> {
  // expected-error @+1 {{op_id must fit in 32 bits}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 4294967296 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  return %o : tensor<2x4x5x6xf32>
}

// -----

func.func @inf_scale(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{factor must be finite but is inf}}
  %y = tg.scale %x by 0x7F800000 : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @nan_constant() -> tensor<3xf32> {
  // expected-error @+1 {{attribute 'value' holds nan at element 1: tg constants must be finite}}
  %c = tg.constant dense<[1.0, 0x7FC00000, 2.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

func.func @inf_splat() -> tensor<3xf32> {
  // expected-error @+1 {{attribute 'value' holds -inf at element 0: tg constants must be finite}}
  %c = tg.constant dense<0xFF800000> : tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// expected-error @+1 {{tg.schedule factor = 0x7FF0000000000000 : f64: must be finite}}
module attributes {tg.schedule = {name = "warmup", d_model = 32 : i64, warmup = 100 : i64, factor = 0x7FF0000000000000 : f64}} {
}

// -----

// expected-error @+1 {{tg.schedule warmup = 0 : i64: must be positive}}
module attributes {tg.schedule = {name = "warmup", d_model = 32 : i64, warmup = 0 : i64, factor = 1.0 : f64}} {
}

// -----

// expected-error @+1 {{tg.optimizer beta1 = 1.500000e+00 : f32: must be in [0, 1)}}
module attributes {tg.optimizer = {name = "adam", beta1 = 1.5 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-09 : f32}} {
}

// -----

// expected-error @+1 {{tg.optimizer epsilon = 0.000000e+00 : f32: must be positive}}
module attributes {tg.optimizer = {name = "adam", beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 0.0 : f32}} {
}
