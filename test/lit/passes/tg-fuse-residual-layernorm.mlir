// tg-fuse-residual-layernorm: layer_norm(x + dropout(y)) or
// rms_norm(x + dropout(y)), the sublayer wrapper, becomes one
// tg.residual_layer_norm (kind rms for rms_norm) taking the residual x and
// the sublayer output y; a sum that is also used after the norm (pre-LN: the
// next residual) is written by the fused op as well. A block whose dropout
// has another use, whose sum is used before the norm, or whose norm input is
// not an add, stays as it is. Positive cases pin the whole function body
// with CHECK-NEXT, so no add, dropout or norm is left behind.
// RUN: tgc-opt --tg-fuse-residual-layernorm --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-residual-layernorm=report=true %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REPORT
// Each block left unfused has a remark at its norm's line saying why; a
// norm of no residual add (nothing to fuse) has none.
// RUN: tgc-opt --tg-fuse-residual-layernorm %s --split-input-file --verify-diagnostics >/dev/null

// x + dropout(y), the DSL's order.
func.func @residual_dropout(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @residual_dropout(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[Y:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[G:[a-z0-9]+]]: tensor<16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x7x16xf32> {
// CHECK-NOT: tg.dropout
// CHECK-NOT: tg.layer_norm
// CHECK-NEXT: %[[Z:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = tg.residual_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]], %[[KEY]] rate 1.000000e-01 op_id 2 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
// CHECK-NEXT: return %[[Z]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-residual-layernorm: fused 1 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// dropout(y) + x: the commuted sum; x is still the residual.
func.func @commuted(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %d = tg.dropout %y, %key rate 3.000000e-01 op_id 4 : tensor<2x7x16xf32>
  %h = tg.add %d, %x : tensor<2x7x16xf32>
  %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-05 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @commuted(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[Y:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[G:[a-z0-9]+]]: tensor<16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT: %[[Z:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = tg.residual_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]], %[[KEY]] rate 3.000000e-01 op_id 4 eps 9.99999974E-6 : tensor<2x7x16xf32>, tensor<16xf32>
// CHECK-NEXT: return %[[Z]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-residual-layernorm: fused 1 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// No dropout: layer_norm(x + y) fuses with rate 0 and a constant key made
// once at the start of the function, shared by both blocks; the second block
// takes the first one's output as its residual.
func.func @no_dropout(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %y2: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<2x7x16xf32> {
  %h = tg.add %x, %y : tensor<2x7x16xf32>
  %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %h2 = tg.add %z, %y2 : tensor<2x7x16xf32>
  %z2 = tg.layer_norm %h2, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z2 : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @no_dropout(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[Y:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[Y2:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[G:[a-z0-9]+]]: tensor<16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT: %[[KEY:[a-z0-9_]+]] = tg.constant dense<0> : tensor<2xi32>
// CHECK-NEXT: %[[Z:[a-z0-9_]+]], %[[MEAN:[a-z0-9_]+]], %[[RSTD:[a-z0-9_]+]] = tg.residual_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]], %[[KEY]] rate 0.000000e+00 op_id 0 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
// CHECK-NEXT: %[[Z2:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = tg.residual_layer_norm %[[Z]], %[[Y2]], %[[G]], %[[B]], %[[KEY]] rate 0.000000e+00 op_id 0 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
// CHECK-NEXT: return %[[Z2]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-residual-layernorm: fused 2 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// Pre-LN: the sum is returned as well (another use of the add, after the
// norm); the fused op writes it (sum) and the return reads that.
func.func @sum_used_after(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z, %h : tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @sum_used_after(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[Y:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[G:[a-z0-9]+]]: tensor<16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
// CHECK-NEXT: %[[Z:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[H:[a-z0-9_]+]] = tg.residual_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]], %[[KEY]] rate 1.000000e-01 op_id 2 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<2x7x16xf32>
// CHECK-NEXT: return %[[Z]], %[[H]]
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-residual-layernorm: fused 1 residual + dropout + norm blocks (0 RMSNorm, 1 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// Negative: the dropout output has another use.
func.func @neg_dropout_used(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  // expected-remark @+1 {{LayerNorm left unfused with its residual add: the dropout's result or the sum has another use before the norm (the fused op keeps neither)}}
  %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z, %d : tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @neg_dropout_used(
// CHECK-NOT: tg.residual_layer_norm
// CHECK: %[[D:[a-z0-9_]+]] = tg.dropout
// CHECK-NEXT: %[[H:[a-z0-9_]+]] = tg.add %{{[a-z0-9_]+}}, %[[D]]
// CHECK-NEXT: %[[Z:[a-z0-9_]+]] = tg.layer_norm %[[H]]
// CHECK-NEXT: return %[[Z]], %[[D]]
// CHECK-NOT: tg.residual_layer_norm
// REPORT: remark: tg-fuse-residual-layernorm: fused 0 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 1 left unfused because the dropout has another use or the sum is used before the norm

// -----

// Negative: the layer_norm's input is not an add (a plain dropout); nothing
// to fuse and nothing counted as rejected.
func.func @neg_not_add(%y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %z = tg.layer_norm %d, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @neg_not_add(
// CHECK-NOT: tg.residual_layer_norm
// CHECK-NOT: tg.constant
// CHECK: %[[D:[a-z0-9_]+]] = tg.dropout
// CHECK-NEXT: %[[Z:[a-z0-9_]+]] = tg.layer_norm %[[D]]
// CHECK-NEXT: return %[[Z]]
// CHECK-NOT: tg.residual_layer_norm
// REPORT: remark: tg-fuse-residual-layernorm: fused 0 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// A gamma variable that starts at zero keeps the chain: the fused backward
// rebuilds the normalized rows as (y - beta) / gamma. One that starts at
// one fuses.
tg.variable @zero_gamma trainable init(zeros) : tensor<16xf32>
tg.variable @one_gamma trainable init(ones) : tensor<16xf32>
tg.variable @beta trainable init(zeros) : tensor<16xf32>
func.func @gamma_init(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  %g0 = tg.load @zero_gamma : tensor<16xf32>
  %g1 = tg.load @one_gamma : tensor<16xf32>
  %b = tg.load @beta : tensor<16xf32>
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  // expected-remark @+1 {{LayerNorm left unfused with its residual add: gamma starts with a zero (a variable of init zeros, or a constant), and the fused backward divides by it}}
  %z = tg.layer_norm %h, %g0, %b eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %d2 = tg.dropout %y, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
  %h2 = tg.add %x, %d2 : tensor<2x7x16xf32>
  %z2 = tg.layer_norm %h2, %g1, %b eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z, %z2 : tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @gamma_init(
// CHECK: %[[G0:[a-z0-9_]+]] = tg.load @zero_gamma
// CHECK: %[[G1:[a-z0-9_]+]] = tg.load @one_gamma
// CHECK: tg.layer_norm %{{[a-z0-9_]+}}, %[[G0]]
// CHECK: tg.residual_layer_norm %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[G1]]
// REPORT: remark: tg-fuse-residual-layernorm: fused 1 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 1 because gamma starts at zero

// -----

// So does a zero seen through a reshape of such a variable, or in a
// constant gamma (every gradient was NaN once fused); a constant without a
// zero fuses.
tg.variable @zero_gamma_rows trainable init(zeros) : tensor<1x16xf32>
tg.variable @beta trainable init(zeros) : tensor<16xf32>
func.func @gamma_seen_through(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  %rows = tg.load @zero_gamma_rows : tensor<1x16xf32>
  %g0 = tg.reshape %rows : tensor<1x16xf32> -> tensor<16xf32>
  %gc = tg.constant dense<[1.0, 0.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]> : tensor<16xf32>
  %g2 = tg.constant dense<2.0> : tensor<16xf32>
  %b = tg.load @beta : tensor<16xf32>
  %h = tg.add %x, %y : tensor<2x7x16xf32>
  // expected-remark @+1 {{LayerNorm left unfused with its residual add: gamma starts with a zero}}
  %z = tg.layer_norm %h, %g0, %b eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %h1 = tg.add %x, %z : tensor<2x7x16xf32>
  // expected-remark @+1 {{LayerNorm left unfused with its residual add: gamma starts with a zero}}
  %z1 = tg.layer_norm %h1, %gc, %b eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %h2 = tg.add %x, %z1 : tensor<2x7x16xf32>
  %z2 = tg.layer_norm %h2, %g2, %b eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z, %z1, %z2 : tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @gamma_seen_through(
// CHECK: tg.layer_norm
// CHECK: tg.layer_norm
// CHECK: tg.residual_layer_norm
// CHECK-NOT: tg.layer_norm
// REPORT: remark: tg-fuse-residual-layernorm: fused 1 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 2 because gamma starts at zero

// -----

// Post-LN with RMSNorm: rms_norm(x + dropout(y)) becomes the rms kind, which
// takes no beta and returns no mean.
func.func @rms_post_ln(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  %z = tg.rms_norm %h, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @rms_post_ln(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[Y:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[G:[a-z0-9]+]]: tensor<16xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT: %[[Z:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.residual_layer_norm rms %[[X]], %[[Y]], %[[G]], %[[KEY]] rate 1.000000e-01 op_id 2 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
// CHECK-NEXT: return %[[Z]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-residual-layernorm: fused 1 residual + dropout + norm blocks (1 RMSNorm, 0 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// Pre-LN with RMSNorm, two blocks as a model writes them: each residual
// stream value x_i is normalized for the next sublayer (here a tanh) and
// added to its output. The first norm reads the input alone (no add: it
// stays a tg.rms_norm); the second reads x1 = x0 + dropout(tanh(n0)),
// which the second residual also adds to, so the fused op keeps the sum.
// The last sum has one use, the final norm: it fuses without one.
func.func @rms_pre_ln(%x0: tensor<2x7x16xf32>, %g0: tensor<16xf32>, %g1: tensor<16xf32>, %gf: tensor<16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  %n0 = tg.rms_norm %x0, %g0 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %s0 = tg.tanh %n0 : tensor<2x7x16xf32>
  %d0 = tg.dropout %s0, %key rate 1.000000e-01 op_id 1 : tensor<2x7x16xf32>
  %x1 = tg.add %x0, %d0 : tensor<2x7x16xf32>
  %n1 = tg.rms_norm %x1, %g1 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %s1 = tg.tanh %n1 : tensor<2x7x16xf32>
  %d1 = tg.dropout %s1, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %x2 = tg.add %x1, %d1 : tensor<2x7x16xf32>
  %out = tg.rms_norm %x2, %gf eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %out : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @rms_pre_ln(
// CHECK-SAME: %[[X0:[a-z0-9]+]]: tensor<2x7x16xf32>, %[[G0:[a-z0-9]+]]: tensor<16xf32>, %[[G1:[a-z0-9]+]]: tensor<16xf32>, %[[GF:[a-z0-9]+]]: tensor<16xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT: %[[N0:[a-z0-9_]+]] = tg.rms_norm %[[X0]], %[[G0]] eps 9.99999997E-7
// CHECK-NEXT: %[[S0:[a-z0-9_]+]] = tg.tanh %[[N0]]
// CHECK-NEXT: %[[N1:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %[[X1:[a-z0-9_]+]] = tg.residual_layer_norm rms %[[X0]], %[[S0]], %[[G1]], %[[KEY]] rate 1.000000e-01 op_id 1 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<2x7x16xf32>
// CHECK-NEXT: %[[S1:[a-z0-9_]+]] = tg.tanh %[[N1]]
// CHECK-NEXT: %[[OUT:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.residual_layer_norm rms %[[X1]], %[[S1]], %[[GF]], %[[KEY]] rate 1.000000e-01 op_id 2 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
// CHECK-NEXT: return %[[OUT]] : tensor<2x7x16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-residual-layernorm: fused 2 residual + dropout + norm blocks (2 RMSNorm, 1 keeping the sum); 0 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// Negative: the sum is also used before the norm, where the fused op (at
// the norm) would not yet have written it.
func.func @neg_sum_used_before(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %key: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  %t = tg.tanh %h : tensor<2x7x16xf32>
  // expected-remark @+1 {{RMSNorm left unfused with its residual add: the dropout's result or the sum has another use before the norm (the fused op keeps neither)}}
  %z = tg.rms_norm %h, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z, %t : tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @neg_sum_used_before(
// CHECK-NOT: tg.residual_layer_norm
// CHECK: %[[H:[a-z0-9_]+]] = tg.add
// CHECK-NEXT: tg.tanh %[[H]]
// CHECK-NEXT: tg.rms_norm %[[H]]
// CHECK-NOT: tg.residual_layer_norm
// REPORT: remark: tg-fuse-residual-layernorm: fused 0 residual + dropout + norm blocks (0 RMSNorm, 0 keeping the sum); 1 left unfused because the dropout has another use or the sum is used before the norm, 0 because gamma starts at zero

// -----

// A dropout with a run-time rate (the step's dropout input): the fused op
// reads it too.
func.func @run_time_rate(%x: tensor<2x7x16xf32>, %y: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>, %rate: tensor<f32>) -> tensor<2x7x16xf32> {
  %d = tg.dropout %y, %key rate 1.000000e-01 run_time %rate op_id 2 : tensor<2x7x16xf32>
  %h = tg.add %x, %d : tensor<2x7x16xf32>
  %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %z : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @run_time_rate(
// CHECK-SAME: %[[KEY:[a-z0-9]+]]: tensor<2xi32>, %[[RATE:[a-z0-9]+]]: tensor<f32>)
// CHECK-NEXT: tg.residual_layer_norm %{{.*}}, %[[KEY]] rate 1.000000e-01 run_time %[[RATE]] op_id 2 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
