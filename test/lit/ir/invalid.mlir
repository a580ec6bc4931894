// Verifier rules of the tg dialect: one case per rule, each rejected with the
// rule's message. Sections follow ir/TgOps.td's families: shared rules, state ops,
// embedding, matmul, elementwise, shapes/reductions, slices/concatenation/gathers,
// softmax/layernorm/rmsnorm/dropout, masks/positions, loss, fused attention,
// residual norms, post-autodiff fusion (elementwise groups, linear), adam and multi-adam.
// RUN: tgc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Shared rules (TensorRules trait, ODS element-type constraints)
//===----------------------------------------------------------------------===//

// TensorRules: a dynamically shaped operand is rejected.
func.func @dynamic_operand(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{operand #0 has type 'tensor<?x4xf32>': tg tensors must have a static shape}}
  %y = tg.exp %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// TensorRules: a dynamically shaped result is rejected.
func.func @dynamic_result() -> tensor<?x16xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<?x16xf32>': tg tensors must have a static shape}}
  %pe = tg.positional_encoding : tensor<?x16xf32>
  return %pe : tensor<?x16xf32>
}

// -----

// ODS element type: matmul needs f32 operands, not i32.
func.func @matmul_i32(%x: tensor<2x7x16xi32>, %w: tensor<16x64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<2x7x16xi32>'}}
  %y = tg.matmul %x, %w : tensor<2x7x16xi32>, tensor<16x64xf32> -> tensor<2x7x64xf32>
  return %y : tensor<2x7x64xf32>
}

// -----

// ODS element type: token ids are i32, not f32.
func.func @embedding_f32_ids(%table: tensor<100x16xf32>, %ids: tensor<2x7xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer values, but got 'tensor<2x7xf32>'}}
  %x = tg.embedding %table[%ids] : tensor<100x16xf32>, tensor<2x7xf32> -> tensor<2x7x16xf32>
  return %x : tensor<2x7x16xf32>
}

// -----

// ODS element type: tg.load's result is f32 or i32, not f16.
tg.variable @w init(zeros) : tensor<16x16xf32>
func.func @load_f16() -> tensor<16x16xf16> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 32-bit signless integer values, but got 'tensor<16x16xf16>'}}
  %w = tg.load @w : tensor<16x16xf16>
  return %w : tensor<16x16xf16>
}

// -----

// ODS type: the dropout key is a tensor<2xi32> (seed, step).
func.func @dropout_bad_key(%x: tensor<2x7x16xf32>, %key: tensor<3xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{operand #1 must be tensor<2xi32> dropout key (seed, step), but got 'tensor<3xi32>'}}
  %y = "tg.dropout"(%x, %key) <{rate = 1.0e-01 : f32, op_id = 3 : i64}> : (tensor<2x7x16xf32>, tensor<3xi32>) -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// State ops: tg.variable
//===----------------------------------------------------------------------===//

// tg.variable: the type must be a statically shaped tensor.
// expected-error @+1 {{type must be a statically shaped tensor but is 'tensor<?x16xf32>'}}
tg.variable @w init(zeros) : tensor<?x16xf32>

// -----

// tg.variable: the type must be a tensor at all.
// expected-error @+1 {{type must be a statically shaped tensor but is 'f32'}}
tg.variable @lr init(zeros) : f32

// -----

// tg.variable: the element type is f32 or i32.
// expected-error @+1 {{element type must be f32 or i32 but is 'f16'}}
tg.variable @w init(zeros) : tensor<16x16xf16>

// -----

// tg.variable: init normal (and uniform) needs a scale.
// expected-error @+1 {{init normal needs a scale, e.g. init(normal, 0.02)}}
tg.variable @embedding trainable init(normal) : tensor<100x16xf32>

// -----

// tg.variable: init zeros (ones, xavier_uniform) takes no scale.
// expected-error @+1 {{init zeros takes no scale but has 0.1}}
tg.variable @adam.m.w init(zeros, 1.000000e-01) : tensor<16x16xf32>

// -----

// tg.variable: the init scale is positive.
// expected-error @+1 {{init scale must be positive and finite but is -0.1}}
tg.variable @bias trainable init(uniform, -0.1) : tensor<16xf32>

// -----

// tg.variable: an init scale whose samples overflow f32 (the first step
// read infinities).
// expected-error @+1 {{init scale 1e+300 is too large for f32 parameters: its samples would overflow to infinity}}
tg.variable @w trainable init(normal, 1.0e300) : tensor<16xf32>

// -----

// tg.variable: xavier_uniform needs a rank >= 2 (fan-in, fan-out).
// expected-error @+1 {{xavier_uniform needs rank >= 2 (fan-in, fan-out) but the shape is [16]}}
tg.variable @bias trainable init(xavier_uniform) : tensor<16xf32>

// -----

// tg.variable: an i32 variable can only be initialized with zeros or ones.
// expected-error @+1 {{an i32 variable can only be initialized with zeros or ones, not normal}}
tg.variable @step init(normal, 2.000000e-02) : tensor<i32>

// -----

// tg.variable: a trainable variable is f32.
// expected-error @+1 {{a trainable variable must be f32 but is 'i32'}}
tg.variable @step trainable init(zeros) : tensor<i32>

// -----

// tg.variable: HasParent<ModuleOp>, not inside a function.
func.func @variable_in_func() {
  // expected-error @+1 {{expects parent op 'builtin.module'}}
  tg.variable @w init(zeros) : tensor<16x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// State ops: tg.load, tg.store, tg.constant
//===----------------------------------------------------------------------===//

// tg.load: the symbol must be defined.
func.func @load_undefined() -> tensor<16x16xf32> {
  // expected-error @+1 {{variable @missing is not defined}}
  %w = tg.load @missing : tensor<16x16xf32>
  return %w : tensor<16x16xf32>
}

// -----

// tg.load: the symbol must name a tg.variable, not a func.
func.func private @w_q()
func.func @load_func() -> tensor<16x16xf32> {
  // expected-error @+1 {{variable @w_q names a 'func.func', not a tg.variable}}
  %w = tg.load @w_q : tensor<16x16xf32>
  return %w : tensor<16x16xf32>
}

// -----

// tg.load: the result type is the variable's type.
tg.variable @w_q trainable init(xavier_uniform) : tensor<16x16xf32>
func.func @load_type_mismatch() -> tensor<16x8xf32> {
  // expected-error @+1 {{variable @w_q has type 'tensor<16x16xf32>' but the op uses it as 'tensor<16x8xf32>'}}
  %w = tg.load @w_q : tensor<16x8xf32>
  return %w : tensor<16x8xf32>
}

// -----

// tg.variable: a decoding cache is not trained.
// expected-error @+1 {{a decoding cache cannot be trainable}}
tg.variable @decode.keys trainable cache init(zeros) : tensor<2x4x7x8xf32>

// -----

// tg.store_slice: the axis is one of the value's.
tg.variable @decode.keys cache init(zeros) : tensor<2x4x7x8xf32>
func.func @store_slice_axis(%k: tensor<2x4x1x8xf32>, %position: tensor<i32>) {
  // expected-error @+1 {{axis 4 is outside the value's [2, 4, 1, 8]}}
  tg.store_slice %k, @decode.keys[%position] axis 4 : tensor<2x4x1x8xf32>
  return
}

// -----

// tg.store_slice: the value is the variable's shape but along the axis.
tg.variable @decode.keys cache init(zeros) : tensor<2x4x7x8xf32>
func.func @store_slice_shape(%k: tensor<2x4x1x6xf32>, %position: tensor<i32>) {
  // expected-error @+1 {{value [2, 4, 1, 6] is not a slice along axis 2 of @decode.keys 'tensor<2x4x7x8xf32>'}}
  tg.store_slice %k, @decode.keys[%position] axis 2 : tensor<2x4x1x6xf32>
  return
}

// -----

// tg.store and tg.store_slice: a trainable variable's one writer is the
// optimizer (a store in the loss raced the update, and @predict, cloned
// from the loss, changed the model as it decoded).
tg.variable @w trainable init(zeros) : tensor<4xf32>
func.func @store_trainable(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tg.store' op writes trainable variable @w, which only the optimizer updates (keep state in a variable without `trainable`)}}
  tg.store %x, @w : tensor<4xf32>
  return
}

// -----

tg.variable @w trainable init(zeros) : tensor<2x4xf32>
func.func @store_slice_trainable(%x: tensor<1x4xf32>, %position: tensor<i32>) {
  // expected-error @+1 {{'tg.store_slice' op writes trainable variable @w}}
  tg.store_slice %x, @w[%position] axis 0 : tensor<1x4xf32>
  return
}

// -----

// tg.store: the symbol must be defined.
func.func @store_undefined(%next: tensor<i32>) {
  // expected-error @+1 {{variable @step is not defined}}
  tg.store %next, @step : tensor<i32>
  return
}

// -----

// tg.store: the symbol must name a tg.variable, not a func.
func.func private @step()
func.func @store_func(%next: tensor<i32>) {
  // expected-error @+1 {{variable @step names a 'func.func', not a tg.variable}}
  tg.store %next, @step : tensor<i32>
  return
}

// -----

// tg.store: the stored value has the variable's type.
tg.variable @step init(zeros) : tensor<i32>
func.func @store_type_mismatch(%next: tensor<1xi32>) {
  // expected-error @+1 {{variable @step has type 'tensor<i32>' but the op uses it as 'tensor<1xi32>'}}
  tg.store %next, @step : tensor<1xi32>
  return
}

// -----

// tg.constant: AllTypesMatch<value, result>.
func.func @constant_type_mismatch() -> tensor<3x2xf32> {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %c = "tg.constant"() <{value = dense<1.0> : tensor<2x3xf32>}> : () -> tensor<3x2xf32>
  return %c : tensor<3x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

// tg.embedding: the table is a [V, D] matrix.
func.func @embedding_table_rank(%table: tensor<1600xf32>, %ids: tensor<2x7xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{table must have rank 2 but has shape [1600]}}
  %x = tg.embedding %table[%ids] : tensor<1600xf32>, tensor<2x7xi32> -> tensor<2x7x16xf32>
  return %x : tensor<2x7x16xf32>
}

// -----

// tg.embedding: the result is the ids' shape followed by D.
func.func @embedding_result_shape(%table: tensor<100x16xf32>, %ids: tensor<2x7xi32>) -> tensor<2x7x8xf32> {
  // expected-error @+1 {{result must have shape [2, 7, 16] but has [2, 7, 8]}}
  %x = tg.embedding %table[%ids] : tensor<100x16xf32>, tensor<2x7xi32> -> tensor<2x7x8xf32>
  return %x : tensor<2x7x8xf32>
}

// -----

// tg.embedding_grad: the result (the table's gradient) is a [V, D] matrix.
func.func @embedding_grad_result_rank(%dx: tensor<2x7x16xf32>, %ids: tensor<2x7xi32>) -> tensor<1600xf32> {
  // expected-error @+1 {{result must have rank 2 but has shape [1600]}}
  %dt = tg.embedding_grad %dx[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<1600xf32>
  return %dt : tensor<1600xf32>
}

// -----

// tg.embedding_grad: grad is the ids' shape followed by D.
func.func @embedding_grad_grad_shape(%dx: tensor<2x7x8xf32>, %ids: tensor<2x7xi32>) -> tensor<100x16xf32> {
  // expected-error @+1 {{grad must have shape [2, 7, 16] but has [2, 7, 8]}}
  %dt = tg.embedding_grad %dx[%ids] : tensor<2x7x8xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  return %dt : tensor<100x16xf32>
}

// -----

// tg.embedding_grad: the addend (the sum's other term) is the table's type.
func.func @embedding_grad_addend_type(%dx: tensor<2x7x16xf32>, %ids: tensor<2x7xi32>, %x: tensor<99x16xf32>) -> tensor<100x16xf32> {
  // expected-error @+1 {{addend must have the result's type 'tensor<100x16xf32>' but is 'tensor<99x16xf32>'}}
  %dt = tg.embedding_grad %dx[%ids] plus %x : tensor<2x7x16xf32>, tensor<2x7xi32>, tensor<99x16xf32> -> tensor<100x16xf32>
  return %dt : tensor<100x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

// tg.matmul: one element type for both operands.
func.func @matmul_mixed(%x: tensor<2x16xbf16>, %w: tensor<16x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{lhs and rhs must have one element type (both f32 or both bf16) but are 'bf16' and 'f32'}}
  %y = tg.matmul %x, %w : tensor<2x16xbf16>, tensor<16x64xf32> -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// tg.linear: one element type for input and weight.
func.func @linear_mixed(%x: tensor<2x16xf32>, %w: tensor<16x64xbf16>, %b: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{input and weight must have one element type (both f32 or both bf16) but are 'f32' and 'bf16'}}
  %y = tg.linear %x, %w, %b : tensor<2x16xf32>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// tg.linear: a bf16 bias only with bf16 operands.
func.func @linear_bf16_bias_f32_operands(%x: tensor<2x16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xbf16>) -> tensor<2x64xf32> {
  // expected-error @+1 {{a bf16 bias needs bf16 operands but input is 'tensor<2x16xf32>'}}
  %y = tg.linear %x, %w, %b : tensor<2x16xf32>, tensor<16x64xf32>, tensor<64xbf16> -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// tg.linear: a bf16 bias, and the pre-activation kept for the backward.
func.func @linear_bf16_bias_pre(%x: tensor<2x16xbf16>, %w: tensor<16x64xbf16>, %b: tensor<64xbf16>) -> tensor<2x64xbf16> {
  // expected-error @+1 {{a bf16 bias is for a linear without a pre_activation result}}
  %y, %pre = tg.linear %x, %w, %b gelu : tensor<2x16xbf16>, tensor<16x64xbf16>, tensor<64xbf16> -> tensor<2x64xbf16>, tensor<2x64xf32>
  return %y : tensor<2x64xbf16>
}

// -----

// tg.weight_bias_grad: one element type for input and grad.
func.func @weight_bias_grad_mixed(%x: tensor<14x16xf32>, %dy: tensor<14x64xbf16>) -> tensor<64xf32> {
  // expected-error @+1 {{input and grad must have one element type (both f32 or both bf16) but are 'f32' and 'bf16'}}
  %dw, %db = tg.weight_bias_grad %x, %dy : tensor<14x16xf32>, tensor<14x64xbf16> -> tensor<16x64xf32>, tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

// tg.weight_bias_grad: rows of input and grad, as many of each.
func.func @weight_bias_grad_rank(%x: tensor<2x7x16xf32>, %dy: tensor<14x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{input must have rank 2 but has shape [2, 7, 16]}}
  %dw, %db = tg.weight_bias_grad %x, %dy : tensor<2x7x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

func.func @weight_bias_grad_rows(%x: tensor<13x16xf32>, %dy: tensor<14x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{input and grad must have one row count but have [13, 16] and [14, 64]}}
  %dw, %db = tg.weight_bias_grad %x, %dy : tensor<13x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
  return %db : tensor<64xf32>
}

// -----

// tg.weight_bias_grad: the results are [K, N] and [N].
func.func @weight_bias_grad_shapes(%x: tensor<14x16xf32>, %dy: tensor<14x64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{bias_grad must have shape [64] but has [16]}}
  %dw, %db = tg.weight_bias_grad %x, %dy : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<16xf32>
  return %db : tensor<16xf32>
}

// -----

// tg.attention: query, key and value all f32 or all bf16.
func.func @attention_mixed(%q: tensor<2x4x5x8xbf16>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x6xbf16>) -> tensor<2x4x5x6xf32> {
  // expected-error @+1 {{query and key must have one element type (both f32 or both bf16) but are 'bf16' and 'f32'}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x8xbf16>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xbf16>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  return %o : tensor<2x4x5x6xf32>
}

// -----

// tg.to_bf16 rounds f32 only.
func.func @to_bf16_of_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float values}}
  %y = "tg.to_bf16"(%x) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// tg.matmul: both operands have rank >= 2.
func.func @matmul_vector(%x: tensor<16xf32>, %w: tensor<16x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{operands must have rank >= 2 but are [16] and [16, 64]}}
  %y = tg.matmul %x, %w : tensor<16xf32>, tensor<16x64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// tg.matmul: rhs is a matrix or has lhs's rank.
func.func @matmul_rhs_rank(%q: tensor<2x4x7x8xf32>, %k: tensor<4x8x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{rhs must be a matrix or have lhs's rank 4 but is [4, 8, 7]}}
  %s = tg.matmul %q, %k : tensor<2x4x7x8xf32>, tensor<4x8x7xf32> -> tensor<2x4x7x7xf32>
  return %s : tensor<2x4x7x7xf32>
}

// -----

// tg.matmul: batched operands have the same batch dimensions.
func.func @matmul_batch(%q: tensor<2x4x7x8xf32>, %k: tensor<2x2x9x8xf32>) -> tensor<2x4x7x9xf32> {
  // expected-error @+1 {{batch dimensions differ: lhs [2, 4, 7, 8], rhs [2, 2, 9, 8]}}
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x2x9x8xf32> -> tensor<2x4x7x9xf32>
  return %s : tensor<2x4x7x9xf32>
}

// -----

// tg.matmul: the contracted sizes agree (after the transposes).
func.func @matmul_contraction(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{contraction sizes differ: lhs [2, 7, 16] contracts 16, rhs [16, 64] contracts 64}}
  %y = tg.matmul %x, %w transpose_rhs : tensor<2x7x16xf32>, tensor<16x64xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.matmul: the result is [batch..., M, N].
func.func @matmul_result_shape(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{result must have shape [2, 7, 64] but has [2, 7, 16]}}
  %y = tg.matmul %x, %w : tensor<2x7x16xf32>, tensor<16x64xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.matmul_add: the product's checks, then an addend of the result's shape.
func.func @matmul_add_contraction(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>, %r: tensor<2x7x16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{contraction sizes differ: lhs [2, 7, 16] contracts 16, rhs [16, 64] contracts 64}}
  %y = tg.matmul_add %x, %w, %r transpose_rhs : tensor<2x7x16xf32>, tensor<16x64xf32>, tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

func.func @matmul_add_addend_shape(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>, %r: tensor<2x7x16xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{addend must have shape [2, 7, 64] but has [2, 7, 16]}}
  %y = tg.matmul_add %x, %w, %r : tensor<2x7x16xf32>, tensor<16x64xf32>, tensor<2x7x16xf32> -> tensor<2x7x64xf32>
  return %y : tensor<2x7x64xf32>
}

// -----

func.func @matmul_add_mixed(%x: tensor<2x16xbf16>, %w: tensor<16x64xf32>, %r: tensor<2x64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{lhs and rhs must have one element type (both f32 or both bf16) but are 'bf16' and 'f32'}}
  %y = tg.matmul_add %x, %w, %r : tensor<2x16xbf16>, tensor<16x64xf32>, tensor<2x64xf32> -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// ODS element type: the sum is f32, even of bf16 operands.
func.func @matmul_add_bf16_result(%x: tensor<2x16xbf16>, %w: tensor<16x64xbf16>, %r: tensor<2x64xbf16>) -> tensor<2x64xbf16> {
  // expected-error @+1 {{operand #2 must be ranked tensor of 32-bit float values}}
  %y = tg.matmul_add %x, %w, %r : tensor<2x16xbf16>, tensor<16x64xbf16>, tensor<2x64xbf16> -> tensor<2x64xbf16>
  return %y : tensor<2x64xbf16>
}

// -----

// tg.beside_next (tg-pair-gemms): a unit attribute of a tg.matmul.
func.func @beside_next_value(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-error @+1 {{tg.beside_next must be a unit attribute}}
  %a = tg.matmul %x, %x {tg.beside_next = 1 : i64} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b = tg.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

func.func @beside_next_not_matmul(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-error @+1 {{tg.beside_next is for tg.matmul and tg.matmul_add only}}
  %a = tg.exp %x {tg.beside_next} : tensor<4x4xf32>
  %b = tg.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The partner is the next op that computes something: here a tg.exp.
func.func @beside_next_partner(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-error @+1 {{tg.beside_next needs a tg.matmul or tg.matmul_add as the next op that computes something}}
  %a = tg.matmul %x, %x {tg.beside_next} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b = tg.exp %x : tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

func.func @beside_next_chain(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-error @+1 {{tg.beside_next pairs two ops: the next one may not have it}}
  %a = tg.matmul %x, %x {tg.beside_next} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b = tg.matmul %x, %x {tg.beside_next} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %c = tg.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %a, %b, %c : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The next tg.matmul reads this one's result through a reshape.
func.func @beside_next_dependent(%x: tensor<4x4xf32>) -> tensor<16x1xf32> {
  // expected-error @+1 {{tg.beside_next: the next GEMM reads this one's result, so they cannot run at once}}
  %a = tg.matmul %x, %x {tg.beside_next} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %r = tg.reshape %a : tensor<4x4xf32> -> tensor<16x1xf32>
  %o = tg.constant dense<1.0> : tensor<1x1xf32>
  %b = tg.matmul %r, %o : tensor<16x1xf32>, tensor<1x1xf32> -> tensor<16x1xf32>
  return %b : tensor<16x1xf32>
}

// -----

// ... or through a tg.stop_gradient.
func.func @beside_next_dependent_stop_gradient(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{tg.beside_next: the next GEMM reads this one's result, so they cannot run at once}}
  %a = tg.matmul %x, %x {tg.beside_next} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s = tg.stop_gradient %a : tensor<4x4xf32>
  %b = tg.matmul %s, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Binary ops (tg.add): SameOperandsAndResultType.
func.func @add_shape_mismatch(%x: tensor<2x7x16xf32>, %y: tensor<2x7x8xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %z = "tg.add"(%x, %y) : (tensor<2x7x16xf32>, tensor<2x7x8xf32>) -> tensor<2x7x16xf32>
  return %z : tensor<2x7x16xf32>
}

// -----

// Unary ops (tg.relu): SameOperandsAndResultType.
func.func @relu_shape_mismatch(%x: tensor<2x7x64xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "tg.relu"(%x) : (tensor<2x7x64xf32>) -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.scale: SameOperandsAndResultType.
func.func @scale_shape_mismatch(%s: tensor<2x4x7x7xf32>) -> tensor<2x4x7x9xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "tg.scale"(%s) <{factor = 0.353553385 : f32}> : (tensor<2x4x7x7xf32>) -> tensor<2x4x7x9xf32>
  return %y : tensor<2x4x7x9xf32>
}

// -----

// tg.scale: the factor is finite.
func.func @scale_infinite(%s: tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{factor must be finite but is inf}}
  %y = tg.scale %s by 0x7F800000 : tensor<2x4x7x7xf32>
  return %y : tensor<2x4x7x7xf32>
}

// -----

// tg.pow: the exponent is finite.
func.func @pow_nan(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{exponent must be finite but is nan}}
  %y = tg.pow %x, 0x7FC00000 : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// tg.where: the condition and both choices have the result's type.
func.func @where_shape_mismatch(%c: tensor<4xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "tg.where"(%c, %x, %x) : (tensor<4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// tg.less: the mask has its operands' type.
func.func @less_i32(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{must be ranked tensor of 32-bit float values}}
  %y = "tg.less"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

// tg.relu_grad: grad and input have one shape (input may be bf16).
func.func @relu_grad_shape_mismatch(%dy: tensor<2x7x64xf32>, %x: tensor<2x7x16xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{failed to verify that all of {grad, input} have same shape}}
  %dx = "tg.relu_grad"(%dy, %x) : (tensor<2x7x64xf32>, tensor<2x7x16xf32>) -> tensor<2x7x64xf32>
  return %dx : tensor<2x7x64xf32>
}

// -----

// tg.relu_grad: the result is f32 whatever grad's type.
func.func @relu_grad_bf16_result(%dy: tensor<2x7x64xbf16>, %x: tensor<2x7x64xbf16>) -> tensor<2x7x64xbf16> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float values, but got 'tensor<2x7x64xbf16>'}}
  %dx = "tg.relu_grad"(%dy, %x) : (tensor<2x7x64xbf16>, tensor<2x7x64xbf16>) -> tensor<2x7x64xbf16>
  return %dx : tensor<2x7x64xbf16>
}

// -----

// tg.relu_grad: the result has grad's shape.
func.func @relu_grad_result_shape(%dy: tensor<4xbf16>, %x: tensor<4xbf16>) -> tensor<5xf32> {
  // expected-error @+1 {{failed to verify that the result is grad's shape in f32}}
  %dx = "tg.relu_grad"(%dy, %x) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<5xf32>
  return %dx : tensor<5xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Shape ops and reductions
//===----------------------------------------------------------------------===//

// tg.broadcast: the element type is unchanged.
func.func @broadcast_element_type(%m: tensor<2x7xi32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{result element type 'f32' differs from the input's 'i32'}}
  %y = tg.broadcast %m dims [0, 3] : tensor<2x7xi32> -> tensor<2x4x7x7xf32>
  return %y : tensor<2x4x7x7xf32>
}

// -----

// tg.broadcast: dims names one result dimension per input dimension.
func.func @broadcast_dims_count(%m: tensor<2x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{dims [3] must name one result dimension per input dimension of [2, 7]}}
  %y = tg.broadcast %m dims [3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  return %y : tensor<2x4x7x7xf32>
}

// -----

// tg.broadcast: dims lie within the result's rank.
func.func @broadcast_dims_range(%b: tensor<16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{dims [3] holds 3, outside [0, 3)}}
  %y = tg.broadcast %b dims [3] : tensor<16xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.broadcast: dims are strictly increasing.
func.func @broadcast_dims_order(%m: tensor<2x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{dims [3, 0] must be strictly increasing}}
  %y = tg.broadcast %m dims [3, 0] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  return %y : tensor<2x4x7x7xf32>
}

// -----

// tg.broadcast: each input dimension is 1 or its result dimension's size.
func.func @broadcast_size(%b: tensor<8xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{input dimension 0 (size 8) must be 1 or match result dimension 2 (size 16): [8] -> [2, 7, 16]}}
  %y = tg.broadcast %b dims [2] : tensor<8xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.reshape: the element type is unchanged.
func.func @reshape_element_type(%x: tensor<2x7x16xf32>) -> tensor<2x7x4x4xi32> {
  // expected-error @+1 {{result element type 'i32' differs from the input's 'f32'}}
  %y = tg.reshape %x : tensor<2x7x16xf32> -> tensor<2x7x4x4xi32>
  return %y : tensor<2x7x4x4xi32>
}

// -----

// tg.reshape: the element count is unchanged.
func.func @reshape_count(%x: tensor<2x7x16xf32>) -> tensor<2x7x4x2xf32> {
  // expected-error @+1 {{element count differs: [2, 7, 16] has 224, [2, 7, 4, 2] has 112}}
  %y = tg.reshape %x : tensor<2x7x16xf32> -> tensor<2x7x4x2xf32>
  return %y : tensor<2x7x4x2xf32>
}

// -----

// tg.transpose: the element type is unchanged.
func.func @transpose_element_type(%x: tensor<2x7x4x4xf32>) -> tensor<2x4x7x4xi32> {
  // expected-error @+1 {{result element type 'i32' differs from the input's 'f32'}}
  %y = tg.transpose %x permutation [0, 2, 1, 3] : tensor<2x7x4x4xf32> -> tensor<2x4x7x4xi32>
  return %y : tensor<2x4x7x4xi32>
}

// -----

// tg.transpose: a bf16 result only from f32 (a rounding transpose).
func.func @transpose_ids_to_bf16(%x: tensor<2x7x4x4xi32>) -> tensor<2x4x7x4xbf16> {
  // expected-error @+1 {{result element type 'bf16' differs from the input's 'i32'}}
  %y = tg.transpose %x permutation [0, 2, 1, 3] : tensor<2x7x4x4xi32> -> tensor<2x4x7x4xbf16>
  return %y : tensor<2x4x7x4xbf16>
}

// -----

// tg.transpose: the permutation has one entry per dimension.
func.func @transpose_perm_length(%x: tensor<2x7x16xf32>) -> tensor<7x2x16xf32> {
  // expected-error @+1 {{permutation [1, 0] is not a permutation of the 3 dimensions of [2, 7, 16]}}
  %y = tg.transpose %x permutation [1, 0] : tensor<2x7x16xf32> -> tensor<7x2x16xf32>
  return %y : tensor<7x2x16xf32>
}

// -----

// tg.transpose: the permutation names each dimension once.
func.func @transpose_perm_repeat(%x: tensor<2x7x4x4xf32>) -> tensor<2x4x4x4xf32> {
  // expected-error @+1 {{permutation [0, 2, 2, 3] is not a permutation of the 4 dimensions of [2, 7, 4, 4]}}
  %y = tg.transpose %x permutation [0, 2, 2, 3] : tensor<2x7x4x4xf32> -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}

// -----

// tg.transpose: the result is the permuted input shape.
func.func @transpose_result_shape(%x: tensor<2x7x4x4xf32>) -> tensor<2x7x4x4xf32> {
  // expected-error @+1 {{result must have shape [2, 4, 7, 4] but has [2, 7, 4, 4]}}
  %y = tg.transpose %x permutation [0, 2, 1, 3] : tensor<2x7x4x4xf32> -> tensor<2x7x4x4xf32>
  return %y : tensor<2x7x4x4xf32>
}

// -----

// tg.reduce_sum: dims is not empty.
func.func @reduce_sum_no_dims(%x: tensor<2x7x16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{dims must not be empty}}
  %y = tg.reduce_sum %x dims [] : tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.reduce_max: dims lie within the input's rank.
func.func @reduce_max_dims_range(%s: tensor<2x4x7x7xf32>) -> tensor<2x4x7x1xf32> {
  // expected-error @+1 {{dims [4] holds 4, outside [0, 4)}}
  %m = tg.reduce_max %s dims [4] keep_dims : tensor<2x4x7x7xf32> -> tensor<2x4x7x1xf32>
  return %m : tensor<2x4x7x1xf32>
}

// -----

// tg.reduce_mean: dims are strictly increasing.
func.func @reduce_mean_dims_order(%x: tensor<2x7x16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{dims [1, 0] must be strictly increasing}}
  %y = tg.reduce_mean %x dims [1, 0] : tensor<2x7x16xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// tg.reduce_sum: a bf16 input sums to f32.
func.func @reduce_sum_bf16_result(%g: tensor<2x7x16xbf16>) -> tensor<16xbf16> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float values}}
  %s = tg.reduce_sum %g dims [0, 1] : tensor<2x7x16xbf16> -> tensor<16xbf16>
  return %s : tensor<16xbf16>
}

// -----

// tg.reduce_max: only a sum reads bf16.
func.func @reduce_max_bf16(%g: tensor<2x7x16xbf16>) -> tensor<2x7xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float values}}
  %m = tg.reduce_max %g dims [2] : tensor<2x7x16xbf16> -> tensor<2x7xf32>
  return %m : tensor<2x7xf32>
}

// -----

// tg.reduce_sum: the reduced dimensions are dropped from the result.
func.func @reduce_sum_result_shape(%dy: tensor<2x7x16xf32>) -> tensor<1x1x16xf32> {
  // expected-error @+1 {{result must have shape [16] but has [1, 1, 16]}}
  %db = tg.reduce_sum %dy dims [0, 1] : tensor<2x7x16xf32> -> tensor<1x1x16xf32>
  return %db : tensor<1x1x16xf32>
}

// -----

// tg.reduce_max: under keep_dims the reduced dimensions have size 1.
func.func @reduce_max_keep_dims_shape(%s: tensor<2x4x7x7xf32>) -> tensor<2x4x7xf32> {
  // expected-error @+1 {{result must have shape [2, 4, 7, 1] but has [2, 4, 7]}}
  %m = tg.reduce_max %s dims [3] keep_dims : tensor<2x4x7x7xf32> -> tensor<2x4x7xf32>
  return %m : tensor<2x4x7xf32>
}

// -----

// tg.reduce_mean: the result shape follows from dims.
func.func @reduce_mean_result_shape(%x: tensor<2x7x16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{result must have shape [2, 7] but has [2, 16]}}
  %mu = tg.reduce_mean %x dims [2] : tensor<2x7x16xf32> -> tensor<2x16xf32>
  return %mu : tensor<2x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Slices, concatenation and gathers
//===----------------------------------------------------------------------===//

// tg.slice: dim is a dimension of the input.
func.func @slice_dim_range(%x: tensor<2x7x16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{dim 3 is outside [0, 3)}}
  %y = tg.slice %x dim 3 start 0 : tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.slice: the result has the input's rank.
func.func @slice_result_rank(%x: tensor<2x7x16xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result must have rank 3 but has shape [2, 3]}}
  %y = tg.slice %x dim 1 start 0 : tensor<2x7x16xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// tg.slice: the elements taken lie inside the input.
func.func @slice_past_the_end(%x: tensor<2x7x16xf32>) -> tensor<2x3x16xf32> {
  // expected-error @+1 {{elements [5, 8) along dim 1 are not all in input [2, 7, 16]}}
  %y = tg.slice %x dim 1 start 5 : tensor<2x7x16xf32> -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// -----

// tg.slice: a negative start is outside the input too.
func.func @slice_negative_start(%x: tensor<2x7x16xf32>) -> tensor<2x3x16xf32> {
  // expected-error @+1 {{elements [-1, 2) along dim 1 are not all in input [2, 7, 16]}}
  %y = tg.slice %x dim 1 start -1 : tensor<2x7x16xf32> -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// -----

// tg.slice: every other dimension is the input's.
func.func @slice_other_dims(%x: tensor<2x7x16xf32>) -> tensor<2x3x8xf32> {
  // expected-error @+1 {{result must have shape [2, 3, 16] but has [2, 3, 8]}}
  %y = tg.slice %x dim 1 start 0 : tensor<2x7x16xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// A start near 2^63: start + size wrapped past the end and passed (the
// slice then read and wrote out of bounds).
func.func @slice_start_that_wraps(%dy: tensor<2x6xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{elements [9223372036854775807, 9223372036854775807) along dim 1 are not all in result [2, 16]}}
  %dx = tg.slice_grad %dy dim 1 start 9223372036854775807 : tensor<2x6xf32> -> tensor<2x16xf32>
  return %dx : tensor<2x16xf32>
}

// -----

// tg.slice_grad: the rules of tg.slice, grad being the slice of the result.
func.func @slice_grad_past_the_end(%dy: tensor<2x3x16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{elements [6, 9) along dim 1 are not all in result [2, 7, 16]}}
  %dx = tg.slice_grad %dy dim 1 start 6 : tensor<2x3x16xf32> -> tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// -----

// tg.slice_grad: grad has the result's shape but along dim.
func.func @slice_grad_other_dims(%dy: tensor<2x3x8xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{grad must have shape [2, 3, 16] but has [2, 3, 8]}}
  %dx = tg.slice_grad %dy dim 1 start 0 : tensor<2x3x8xf32> -> tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// -----

// tg.concat: at least one input.
func.func @concat_nothing() -> tensor<2xf32> {
  // expected-error @+1 {{needs at least one input}}
  %y = "tg.concat"() {dim = 0 : i64} : () -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// tg.concat: dim is a dimension of the inputs.
func.func @concat_dim_range(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{dim -1 is outside [0, 2)}}
  %y = tg.concat %a, %b dim -1 : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}

// -----

// tg.concat: the inputs agree in every other dimension.
func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{input #1 [3, 4] must match input #0 [2, 3] in every dimension but dim 1}}
  %y = tg.concat %a, %b dim 1 : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}

// -----

// tg.concat: the inputs have one rank.
func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{input #1 [2, 3, 1] must match input #0 [2, 3] in every dimension but dim 1}}
  %y = tg.concat %a, %b dim 1 : tensor<2x3xf32>, tensor<2x3x1xf32> -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// tg.concat: the result's size along dim is the sum of the inputs'.
func.func @concat_result_shape(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result must have shape [2, 7] but has [2, 8]}}
  %y = tg.concat %a, %b dim 1 : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// tg.gather: dim is a dimension of the input.
func.func @gather_dim_range(%x: tensor<3x2xf32>, %i: tensor<2xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{dim 2 is outside [0, 2)}}
  %y = tg.gather %x[%i] dim 2 : tensor<3x2xf32>, tensor<2xi32> -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// tg.gather: the indices' shape replaces dimension dim.
func.func @gather_result_shape(%x: tensor<3x5xf32>, %i: tensor<2x4xi32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{result must have shape [3, 2, 4] but has [3, 8]}}
  %y = tg.gather %x[%i] dim 1 : tensor<3x5xf32>, tensor<2x4xi32> -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// tg.gather: the indices are i32.
func.func @gather_f32_indices(%x: tensor<3x5xf32>, %i: tensor<2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer values, but got 'tensor<2xf32>'}}
  %y = tg.gather %x[%i] dim 1 : tensor<3x5xf32>, tensor<2xf32> -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// tg.gather_grad: dim is a dimension of the result.
func.func @gather_grad_dim_range(%dy: tensor<2x2xf32>, %i: tensor<2xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{dim 2 is outside [0, 2)}}
  %dx = tg.gather_grad %dy[%i] dim 2 : tensor<2x2xf32>, tensor<2xi32> -> tensor<3x2xf32>
  return %dx : tensor<3x2xf32>
}

// -----

// tg.gather_grad: grad has the gather's result shape.
func.func @gather_grad_grad_shape(%dy: tensor<3x2xf32>, %i: tensor<2xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{grad must have shape [2, 2] but has [3, 2]}}
  %dx = tg.gather_grad %dy[%i] dim 0 : tensor<3x2xf32>, tensor<2xi32> -> tensor<3x2xf32>
  return %dx : tensor<3x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Softmax, LayerNorm, dropout
//===----------------------------------------------------------------------===//

// tg.softmax: the axis lies within the input's rank.
func.func @softmax_axis(%s: tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{axis 4 is outside [0, 4)}}
  %p = tg.softmax %s axis 4 : tensor<2x4x7x7xf32>
  return %p : tensor<2x4x7x7xf32>
}

// -----

// tg.softmax: SameOperandsAndResultType.
func.func @softmax_shape_mismatch(%s: tensor<2x4x7x7xf32>) -> tensor<2x4x7x9xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %p = "tg.softmax"(%s) <{axis = 3 : i64}> : (tensor<2x4x7x7xf32>) -> tensor<2x4x7x9xf32>
  return %p : tensor<2x4x7x9xf32>
}

// -----

// tg.softmax_grad: the axis lies within the output's rank.
func.func @softmax_grad_axis(%p: tensor<2x4x7x7xf32>, %dp: tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{axis -1 is outside [0, 4)}}
  %ds = tg.softmax_grad %p, %dp axis -1 : tensor<2x4x7x7xf32>
  return %ds : tensor<2x4x7x7xf32>
}

// -----

// tg.softmax_grad: SameOperandsAndResultType.
func.func @softmax_grad_shape_mismatch(%p: tensor<2x4x7x7xf32>, %dp: tensor<2x4x7x9xf32>) -> tensor<2x4x7x7xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %ds = "tg.softmax_grad"(%p, %dp) <{axis = 3 : i64}> : (tensor<2x4x7x7xf32>, tensor<2x4x7x9xf32>) -> tensor<2x4x7x7xf32>
  return %ds : tensor<2x4x7x7xf32>
}

// -----

// tg.layer_norm: the input has rank >= 1.
func.func @layer_norm_scalar(%x: tensor<f32>, %gamma: tensor<1xf32>, %beta: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{input must have rank >= 1}}
  %y = tg.layer_norm %x, %gamma, %beta eps 1.0e-06 : tensor<f32>, tensor<1xf32>
  return %y : tensor<f32>
}

// -----

// tg.layer_norm: gamma is [D], D the input's last dimension.
func.func @layer_norm_gamma(%x: tensor<2x7x16xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{gamma must have shape [16] but has [8]}}
  %y = tg.layer_norm %x, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<8xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.layer_norm: epsilon is positive.
func.func @layer_norm_epsilon(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{epsilon must be positive and finite but is 0}}
  %y = tg.layer_norm %x, %gamma, %beta eps 0.0 : tensor<2x7x16xf32>, tensor<16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.layer_norm: AllTypesMatch<input, result>.
func.func @layer_norm_result_type(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<14x16xf32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %y = "tg.layer_norm"(%x, %gamma, %beta) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<14x16xf32>
  return %y : tensor<14x16xf32>
}

// -----

// tg.layer_norm: AllTypesMatch<gamma, beta>.
func.func @layer_norm_beta_type(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<8xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{failed to verify that all of {gamma, beta} have same type}}
  %y = "tg.layer_norm"(%x, %gamma, %beta) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.layer_norm_grad: the input has rank >= 1.
func.func @layer_norm_grad_scalar(%dy: tensor<f32>, %x: tensor<f32>, %gamma: tensor<1xf32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %gamma eps 1.0e-06 : tensor<f32>, tensor<1xf32>
  return
}

// -----

// tg.layer_norm_grad: gamma is [D], D the input's last dimension.
func.func @layer_norm_grad_gamma(%dy: tensor<2x7x16xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{gamma must have shape [16] but has [8]}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<8xf32>
  return
}

// -----

// tg.layer_norm_grad: epsilon is positive.
func.func @layer_norm_grad_epsilon(%dy: tensor<2x7x16xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{epsilon must be positive and finite but is -1e-06}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %gamma eps -1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.layer_norm_grad: AllTypesMatch<grad, input, input_grad>.
func.func @layer_norm_grad_grad_type(%dy: tensor<2x7x8xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{failed to verify that all of {grad, input, input_grad} have same type}}
  %dx, %dg, %db = "tg.layer_norm_grad"(%dy, %x, %gamma) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x8xf32>, tensor<2x7x16xf32>, tensor<16xf32>) -> (tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// tg.layer_norm_grad: AllTypesMatch<gamma, gamma_grad, beta_grad>.
func.func @layer_norm_grad_beta_grad_type(%dy: tensor<2x7x16xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{failed to verify that all of {gamma, gamma_grad, beta_grad} have same type}}
  %dx, %dg, %db = "tg.layer_norm_grad"(%dy, %x, %gamma) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>) -> (tensor<2x7x16xf32>, tensor<16xf32>, tensor<1x16xf32>)
  return
}

// -----

// tg.rms_norm: the input has rank >= 1.
func.func @rms_norm_scalar(%x: tensor<f32>, %gamma: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{input must have rank >= 1}}
  %y = tg.rms_norm %x, %gamma eps 1.0e-06 : tensor<f32>, tensor<1xf32>
  return %y : tensor<f32>
}

// -----

// tg.rms_norm: gamma is [D], D the input's last dimension.
func.func @rms_norm_gamma(%x: tensor<2x7x16xf32>, %gamma: tensor<8xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{gamma must have shape [16] but has [8]}}
  %y = tg.rms_norm %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<8xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.rms_norm: epsilon is positive.
func.func @rms_norm_epsilon(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{epsilon must be positive and finite but is 0}}
  %y = tg.rms_norm %x, %gamma eps 0.0 : tensor<2x7x16xf32>, tensor<16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.rms_norm: AllTypesMatch<input, result>.
func.func @rms_norm_result_type(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) -> tensor<14x16xf32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %y = "tg.rms_norm"(%x, %gamma) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x16xf32>, tensor<16xf32>) -> tensor<14x16xf32>
  return %y : tensor<14x16xf32>
}

// -----

// tg.rms_norm_grad: the input has rank >= 1.
func.func @rms_norm_grad_scalar(%dy: tensor<f32>, %x: tensor<f32>, %gamma: tensor<1xf32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %dx, %dg = tg.rms_norm_grad %dy, %x, %gamma eps 1.0e-06 : tensor<f32>, tensor<1xf32>
  return
}

// -----

// tg.rms_norm_grad: gamma is [D], D the input's last dimension.
func.func @rms_norm_grad_gamma(%dy: tensor<2x7x16xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{gamma must have shape [16] but has [8]}}
  %dx, %dg = tg.rms_norm_grad %dy, %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<8xf32>
  return
}

// -----

// tg.rms_norm_grad: epsilon is positive.
func.func @rms_norm_grad_epsilon(%dy: tensor<2x7x16xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{epsilon must be positive and finite but is -1e-06}}
  %dx, %dg = tg.rms_norm_grad %dy, %x, %gamma eps -1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.rms_norm_grad: AllTypesMatch<grad, input, input_grad>.
func.func @rms_norm_grad_grad_type(%dy: tensor<2x7x8xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{failed to verify that all of {grad, input, input_grad} have same type}}
  %dx, %dg = "tg.rms_norm_grad"(%dy, %x, %gamma) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x8xf32>, tensor<2x7x16xf32>, tensor<16xf32>) -> (tensor<2x7x16xf32>, tensor<16xf32>)
  return
}

// -----

// tg.rms_norm_grad: AllTypesMatch<gamma, gamma_grad>.
func.func @rms_norm_grad_gamma_grad_type(%dy: tensor<2x7x16xf32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{failed to verify that all of {gamma, gamma_grad} have same type}}
  %dx, %dg = "tg.rms_norm_grad"(%dy, %x, %gamma) <{epsilon = 1.0e-06 : f32}> : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>) -> (tensor<2x7x16xf32>, tensor<1x16xf32>)
  return
}

// -----

// tg.dropout: the rate lies in [0, 1).
func.func @dropout_rate(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{rate must be in [0, 1) but is 1}}
  %y = tg.dropout %x, %key rate 1.0 op_id 3 : tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.dropout: a run-time rate replaces a compiled rate above 0 (a site
// compiled at rate 0 does not exist).
func.func @dropout_run_time_rate_at_zero(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>, %p: tensor<f32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{takes its rate at run time, so its compiled rate (the default) must be above 0, not 0}}
  %y = tg.dropout %x, %key rate 0.0 run_time %p op_id 3 : tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.dropout_grad: the same rule.
func.func @dropout_grad_run_time_rate_at_zero(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>, %p: tensor<f32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{takes its rate at run time, so its compiled rate (the default) must be above 0, not 0}}
  %y = tg.dropout_grad %x, %key rate 0.0 run_time %p op_id 3 : tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.dropout: a run-time rate is an f32 scalar.
func.func @dropout_run_time_rate_type(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>, %p: tensor<i32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{operand #2 must be}}
  %y = "tg.dropout"(%x, %key, %p) {rate = 1.0e-01 : f32, op_id = 3 : i64} : (tensor<2x7x16xf32>, tensor<2xi32>, tensor<i32>) -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.attention: a run-time dropout rate replaces a compiled one above 0.
func.func @attention_run_time_rate_at_zero(%q: tensor<2x4x7x8xf32>, %key: tensor<2xi32>, %p: tensor<f32>) -> tensor<2x4x7x8xf32> {
  // expected-error @+1 {{takes its dropout rate at run time, so its compiled dropout rate (the default) must be above 0, not 0}}
  %o, %lse = tg.attention %q, %q, %q key %key scale 0.353553385 dropout 0.0 run_time %p op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2xi32>, tensor<f32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return %o : tensor<2x4x7x8xf32>
}

// -----

// tg.fused_elementwise: a tensor<f32> input that is not a group-shaped value
// is read only as dropouts' run-time rate.
func.func @fused_elementwise_rate_as_data(%x: tensor<4x8xf32>, %p: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{input #1 must have the group's shape [4, 8]}}
  %r = tg.fused_elementwise(%x, %p) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<f32>):
    %0 = tg.exp %b : tensor<f32>
    %1 = tg.exp %a : tensor<4x8xf32>
    tg.yield %1 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.dropout: op_id is >= 0.
func.func @dropout_op_id(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{op_id must be >= 0 but is -1}}
  %y = tg.dropout %x, %key rate 1.000000e-01 op_id -1 : tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

// tg.dropout: AllTypesMatch<input, result>.
func.func @dropout_result_type(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x8xf32> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %y = "tg.dropout"(%x, %key) <{rate = 1.0e-01 : f32, op_id = 3 : i64}> : (tensor<2x7x16xf32>, tensor<2xi32>) -> tensor<2x7x8xf32>
  return %y : tensor<2x7x8xf32>
}

// -----

// tg.dropout_grad: the rate lies in [0, 1).
func.func @dropout_grad_rate(%dy: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{rate must be in [0, 1) but is -0.1}}
  %dx = tg.dropout_grad %dy, %key rate -1.000000e-01 op_id 3 : tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// -----

// tg.dropout_grad: op_id is >= 0.
func.func @dropout_grad_op_id(%dy: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{op_id must be >= 0 but is -3}}
  %dx = tg.dropout_grad %dy, %key rate 1.000000e-01 op_id -3 : tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// -----

// tg.dropout_grad: AllTypesMatch<grad, result>.
func.func @dropout_grad_result_type(%dy: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x8xf32> {
  // expected-error @+1 {{failed to verify that all of {grad, result} have same type}}
  %dx = "tg.dropout_grad"(%dy, %key) <{rate = 1.0e-01 : f32, op_id = 3 : i64}> : (tensor<2x7x16xf32>, tensor<2xi32>) -> tensor<2x7x8xf32>
  return %dx : tensor<2x7x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Masks and positions
//===----------------------------------------------------------------------===//

// tg.causal_mask: the result is a square [T, T] matrix.
func.func @causal_mask_not_square() -> tensor<7x9xf32> {
  // expected-error @+1 {{result must be a square [T, T] matrix but is [7, 9]}}
  %m = tg.causal_mask : tensor<7x9xf32>
  return %m : tensor<7x9xf32>
}

// -----

// tg.padding_mask: the result has the ids' shape.
func.func @padding_mask_shape(%src: tensor<2x7xi32>) -> tensor<2x1x7xf32> {
  // expected-error @+1 {{result must have shape [2, 7] but has [2, 1, 7]}}
  %pad = tg.padding_mask %src pad_id 0 : tensor<2x7xi32> -> tensor<2x1x7xf32>
  return %pad : tensor<2x1x7xf32>
}

// -----

// tg.positional_encoding: the result is a [T, D] matrix.
func.func @positional_encoding_rank() -> tensor<2x7x16xf32> {
  // expected-error @+1 {{result must be a [T, D] matrix but is [2, 7, 16]}}
  %pe = tg.positional_encoding : tensor<2x7x16xf32>
  return %pe : tensor<2x7x16xf32>
}

// -----

// tg.positional_encoding: D is even (sin/cos pairs).
func.func @positional_encoding_odd() -> tensor<7x15xf32> {
  // expected-error @+1 {{model dimension D must be even (sin/cos pairs) but the result is [7, 15]}}
  %pe = tg.positional_encoding : tensor<7x15xf32>
  return %pe : tensor<7x15xf32>
}

// -----

// tg.rotary: the input is [..., S, D].
func.func @rotary_rank(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{input must be [..., S, D] (rank >= 2) but is [16]}}
  %r = tg.rotary %x base 10000.0 : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// tg.rotary: D is even (rotated halves).
func.func @rotary_odd(%x: tensor<2x7x15xf32>) -> tensor<2x7x15xf32> {
  // expected-error @+1 {{head dimension D must be even (rotated halves) but the input is [2, 7, 15]}}
  %r = tg.rotary %x base 10000.0 : tensor<2x7x15xf32>
  return %r : tensor<2x7x15xf32>
}

// -----

// tg.rotary: the base is finite and > 1.
func.func @rotary_base(%x: tensor<2x7x16xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{base must be finite and > 1 but is 1}}
  %r = tg.rotary %x base 1.0 : tensor<2x7x16xf32>
  return %r : tensor<2x7x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

// tg.cross_entropy: the logits are [..., V] with rank >= 2.
func.func @cross_entropy_logits_rank(%logits: tensor<100xf32>, %tgt: tensor<i32>) {
  // expected-error @+1 {{logits must have rank >= 2 ([..., V]) but are [100]}}
  %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 ignore 0 : tensor<100xf32>, tensor<i32>
  return
}

// -----

// tg.cross_entropy: the targets are the logits' shape without V.
func.func @cross_entropy_targets(%logits: tensor<2x7x100xf32>, %tgt: tensor<2x8xi32>) {
  // expected-error @+1 {{targets must have shape [2, 7] but has [2, 8]}}
  %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 ignore 0 : tensor<2x7x100xf32>, tensor<2x8xi32>
  return
}

// -----

// tg.cross_entropy: the smoothing lies in [0, 1).
func.func @cross_entropy_smoothing(%logits: tensor<2x7x100xf32>, %tgt: tensor<2x7xi32>) {
  // expected-error @+1 {{smoothing must be in [0, 1) but is 1}}
  %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 1.0 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  return
}

// -----

// tg.output_loss: the weight is [V, d] with hidden's d.
func.func @output_loss_weight(%h: tensor<2x7x16xf32>, %w: tensor<100x8xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>) {
  // expected-error @+1 {{weight must be [V, d] with d = 16 (hidden's last dimension) but is [100, 8]}}
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss smoothing 0.1 ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x8xf32>, tensor<2x7xi32>, tensor<4x100xf32>
  return
}

// -----

// tg.output_loss: the targets are hidden's shape without d.
func.func @output_loss_targets(%h: tensor<2x7x16xf32>, %w: tensor<100x16xf32>, %tgt: tensor<2x8xi32>, %dloss: tensor<f32>) {
  // expected-error @+1 {{targets must have shape [2, 7] but has [2, 8]}}
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss smoothing 0.1 ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x8xi32>, tensor<4x100xf32>
  return
}

// -----

// tg.output_loss: a chunk has between 1 and all the rows.
func.func @output_loss_chunk(%h: tensor<2x7x16xf32>, %w: tensor<100x16xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>) {
  // expected-error @+1 {{chunk must be between 1 and the 14 rows but is 15}}
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss smoothing 0.1 ignore 0 chunk 15 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<15x100xf32>
  return
}

// -----

// tg.output_loss: the workspace is [chunk, V].
func.func @output_loss_workspace(%h: tensor<2x7x16xf32>, %w: tensor<100x16xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>) {
  // expected-error @+1 {{workspace must have shape [4, 100] but has [4, 99]}}
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss smoothing 0.1 ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<4x99xf32>
  return
}

// -----

// tg.cross_entropy_grad: the logits are [..., V] with rank >= 2.
func.func @cross_entropy_grad_logits_rank(%dloss: tensor<f32>, %logits: tensor<100xf32>, %tgt: tensor<i32>) -> tensor<100xf32> {
  // expected-error @+1 {{logits must have rank >= 2 ([..., V]) but are [100]}}
  %d = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing 1.000000e-01 ignore 0 : tensor<100xf32>, tensor<i32>
  return %d : tensor<100xf32>
}

// -----

// tg.cross_entropy_grad: the targets are the logits' shape without V.
func.func @cross_entropy_grad_targets(%dloss: tensor<f32>, %logits: tensor<2x7x100xf32>, %tgt: tensor<7x2xi32>) -> tensor<2x7x100xf32> {
  // expected-error @+1 {{targets must have shape [2, 7] but has [7, 2]}}
  %d = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing 1.000000e-01 ignore 0 : tensor<2x7x100xf32>, tensor<7x2xi32>
  return %d : tensor<2x7x100xf32>
}

// -----

// tg.cross_entropy_grad: the smoothing lies in [0, 1).
func.func @cross_entropy_grad_smoothing(%dloss: tensor<f32>, %logits: tensor<2x7x100xf32>, %tgt: tensor<2x7xi32>) -> tensor<2x7x100xf32> {
  // expected-error @+1 {{smoothing must be in [0, 1) but is -0.1}}
  %d = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing -1.000000e-01 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  return %d : tensor<2x7x100xf32>
}

// -----

// tg.cross_entropy_grad: AllTypesMatch<logits, result>.
func.func @cross_entropy_grad_result_type(%dloss: tensor<f32>, %logits: tensor<2x7x100xf32>, %tgt: tensor<2x7xi32>) -> tensor<14x100xf32> {
  // expected-error @+1 {{failed to verify that all of {logits, result} have same type}}
  %d = "tg.cross_entropy_grad"(%dloss, %logits, %tgt) <{smoothing = 1.0e-01 : f32, ignore_index = 0 : i32}> : (tensor<f32>, tensor<2x7x100xf32>, tensor<2x7xi32>) -> tensor<14x100xf32>
  return %d : tensor<14x100xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Fused attention
//===----------------------------------------------------------------------===//

// tg.attention: the query is [B, H, Sq, Dk].
func.func @attention_query_rank(%q: tensor<2x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) {
  // expected-error @+1 {{query must have rank 4 but has shape [2, 7, 8]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the key is [B, H, Sk, Dk].
func.func @attention_key_rank(%q: tensor<2x4x7x8xf32>, %k: tensor<2x7x32xf32>, %v: tensor<2x4x7x8xf32>) {
  // expected-error @+1 {{key must have rank 4 but has shape [2, 7, 32]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x7x32xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the value is [B, H, Sk, Dv].
func.func @attention_value_rank(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x7x32xf32>) {
  // expected-error @+1 {{value must have rank 4 but has shape [2, 7, 32]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7x32xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention sequence_major: q [B, Sq, H, Dk], k [B, Sk, H, Dk].
func.func @attention_sequence_major_key_shape(%q: tensor<2x7x4x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x9x4x8xf32>) {
  // expected-error @+1 {{key must be [B, Sk, H, Dk] with B, H, Dk of query [2, 7, 4, 8] but is [2, 4, 9, 8]}}
  %o, %lse = tg.attention %q, %k, %v sequence_major scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x7x4x8xf32>, tensor<2x4x9x8xf32>, tensor<2x9x4x8xf32>) -> (tensor<2x7x4x8xf32>, tensor<2x7x4xf32>)
  return
}

// -----

// tg.attention sequence_major: out [B, Sq, H, Dv].
func.func @attention_sequence_major_output_shape(%q: tensor<2x7x4x8xf32>, %k: tensor<2x9x4x8xf32>, %v: tensor<2x9x4x8xf32>) {
  // expected-error @+1 {{output}}
  %o, %lse = tg.attention %q, %k, %v sequence_major scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x7x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x7x4xf32>)
  return
}

// -----

// tg.attention: a decoding step reads a head-major cache.
func.func @attention_sequence_major_position(%q: tensor<2x1x4x8xf32>, %k: tensor<2x7x4x8xf32>, %v: tensor<2x7x4x8xf32>, %position: tensor<i32>) {
  // expected-error @+1 {{a decoding step (position) reads its key cache head-major: it cannot be sequence_major}}
  %o, %lse = tg.attention %q, %k, %v causal position %position sequence_major scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x1x4x8xf32>, tensor<2x7x4x8xf32>, tensor<2x7x4x8xf32>, tensor<i32>) -> (tensor<2x1x4x8xf32>, tensor<2x1x4xf32>)
  return
}

// -----

// tg.attention bf16_products: the products round to bf16 what multiplies
// bf16 queries, keys and values; f32 ones have no bf16 products.
func.func @attention_bf16_products_f32(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) {
  // expected-error @+1 {{bf16_products needs bf16 query, key and value}}
  %o, %lse = tg.attention %q, %k, %v bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention_grad bf16_products: the same rule.
func.func @attention_grad_bf16_products_f32(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xf32>, %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{bf16_products needs bf16 query, key and value}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention: the key agrees with the query on B, H and Dk.
func.func @attention_key_shape(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x6xf32>, %v: tensor<2x4x9x8xf32>) {
  // expected-error @+1 {{key must be [B, H, Sk, Dk] with B, H, Dk of query [2, 4, 7, 8] but is [2, 4, 9, 6]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x9x6xf32>, tensor<2x4x9x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the value agrees with the query on B, H and with the key on Sk.
func.func @attention_value_shape(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x7x8xf32>) {
  // expected-error @+1 {{value must be [B, H, Sk, Dv] with B, H of query [2, 4, 7, 8] and Sk of key [2, 4, 9, 8] but is [2, 4, 7, 8]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the key-padding mask is [B, Sk].
func.func @attention_mask_shape(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x8xf32>, %pad: tensor<2x7xf32>) {
  // expected-error @+1 {{mask ([B, Sk]) must have shape [2, 9] but has [2, 7]}}
  %o, %lse = tg.attention %q, %k, %v mask %pad scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>, tensor<2x7xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: causal attention needs Sq == Sk.
func.func @attention_causal(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x8xf32>) {
  // expected-error @+1 {{causal attention needs as many queries as keys but has 7 and 9}}
  %o, %lse = tg.attention %q, %k, %v causal scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the scale is positive.
func.func @attention_scale(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) {
  // expected-error @+1 {{scale must be positive and finite but is -0.353553}}
  %o, %lse = tg.attention %q, %k, %v scale -0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the dropout rate lies in [0, 1).
func.func @attention_dropout_rate(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{dropout rate must be in [0, 1) but is 1.5}}
  %o, %lse = tg.attention %q, %k, %v key %key scale 0.353553385 dropout 1.5 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: op_id is >= 0.
func.func @attention_op_id(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{op_id must be >= 0 but is -7}}
  %o, %lse = tg.attention %q, %k, %v key %key scale 0.353553385 dropout 1.000000e-01 op_id -7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: a dropout rate > 0 needs a dropout key.
func.func @attention_dropout_key(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) {
  // expected-error @+1 {{dropout rate 0.1 needs a dropout key operand}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 1.000000e-01 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the output is [B, H, Sq, Dv].
func.func @attention_output_shape(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x16xf32>) {
  // expected-error @+1 {{output must have shape [2, 4, 7, 16] but has [2, 4, 7, 8]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x16xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  return
}

// -----

// tg.attention: the log-sum-exp is [B, H, Sq].
func.func @attention_lse_shape(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x8xf32>) {
  // expected-error @+1 {{lse must have shape [2, 4, 7] but has [2, 4, 9]}}
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x9xf32>)
  return
}

// -----

// tg.attention_grad: the shared operand rules apply (here: the mask is [B, Sk]).
func.func @attention_grad_mask_shape(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>,
                                     %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>, %pad: tensor<2x4x7xf32>) {
  // expected-error @+1 {{mask ([B, Sk]) must have shape [2, 7] but has [2, 4, 7]}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse mask %pad scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: the shared operand rules apply (here: dropout needs a key).
func.func @attention_grad_dropout_key(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>,
                                      %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{dropout rate 0.1 needs a dropout key operand}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal scale 0.353553385 dropout 1.000000e-01 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: the forward output is [B, H, Sq, Dv].
func.func @attention_grad_output_shape(%do: tensor<2x4x7x16xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>,
                                       %o: tensor<2x4x7x16xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{output must have shape [2, 4, 7, 8] but has [2, 4, 7, 16]}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
         tensor<2x4x7x16xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: the saved log-sum-exp is [B, H, Sq].
func.func @attention_grad_lse_shape(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>,
                                    %o: tensor<2x4x7x8xf32>, %lse: tensor<2x7xf32>) {
  // expected-error @+1 {{lse must have shape [2, 4, 7] but has [2, 7]}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
         tensor<2x4x7x8xf32>, tensor<2x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: grad has output's shape.
func.func @attention_grad_grad_type(%do: tensor<2x4x7x16xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>,
                                    %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{grad must have output's shape}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: query_grad has its input's shape.
func.func @attention_grad_query_grad_type(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>,
                                          %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{query_grad must have its input's shape}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x7x4x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: key_grad has its input's shape.
func.func @attention_grad_key_grad_type(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x8xf32>,
                                        %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{key_grad must have its input's shape}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32>)
  return
}

// -----

// tg.attention_grad: value_grad has its input's shape.
func.func @attention_grad_value_grad_type(%do: tensor<2x4x7x16xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x16xf32>,
                                          %o: tensor<2x4x7x16xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{value_grad must have its input's shape}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x16xf32>,
         tensor<2x4x7x16xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: the three gradients share one element type.
func.func @attention_grad_mixed_gradient_types(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xbf16>, %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{the three gradients must have one element type}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>)
  return
}

// -----

// tg.attention: a bf16 output (tg-fold-bf16-roundings) only with bf16
// products; and tg.attention_grad's output likewise.
func.func @attention_bf16_output_without_products(%q: tensor<2x4x7x8xbf16>) {
  // expected-error @+1 {{a bf16 output needs bf16_products}}
  %o, %lse = tg.attention %q, %q, %q scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) -> (tensor<2x4x7x8xbf16>, tensor<2x4x7xf32>)
  return
}

// -----

func.func @attention_grad_bf16_output_without_products(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xbf16>, %o: tensor<2x4x7x8xbf16>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{a bf16 output needs bf16_products}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xbf16>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return
}

// -----

// tg.attention_grad: bf16 gradients (tg-fold-bf16-roundings) only from a
// backward that multiplies in bf16.
func.func @attention_grad_bf16_gradients_without_products(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xbf16>, %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>) {
  // expected-error @+1 {{bf16 gradients need bf16_products}}
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Residual + dropout + LayerNorm or RMSNorm
//===----------------------------------------------------------------------===//

// tg.residual_layer_norm: the residual has rank >= 1.
func.func @residual_layer_norm_scalar(%x: tensor<f32>, %sub: tensor<f32>, %gamma: tensor<1xf32>, %beta: tensor<1xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{residual must have rank >= 1}}
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<f32>, tensor<1xf32>
  return
}

// -----

// tg.residual_layer_norm: its bf16 copy (tg-fold-bf16-roundings) has the
// result's shape.
func.func @residual_layer_norm_rounded_shape(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{rounded must have shape [2, 7, 16] but has [2, 16, 7]}}
  %y, %mean, %rstd, %yb = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32> rounded tensor<2x16x7xbf16>
  return
}

// -----

// tg.residual_layer_norm_grad: the bf16 copy of the sublayer's gradient has
// its shape.
func.func @residual_layer_norm_grad_rounded_shape(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{rounded must have shape [2, 7, 16] but has [14, 16]}}
  %dx, %ds, %dg, %db, %dsb = tg.residual_layer_norm_grad %dy, %y, %gamma, %beta, %rstd, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32> rounded tensor<14x16xbf16>
  return
}

// -----

// tg.fused_elementwise: a bf16 result is yielded by a tg.to_bf16 in the
// body, not by an f32 value.
func.func @fused_elementwise_bf16_result_of_f32(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{tg.yield must yield one value per result, of the results' types}}
  %r = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = tg.exp %a : tensor<4x8xf32>
    tg.yield %e : tensor<4x8xf32>
  }
  return %r : tensor<4x8xbf16>
}

// -----

// tg.residual_layer_norm: gamma is [D], D the residual's last dimension.
func.func @residual_layer_norm_gamma(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<7xf32>, %beta: tensor<7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{gamma must have shape [16] but has [7]}}
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<7xf32>
  return
}

// -----

// tg.residual_layer_norm: the dropout rate lies in [0, 1).
func.func @residual_layer_norm_rate(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{rate must be in [0, 1) but is 2}}
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 2.0 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.residual_layer_norm: op_id is >= 0.
func.func @residual_layer_norm_op_id(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{op_id must be >= 0 but is -4}}
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 1.000000e-01 op_id -4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.residual_layer_norm: epsilon is positive.
func.func @residual_layer_norm_epsilon(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{epsilon must be positive and finite but is 0}}
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 1.000000e-01 op_id 4 eps 0.0 : tensor<2x7x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.residual_layer_norm: AllTypesMatch<residual, sublayer, result>.
func.func @residual_layer_norm_sublayer_type(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x8xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that all of {residual, sublayer, result} have same type}}
  %y, %mean, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %beta, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: OptionalTypesMatchWith<gamma, beta>.
func.func @residual_layer_norm_beta_type(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<1x16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that gamma and beta have one type}}
  %y, %mean, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %beta, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<1x16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: OptionalTypesMatchWith, mean is the residual's shape without the last dimension.
func.func @residual_layer_norm_mean_type(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that per-row statistics have the residual's shape without the last dimension}}
  %y, %mean, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %beta, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x1xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: TypesMatchWith, rstd is the residual's shape without the last dimension.
func.func @residual_layer_norm_rstd_type(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that per-row statistics have the residual's shape without the last dimension}}
  %y, %mean, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %beta, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>, tensor<7x2xf32>)
  return
}

// -----

// tg.residual_layer_norm_grad: the shared operand rules apply (here: gamma is [D]).
func.func @residual_layer_norm_grad_gamma(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>,
                                          %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{gamma must have shape [16] but has [8]}}
  %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %dy, %y, %gamma, %beta, %rstd, %key
      rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<8xf32>
  return
}

// -----

// tg.residual_layer_norm_grad: the shared operand rules apply (here: op_id is >= 0).
func.func @residual_layer_norm_grad_op_id(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                          %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{op_id must be >= 0 but is -1}}
  %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %dy, %y, %gamma, %beta, %rstd, %key
      rate 1.000000e-01 op_id -1 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.residual_layer_norm_grad: AllTypesMatch<grad, result, residual_grad, sublayer_grad>.
func.func @residual_layer_norm_grad_grad_type(%dy: tensor<2x7x8xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                              %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that all of {grad, result, residual_grad, sublayer_grad} have same type}}
  %dx, %dsub, %dg, %db = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %beta, %rstd, %key) <{rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
      : (tensor<2x7x8xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x7xf32>, tensor<2xi32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// tg.residual_layer_norm_grad: AllTypesMatch<gamma, gamma_grad>.
func.func @residual_layer_norm_grad_gamma_grad_type(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                                    %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that all of {gamma, gamma_grad} have same type}}
  %dx, %dsub, %dg, %db = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %beta, %rstd, %key) <{rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x7xf32>, tensor<2xi32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<8xf32>, tensor<16xf32>)
  return
}

// -----

// tg.residual_layer_norm_grad: TypesMatchWith, rstd is the result's shape without the last dimension.
func.func @residual_layer_norm_grad_rstd_type(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                              %rstd: tensor<14xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that per-row statistics have the result's shape without the last dimension}}
  %dx, %dsub, %dg, %db = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %beta, %rstd, %key) <{rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<14xf32>, tensor<2xi32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// tg.residual_layer_norm_grad: OptionalTypesMatchWith<gamma, beta_grad>.
func.func @residual_layer_norm_grad_beta_grad_type(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                                   %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that gamma and beta's gradient have one type}}
  %dx, %dsub, %dg, %db = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %beta, %rstd, %key) <{rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x7xf32>, tensor<2xi32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<1x16xf32>)
  return
}

// -----

// tg.residual_layer_norm: kind layer (the default) needs beta.
func.func @residual_layer_norm_no_beta(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{kind layer needs beta}}
  %y, %mean, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: kind layer returns its mean.
func.func @residual_layer_norm_no_mean(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{kind layer needs mean}}
  %y, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %beta, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 0, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: kind rms has no beta.
func.func @residual_rms_norm_beta(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{kind rms has no beta}}
  %y, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %beta, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, kind = 1 : i32, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 0, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: kind rms has no mean.
func.func @residual_rms_norm_mean(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{kind rms has no mean}}
  %y, %mean, %rstd = "tg.residual_layer_norm"(%x, %sub, %gamma, %key) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>, kind = 1 : i32, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

// tg.residual_layer_norm: OptionalTypesMatchWith<residual, sum>.
func.func @residual_rms_norm_sum_type(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that the sum has the residual's type}}
  %y, %rstd, %h = tg.residual_layer_norm rms %x, %sub, %gamma, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<14x16xf32>
  return
}

// -----

// tg.residual_layer_norm: the kind rules hold with the RMSNorm syntax too
// (here: gamma is [D]).
func.func @residual_rms_norm_gamma(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<8xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{gamma must have shape [16] but has [8]}}
  %y, %rstd = tg.residual_layer_norm rms %x, %sub, %gamma, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<8xf32>
  return
}

// -----

// tg.residual_layer_norm_grad: kind rms has no beta.
func.func @residual_rms_norm_grad_beta(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                       %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{kind rms has no beta}}
  %dx, %dsub, %dg = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %beta, %rstd, %key) <{kind = 1 : i32, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x7xf32>, tensor<2xi32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>)
  return
}

// -----

// tg.residual_layer_norm_grad: kind layer returns beta's gradient.
func.func @residual_layer_norm_grad_no_beta_grad(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>,
                                                 %rstd: tensor<2x7xf32>, %key: tensor<2xi32>) {
  // expected-error @+1 {{kind layer needs beta_grad}}
  %dx, %dsub, %dg = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %beta, %rstd, %key) <{rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x7xf32>, tensor<2xi32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>)
  return
}

// -----

// tg.residual_layer_norm_grad: OptionalTypesMatchWith<result, sum_grad>.
func.func @residual_rms_norm_grad_sum_grad_type(%dy: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>,
                                                %rstd: tensor<2x7xf32>, %key: tensor<2xi32>, %dh: tensor<2x16x7xf32>) {
  // expected-error @+1 {{failed to verify that the sum's gradient has the result's type}}
  %dx, %dsub, %dg = "tg.residual_layer_norm_grad"(%dy, %y, %gamma, %rstd, %key, %dh) <{kind = 1 : i32, rate = 1.0e-01 : f32, op_id = 4 : i64, epsilon = 1.0e-06 : f32,
      operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 1, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0>}>
      : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<2x7xf32>, tensor<2xi32>, tensor<2x16x7xf32>)
        -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Post-autodiff fusion: elementwise groups and GEMM epilogues
//===----------------------------------------------------------------------===//

// tg.fused_elementwise: the body holds only elementwise tg ops and dropouts,
// not a softmax (a row reduction).
func.func @fused_elementwise_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{cannot be part of a tg.fused_elementwise body: only elementwise tg ops, tg.dropout, tg.dropout_grad and tg.to_bf16 can}}
    %0 = tg.softmax %a axis 1 : tensor<4x8xf32>
    tg.yield %0 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.fused_elementwise: every body op has the group's shape.
func.func @fused_elementwise_body_op_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{result has type 'tensor<2x16xf32>' but the group's shape is [4, 8]}}
    %0 = "tg.exp"(%a) : (tensor<4x8xf32>) -> tensor<2x16xf32>
    %1 = tg.neg %a : tensor<4x8xf32>
    tg.yield %1 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.fused_elementwise: it has at least one result.
func.func @fused_elementwise_no_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{must have at least one result}}
  tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> () {
  ^bb0(%a: tensor<4x8xf32>):
    tg.yield
  }
  return
}

// -----

// tg.fused_elementwise: all results have one type, the group's (the first's).
func.func @fused_elementwise_result_type(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  // expected-error @+1 {{results must all have the group's shape [4, 8] with f32 or bf16 elements but one is 'tensor<8x4xf32>'}}
  %r:2 = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %0 = tg.exp %a : tensor<4x8xf32>
    tg.yield %0, %0 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<8x4xf32>
}

// -----

// tg.fused_elementwise: the body has one argument per input.
func.func @fused_elementwise_argument_count(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{body has 2 arguments for 1 inputs}}
  %r = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %0 = tg.add %a, %b : tensor<4x8xf32>
    tg.yield %0 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.fused_elementwise: each body argument has its input's type.
func.func @fused_elementwise_argument_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{body argument #0 has type 'tensor<8x4xf32>' but input #0 has type 'tensor<4x8xf32>'}}
  %r = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %0 = tg.exp %a : tensor<8x4xf32>
    tg.yield %0 : tensor<8x4xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.fused_elementwise: an input has the group's shape (a broadcast belongs
// outside the group), unless it is a dropout key.
func.func @fused_elementwise_input_type(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{input #1 must have the group's shape [4, 8] with f32 or bf16 elements (or be a tensor<2xi32> dropout key, or a tensor<f32> read only as dropouts' run-time rate) but has type 'tensor<8xf32>'}}
  %r = tg.fused_elementwise(%x, %v) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %0 = tg.exp %a : tensor<4x8xf32>
    tg.yield %0 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.fused_elementwise: tg.yield yields one value per result.
func.func @fused_elementwise_yield_count(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+1 {{tg.yield must yield one value per result, of the results' types}}
  %r:2 = tg.fused_elementwise(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %0 = tg.exp %a : tensor<4x8xf32>
    tg.yield %0 : tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// tg.fused_elementwise: tg.yield yields values of the results' types.
func.func @fused_elementwise_yield_type(%x: tensor<4x8xf32>, %k: tensor<2xi32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{tg.yield must yield one value per result, of the results' types}}
  %r = tg.fused_elementwise(%x, %k) : (tensor<4x8xf32>, tensor<2xi32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %kk: tensor<2xi32>):
    %0 = tg.dropout %a, %kk rate 1.000000e-01 op_id 0 : tensor<4x8xf32>
    "tg.yield"(%kk) : (tensor<2xi32>) -> ()
  }
  return %r : tensor<4x8xf32>
}

// -----

// tg.yield: HasParent<FusedElementwiseOp>.
func.func @yield_outside(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expects parent op 'tg.fused_elementwise'}}
  tg.yield %x : tensor<4x8xf32>
}

// -----

// tg.linear: the input has rank >= 2.
func.func @linear_input_rank(%x: tensor<16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{input must have rank >= 2 but has shape [16]}}
  %y = tg.linear %x, %w, %b : tensor<16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// tg.linear: the weight is a [K, N] matrix, not batched.
func.func @linear_weight_rank(%x: tensor<2x7x16xf32>, %w: tensor<2x16x64xf32>, %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{weight must have rank 2 but has shape [2, 16, 64]}}
  %y = tg.linear %x, %w, %b : tensor<2x7x16xf32>, tensor<2x16x64xf32>, tensor<64xf32> -> tensor<2x7x64xf32>
  return %y : tensor<2x7x64xf32>
}

// -----

// tg.linear: the input's last dimension is the weight's K.
func.func @linear_contraction(%x: tensor<2x7x16xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{input's last dimension 16 must equal weight's rows 32 (input [2, 7, 16], weight [32, 64])}}
  %y = tg.linear %x, %w, %b : tensor<2x7x16xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<2x7x64xf32>
  return %y : tensor<2x7x64xf32>
}

// -----

// tg.linear: the bias is [N].
func.func @linear_bias_shape(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>, %b: tensor<16xf32>) -> tensor<2x7x64xf32> {
  // expected-error @+1 {{bias must have shape [64] but has [16]}}
  %y = tg.linear %x, %w, %b relu : tensor<2x7x16xf32>, tensor<16x64xf32>, tensor<16xf32> -> tensor<2x7x64xf32>
  return %y : tensor<2x7x64xf32>
}

// -----

// tg.linear: a pre-activation result only with an activation (without one
// it would be the result again).
func.func @linear_pre_without_activation(%x: tensor<2x16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{pre_activation result needs an activation}}
  %y, %p = tg.linear %x, %w, %b : tensor<2x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<2x64xf32>, tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// tg.linear: the pre-activation has the result's shape.
func.func @linear_pre_shape(%x: tensor<2x16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{pre_activation must have shape [2, 64] but has [2, 16]}}
  %y, %p = tg.linear %x, %w, %b gelu : tensor<2x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<2x64xf32>, tensor<2x16xf32>
  return %y : tensor<2x64xf32>
}

// -----

// tg.linear: a bf16 pre-activation needs bf16 operands, as the result.
func.func @linear_pre_type(%x: tensor<2x16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{result must be f32, or bf16 with bf16 operands, but is 'bf16' with 'f32' operands}}
  %y, %p = tg.linear %x, %w, %b silu : tensor<2x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<2x64xf32>, tensor<2x64xbf16>
  return %y : tensor<2x64xf32>
}

// -----

// tg.linear: the result is the input's shape with N as its last dimension.
func.func @linear_result_shape(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>, %b: tensor<64xf32>) -> tensor<2x7x16xf32> {
  // expected-error @+1 {{result must have shape [2, 7, 64] but has [2, 7, 16]}}
  %y = tg.linear %x, %w, %b : tensor<2x7x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Adam
//===----------------------------------------------------------------------===//

// tg.adam_update: beta1 lies in [0, 1).
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_beta1(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{beta1 must be in [0, 1) but is 1}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 1.0 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: beta2 lies in [0, 1).
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_beta2(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{beta2 must be in [0, 1) but is -0.5}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 -0.5 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: epsilon is positive.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_epsilon(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{epsilon must be positive and finite but is 0}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 0.0 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: lr is a scalar tensor<f32> (ODS TG_Scalar).
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_lr_type(%dw: tensor<16x16xf32>, %lr: tensor<1xf32>, %step: tensor<i32>) {
  // expected-error @+1 {{operand #1 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  "tg.adam_update"(%dw, %lr, %step) <{param = @w, moment1 = @adam.m.w, moment2 = @adam.v.w, beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-9 : f32}>
      : (tensor<16x16xf32>, tensor<1xf32>, tensor<i32>) -> ()
  return
}

// -----

// tg.adam_update: param must be a defined symbol.
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_param_undefined(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param @w is not defined}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: moment1 must name a tg.variable, not a func.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
func.func private @adam.m.w()
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_moment1_func(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{moment1 @adam.m.w names a 'func.func', not a tg.variable}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: param has grad's type.
tg.variable @w trainable init(xavier_uniform) : tensor<16x64xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_param_type(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param @w has type 'tensor<16x64xf32>' but the op uses it as 'tensor<16x16xf32>'}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: moment2 has grad's type.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16xf32>
func.func @adam_moment2_type(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{moment2 @adam.v.w has type 'tensor<16xf32>' but the op uses it as 'tensor<16x16xf32>'}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: param is trainable.
tg.variable @w init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @adam_not_trainable(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param @w must be a trainable variable}}
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.adam_update: param, moment1 and moment2 are three different variables.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
func.func @adam_repeated(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param, moment1 and moment2 must be three different variables but are @w, @adam.m.w, @adam.m.w}}
  tg.adam_update @w, @adam.m.w, @adam.m.w grad %dw lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.multi_adam_update: one param, moment1, moment2 and grad per entry.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_lengths(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{needs one param, moment1, moment2 and grad per entry but has 2, 2, 1 and 2}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: variables are named by flat symbols.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_nested_symbol(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{names variables by flat symbol (@name), not @adam::@m}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam::@m], [@adam.v.w, @adam.v.b] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: the hyperparameter rules of tg.adam_update apply
// (here: beta2 lies in [0, 1)).
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_beta2(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{beta2 must be in [0, 1) but is 1.5}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 1.5 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: the epsilon is positive.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_epsilon(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{epsilon must be positive and finite but is 0}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 0.0 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: every param is a defined symbol.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_param_undefined(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param @b is not defined}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: each entry's moments have its grad's type.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_moment_type(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{moment1 @adam.m.w has type 'tensor<16x16xf32>' but the op uses it as 'tensor<16xf32>'}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.w], [@adam.v.w, @adam.v.b] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: every param is trainable.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @multi_adam_not_trainable(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param @b must be a trainable variable}}
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%dw, %db) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// -----

// tg.multi_adam_update: an entry's param, moment1 and moment2 are three
// different variables.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
func.func @multi_adam_repeated(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{param, moment1 and moment2 must be three different variables but are @w, @adam.m.w, @adam.m.w}}
  tg.multi_adam_update [@w], [@adam.m.w], [@adam.m.w] grads(%dw) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// -----

// tg.multi_adam_update: a param is updated at most once.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.w2 init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w2 init(zeros) : tensor<16x16xf32>
func.func @multi_adam_param_twice(%dw: tensor<16x16xf32>, %dw2: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{uses variable @w in more than one entry (or role)}}
  tg.multi_adam_update [@w, @w], [@adam.m.w, @adam.m.w2], [@adam.v.w, @adam.v.w2] grads(%dw, %dw2) lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16x16xf32>
  return
}

// -----

// tg.fused_elementwise: the body ends in tg.yield (checked before the body's
// own terminator rule, so the verifier never reads a missing yield).
func.func @fused_no_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body must end in tg.yield}}
  %r = "tg.fused_elementwise"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %e = tg.exp %a : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// tg.fused_elementwise: an i32 input is a dropout key, so it is a
// tensor<2xi32>.
func.func @fused_bad_key(%x: tensor<4xf32>, %k: tensor<5x3xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{input #1 must have the group's shape [4] with f32 or bf16 elements (or be a tensor<2xi32> dropout key, or a tensor<f32> read only as dropouts' run-time rate) but has type 'tensor<5x3xi32>'}}
  %r = tg.fused_elementwise(%x, %k) : (tensor<4xf32>, tensor<5x3xi32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<5x3xi32>):
    %e = tg.exp %a : tensor<4xf32>
    tg.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// tg.multi_adam_update: at least one entry (the empty form cannot be printed
// back).
func.func @multi_adam_empty(%lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{must update at least one parameter}}
  "tg.multi_adam_update"(%lr, %step) {params = [], moments1 = [], moments2 = [], beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-9 : f32, operandSegmentSizes = array<i32: 0, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>, tensor<i32>) -> ()
  return
}

// -----

// tg.multi_adam_update: entries run as one kernel, so no two share a variable.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @u trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.u init(zeros) : tensor<4x4xf32>
func.func @multi_adam_shared_moment(%dw: tensor<4x4xf32>, %du: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{uses variable @adam.m.w in more than one entry (or role)}}
  tg.multi_adam_update [@w, @u], [@adam.m.w, @adam.m.w], [@adam.v.w, @adam.v.u] grads(%dw, %du) lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32>, tensor<4x4xf32>
  return
}

// -----

// tg.attention: a decoding position needs causal attention.
func.func @attention_position_not_causal(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %position: tensor<i32>) {
  // expected-error @+1 {{a position (one decoding step over a key cache) needs causal attention}}
  %o, %lse = tg.attention %q, %k, %v position %position scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x1x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<i32>) -> (tensor<2x4x1x8xf32>, tensor<2x4x1xf32>)
  return
}

// -----

// tg.attention: a decoding step's queries fit in its key cache.
func.func @attention_position_cache(%q: tensor<2x4x8x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %position: tensor<i32>) {
  // expected-error @+1 {{a decoding step's 8 queries exceed its cache of 7 keys}}
  %o, %lse = tg.attention %q, %k, %v causal position %position scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x8x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<i32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// tg.multi_adam_update: the optimizer step's controls come with the norm they
// produce.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
func.func @multi_adam_controls_without_norm(%dw: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>, %weight: tensor<f32>, %phase: tensor<i32>, %clip: tensor<f32>) {
  // expected-error @+1 {{takes weight, phase and clip together and then returns the gradient norm, or none of them}}
  "tg.multi_adam_update"(%dw, %lr, %step, %weight, %phase, %clip) {params = [@w], moments1 = [@adam.m.w], moments2 = [@adam.v.w], beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-9 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>} : (tensor<4x4xf32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>) -> ()
  return
}

// -----

// tg.multi_adam_update: weight decay is part of the optimizer step.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
func.func @multi_adam_decay_without_controls(%dw: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>, %wd: tensor<f32>) {
  // expected-error @+1 {{takes decay only with weight, phase and clip}}
  "tg.multi_adam_update"(%dw, %lr, %step, %wd) {params = [@w], moments1 = [@adam.m.w], moments2 = [@adam.v.w], beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-9 : f32, decays = array<i1: true>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>} : (tensor<4x4xf32>, tensor<f32>, tensor<i32>, tensor<f32>) -> ()
  return
}

// -----

// tg.multi_adam_update: one decay flag per entry.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
func.func @multi_adam_decay_flags(%dw: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>, %weight: tensor<f32>, %phase: tensor<i32>, %clip: tensor<f32>, %wd: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{needs one decay flag per entry but has 2 for 1}}
  %norm = tg.multi_adam_update [@w], [@adam.m.w], [@adam.v.w] grads(%dw) lr %lr step %step weight %weight phase %phase clip %clip decay %wd on [true, false] beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32> -> tensor<f32>
  return %norm : tensor<f32>
}

// -----

// tg.multi_adam_update: run-time betas and epsilon come together.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
func.func @multi_adam_run_time_beta1_alone(%dw: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>, %weight: tensor<f32>, %phase: tensor<i32>, %clip: tensor<f32>, %b1: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{takes run-time beta1, beta2 and eps together, or none of them}}
  %norm = tg.multi_adam_update [@w], [@adam.m.w], [@adam.v.w] grads(%dw) lr %lr step %step weight %weight phase %phase clip %clip beta1 0.9 run_time %b1 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32> -> tensor<f32>
  return %norm : tensor<f32>
}

// -----

// tg.multi_adam_update: run-time betas and epsilon belong to the optimizer
// step (with its controls).
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
func.func @multi_adam_run_time_without_controls(%dw: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>, %b1: tensor<f32>, %b2: tensor<f32>, %eps: tensor<f32>) {
  // expected-error @+1 {{takes run-time beta1, beta2 and eps only with weight, phase and clip}}
  tg.multi_adam_update [@w], [@adam.m.w], [@adam.v.w] grads(%dw) lr %lr step %step beta1 0.9 run_time %b1 beta2 0.98 run_time %b2 eps 1.0e-9 run_time %eps : tensor<4x4xf32>
  return
}

// -----

// tg.multi_adam_update: a run-time beta is an f32 scalar.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
func.func @multi_adam_run_time_type(%dw: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>, %weight: tensor<f32>, %phase: tensor<i32>, %clip: tensor<f32>, %b1: tensor<i32>, %b2: tensor<f32>, %eps: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'tg.multi_adam_update' op operand #6 must be}}
  %norm = "tg.multi_adam_update"(%dw, %lr, %step, %weight, %phase, %clip, %b1, %b2, %eps) {params = [@w], moments1 = [@adam.m.w], moments2 = [@adam.v.w], beta1 = 0.9 : f32, beta2 = 0.98 : f32, epsilon = 1.0e-9 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 1, 1, 1>} : (tensor<4x4xf32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %norm : tensor<f32>
}

// -----

// tg.cross_entropy: a run-time smoothing is an f32 scalar.
func.func @cross_entropy_run_time_smoothing_type(%logits: tensor<2x7x100xf32>, %tgt: tensor<2x7xi32>, %ls: tensor<2xf32>) {
  // expected-error @+1 {{operand #2 must be}}
  %loss, %ntok = "tg.cross_entropy"(%logits, %tgt, %ls) {smoothing = 1.000000e-01 : f32, ignore_index = 0 : i32} : (tensor<2x7x100xf32>, tensor<2x7xi32>, tensor<2xf32>) -> (tensor<f32>, tensor<i32>)
  return
}

// -----

// tg.all_reduce: something to sum.
func.func @all_reduce_nothing() {
  // expected-error @+1 {{must reduce at least one tensor}}
  "tg.all_reduce"() : () -> ()
  return
}

// -----

// A GEMM's bf16 result is the rounding of bf16 products' f32 sums: f32
// operands have none.
func.func @matmul_bf16_result_f32_operands(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{result must be f32, or bf16 with bf16 operands, but is 'bf16' with 'f32' operands}}
  %c = tg.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xbf16>
  return
}

// -----

// tg.linear: the same rule.
func.func @linear_bf16_result_f32_operands(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{result must be f32, or bf16 with bf16 operands, but is 'bf16' with 'f32' operands}}
  %y = tg.linear %x, %w, %b relu : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xbf16>
  return
}

// -----

// expected-error @+1 {{weight_decay applies to trainable variables only}}
tg.variable @frozen weight_decay(true) init(zeros) : tensor<4x4xf32>
