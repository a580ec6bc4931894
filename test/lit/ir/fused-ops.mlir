// Round trip of the fused ops the fusion passes produce and of their fused
// gradients; custom and generic forms.
// RUN: tgc-opt %s | tgc-opt | FileCheck %s
// RUN: tgc-opt %s --mlir-print-op-generic | tgc-opt | FileCheck %s

// CHECK-LABEL: func.func @attention_self_causal(
func.func @attention_self_causal(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>, %key: tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} mask %{{[a-z_0-9]+}} key %{{[a-z_0-9]+}} causal scale 0.353553385 dropout 1.000000e-01 op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} mask %{{[a-z_0-9]+}} key %{{[a-z_0-9]+}} causal scale 0.353553385 dropout 1.000000e-01 op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  %o, %lse = tg.attention %q, %k, %v mask %pad key %key causal scale 0.353553385 dropout 0.1 op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %dq, %dk, %dv = tg.attention_grad %o, %q, %k, %v, %o, %lse mask %pad key %key causal scale 0.353553385 dropout 0.1 op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  return %dq, %dk, %dv : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @attention_cross_no_dropout(
func.func @attention_cross_no_dropout(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x6xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} scale 0.353553385 dropout 0.000000e+00 op_id 0 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} scale 0.353553385 dropout 0.000000e+00 op_id 0 : (tensor<2x4x5x6xf32>, tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>, tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>)
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  %dq, %dk, %dv = tg.attention_grad %o, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x6xf32>, tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>, tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>)
  return %dq, %dk, %dv : tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>
}

// CHECK-LABEL: func.func @attention_sequence_major(
func.func @attention_sequence_major(%q: tensor<2x5x4x8xf32>, %k: tensor<2x9x4x8xf32>, %v: tensor<2x9x4x6xf32>, %pad: tensor<2x9xf32>) -> (tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x6xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} mask %{{[a-z_0-9]+}} sequence_major scale 0.353553385 dropout 0.000000e+00 op_id 2 : (tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x6xf32>, tensor<2x9xf32>) -> (tensor<2x5x4x6xf32>, tensor<2x5x4xf32>)
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} mask %{{[a-z_0-9]+}} sequence_major scale 0.353553385 dropout 0.000000e+00 op_id 2 :
  %o, %lse = tg.attention %q, %k, %v mask %pad sequence_major scale 0.353553385 dropout 0.0 op_id 2 : (tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x6xf32>, tensor<2x9xf32>) -> (tensor<2x5x4x6xf32>, tensor<2x5x4xf32>)
  %dq, %dk, %dv = tg.attention_grad %o, %q, %k, %v, %o, %lse mask %pad sequence_major scale 0.353553385 dropout 0.0 op_id 2 : (tensor<2x5x4x6xf32>, tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x6xf32>, tensor<2x5x4x6xf32>, tensor<2x5x4xf32>, tensor<2x9xf32>) -> (tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x6xf32>)
  return %dq, %dk, %dv : tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x6xf32>
}

// CHECK-LABEL: func.func @residual_layer_norm(
func.func @residual_layer_norm(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.residual_layer_norm %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} rate 1.000000e-01 op_id 4 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.residual_layer_norm_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} rate 1.000000e-01 op_id 4 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key rate 0.1 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %y, %y, %gamma, %beta, %rstd, %key rate 0.1 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %dx, %dsub, %dg, %db : tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>
}


// The RMSNorm kind (no beta, no mean, no beta gradient) keeping the sum of
// a pre-LN block, whose gradient the backward takes; and a LayerNorm keeping
// it too.
// CHECK-LABEL: func.func @residual_rms_norm(
func.func @residual_rms_norm(%x: tensor<2x7x16xf32>, %sub: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %key: tensor<2xi32>, %dh: tensor<2x7x16xf32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<2x7x16xf32>) {
  // CHECK-NEXT: %[[Y:[a-z_0-9]+]], %[[RSTD:[a-z_0-9]+]], %[[H:[a-z_0-9]+]] = tg.residual_layer_norm rms %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} rate 1.000000e-01 op_id 4 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.residual_layer_norm_grad rms %[[Y]], %[[Y]], %{{[a-z_0-9]+}}, %[[RSTD]], %{{[a-z_0-9]+}} sum_grad %[[H]] rate 1.000000e-01 op_id 4 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.residual_layer_norm %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} rate 0.000000e+00 op_id 0 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<2x7x16xf32>
  %y, %rstd, %h = tg.residual_layer_norm rms %x, %sub, %gamma, %key rate 0.1 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<2x7x16xf32>
  %dx, %dsub, %dg = tg.residual_layer_norm_grad rms %y, %y, %gamma, %rstd, %key sum_grad %h rate 0.1 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %z, %mean2, %rstd2, %h2 = tg.residual_layer_norm %h, %sub, %gamma, %beta, %key rate 0.0 op_id 0 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32> sum tensor<2x7x16xf32>
  return %dx, %dsub, %dg, %h2 : tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<16xf32>, tensor<2x7x16xf32>
}

// An elementwise group with a dropout key among its inputs and two results
// (the pre-dropout sum is used outside the group too).
// CHECK-LABEL: func.func @fused_elementwise(
func.func @fused_elementwise(%x: tensor<2x7x16xf32>, %pe: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}:2 = tg.fused_elementwise(%{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}) : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: tensor<2x7x16xf32>, %[[P:[a-z_0-9]+]]: tensor<2x7x16xf32>, %[[K:[a-z_0-9]+]]: tensor<2xi32>):
  // CHECK-NEXT: %[[S:[a-z_0-9]+]] = tg.scale %[[A]] by 4.000000e+00 : tensor<2x7x16xf32>
  // CHECK-NEXT: %[[H:[a-z_0-9]+]] = tg.add %[[S]], %[[P]] : tensor<2x7x16xf32>
  // CHECK-NEXT: %[[D:[a-z_0-9]+]] = tg.dropout %[[H]], %[[K]] rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
  // CHECK-NEXT: tg.yield %[[H]], %[[D]] : tensor<2x7x16xf32>, tensor<2x7x16xf32>
  // CHECK-NEXT: }
  %h, %d = tg.fused_elementwise(%x, %pe, %key) : (tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  ^bb0(%a: tensor<2x7x16xf32>, %p: tensor<2x7x16xf32>, %k: tensor<2xi32>):
    %s = tg.scale %a by 4.0 : tensor<2x7x16xf32>
    %sum = tg.add %s, %p : tensor<2x7x16xf32>
    %drop = tg.dropout %sum, %k rate 0.1 op_id 2 : tensor<2x7x16xf32>
    tg.yield %sum, %drop : tensor<2x7x16xf32>, tensor<2x7x16xf32>
  }
  return %h, %d : tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// A dropout's run-time rate is an input too (read on the host, like the key).
// CHECK-LABEL: func.func @fused_elementwise_run_time_rate(
func.func @fused_elementwise_run_time_rate(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>, %rate: tensor<f32>) -> tensor<2x7x16xf32> {
  // CHECK-NEXT: tg.fused_elementwise(%arg0, %arg1, %arg2) : (tensor<2x7x16xf32>, tensor<2xi32>, tensor<f32>) -> tensor<2x7x16xf32> {
  // CHECK-NEXT: ^bb0(%[[A:[a-z_0-9]+]]: tensor<2x7x16xf32>, %[[K:[a-z_0-9]+]]: tensor<2xi32>, %[[R:[a-z_0-9]+]]: tensor<f32>):
  // CHECK-NEXT: %[[S:[a-z_0-9]+]] = tg.scale %[[A]] by 4.000000e+00 : tensor<2x7x16xf32>
  // CHECK-NEXT: tg.dropout %[[S]], %[[K]] rate 1.000000e-01 run_time %[[R]] op_id 2 : tensor<2x7x16xf32>
  %d = tg.fused_elementwise(%x, %key, %rate) : (tensor<2x7x16xf32>, tensor<2xi32>, tensor<f32>) -> tensor<2x7x16xf32> {
  ^bb0(%a: tensor<2x7x16xf32>, %k: tensor<2xi32>, %r: tensor<f32>):
    %s = tg.scale %a by 4.0 : tensor<2x7x16xf32>
    %drop = tg.dropout %s, %k rate 0.1 run_time %r op_id 2 : tensor<2x7x16xf32>
    tg.yield %drop : tensor<2x7x16xf32>
  }
  return %d : tensor<2x7x16xf32>
}

// Attention and the residual norm with run-time dropout rates.
// CHECK-LABEL: func.func @run_time_dropout_rates(
func.func @run_time_dropout_rates(%q: tensor<2x4x7x8xf32>, %key: tensor<2xi32>, %pa: tensor<f32>, %x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>, %p: tensor<f32>) -> (tensor<2x4x7x8xf32>, tensor<2x7x16xf32>) {
  // CHECK-NEXT: tg.attention %arg0, %arg0, %arg0 key %arg1 scale 0.353553385 dropout 1.000000e-01 run_time %arg2 op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2xi32>, tensor<f32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  // CHECK-NEXT: tg.attention_grad %{{.*}} key %arg1 scale 0.353553385 dropout 1.000000e-01 run_time %arg2 op_id 7 :
  // CHECK-NEXT: tg.residual_layer_norm %arg3, %arg3, %arg4, %arg5, %arg1 rate 1.000000e-01 run_time %arg6 op_id 4 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  // CHECK-NEXT: tg.residual_layer_norm_grad %{{.*}}, %arg1 rate 1.000000e-01 run_time %arg6 op_id 4 eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  %o, %lse = tg.attention %q, %q, %q key %key scale 0.353553385 dropout 0.1 run_time %pa op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2xi32>, tensor<f32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %dq, %dk, %dv = tg.attention_grad %o, %q, %q, %q, %o, %lse key %key scale 0.353553385 dropout 0.1 run_time %pa op_id 7 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7xf32>, tensor<2xi32>, tensor<f32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  %y, %mean, %rstd = tg.residual_layer_norm %x, %x, %gamma, %beta, %key rate 0.1 run_time %p op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %y, %y, %gamma, %beta, %rstd, %key rate 0.1 run_time %p op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %dq, %dx : tensor<2x4x7x8xf32>, tensor<2x7x16xf32>
}

// GEMMs with their bias epilogue, with and without an activation.
// CHECK-LABEL: func.func @linear(
func.func @linear(%x: tensor<2x7x16xf32>, %w1: tensor<16x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x16xf32>, %b2: tensor<16xf32>) -> tensor<2x7x16xf32> {
  // CHECK-NEXT: %[[H:[a-z_0-9]+]] = tg.linear %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} relu : tensor<2x7x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<2x7x64xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.linear %[[H]], %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<2x7x64xf32>, tensor<64x16xf32>, tensor<16xf32> -> tensor<2x7x16xf32>
  %h = tg.linear %x, %w1, %b1 relu : tensor<2x7x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<2x7x64xf32>
  %y = tg.linear %h, %w2, %b2 : tensor<2x7x64xf32>, tensor<64x16xf32>, tensor<16xf32> -> tensor<2x7x16xf32>
  return %y : tensor<2x7x16xf32>
}

// A product added to a summand in the GEMM, f32 and bf16 operands, batched
// with the transposes.
// CHECK-LABEL: func.func @matmul_add(
func.func @matmul_add(%dy: tensor<2x7x64xf32>, %w: tensor<16x64xf32>, %r: tensor<2x7x16xf32>, %q: tensor<2x7x8xbf16>, %s: tensor<2x7x7xf32>) -> (tensor<2x7x16xf32>, tensor<2x7x7xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.matmul_add %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} transpose_rhs : tensor<2x7x64xf32>, tensor<16x64xf32>, tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.matmul_add %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} transpose_rhs : tensor<2x7x8xbf16>, tensor<2x7x8xbf16>, tensor<2x7x7xf32> -> tensor<2x7x7xf32>
  %dx = tg.matmul_add %dy, %w, %r transpose_rhs : tensor<2x7x64xf32>, tensor<16x64xf32>, tensor<2x7x16xf32> -> tensor<2x7x16xf32>
  %t = tg.matmul_add %q, %q, %s transpose_rhs : tensor<2x7x8xbf16>, tensor<2x7x8xbf16>, tensor<2x7x7xf32> -> tensor<2x7x7xf32>
  return %dx, %t : tensor<2x7x16xf32>, tensor<2x7x7xf32>
}

// Each epilogue activation; GELU and SiLU also writing their input (the
// pre-activation their backward reads), bf16 beside an f32 result.
// CHECK-LABEL: func.func @linear_activations(
func.func @linear_activations(%x: tensor<14x16xbf16>, %w: tensor<16x64xbf16>, %b: tensor<64xf32>) -> (tensor<14x64xf32>, tensor<14x64xbf16>, tensor<14x64xf32>, tensor<14x64xf32>, tensor<14x64xf32>, tensor<14x64xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.linear %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} gelu : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>, tensor<14x64xbf16>
  // CHECK-NEXT: tg.linear {{.*}} gelu_tanh : {{.*}} -> tensor<14x64xf32>{{$}}
  // CHECK-NEXT: tg.linear {{.*}} silu : {{.*}} -> tensor<14x64xf32>, tensor<14x64xf32>{{$}}
  // CHECK-NEXT: tg.linear {{.*}} sigmoid : {{.*}} -> tensor<14x64xf32>{{$}}
  // CHECK-NEXT: tg.linear {{.*}} tanh : {{.*}} -> tensor<14x64xf32>{{$}}
  %g, %gpre = tg.linear %x, %w, %b gelu : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>, tensor<14x64xbf16>
  %t = tg.linear %x, %w, %b gelu_tanh : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>
  %s, %spre = tg.linear %x, %w, %b silu : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>, tensor<14x64xf32>
  %sg = tg.linear %x, %w, %b sigmoid : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>
  %th = tg.linear %x, %w, %b tanh : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>
  return %g, %gpre, %t, %s, %sg, %th : tensor<14x64xf32>, tensor<14x64xbf16>, tensor<14x64xf32>, tensor<14x64xf32>, tensor<14x64xf32>, tensor<14x64xf32>
}

// One incremental decoding step: a query at `position` over a key cache.
// CHECK-LABEL: func.func @attention_decoding_step(
func.func @attention_decoding_step(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %position: tensor<i32>) -> tensor<2x4x1x8xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.attention %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} causal position %{{[a-z_0-9]+}} scale 0.353553385 dropout 0.000000e+00 op_id 3 : (tensor<2x4x1x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<i32>) -> (tensor<2x4x1x8xf32>, tensor<2x4x1xf32>)
  %o, %lse = tg.attention %q, %k, %v causal position %position scale 0.353553385 dropout 0.0 op_id 3 : (tensor<2x4x1x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<i32>) -> (tensor<2x4x1x8xf32>, tensor<2x4x1xf32>)
  return %o : tensor<2x4x1x8xf32>
}

// The output projection with its loss and their gradients in row chunks
// (tg-fuse-output-loss); the workspace is [chunk, V].
// CHECK-LABEL: func.func @output_loss(
func.func @output_loss(%h: tensor<2x7x16xf32>, %w: tensor<100x16xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>) -> (tensor<f32>, tensor<i32>, tensor<2x7x16xf32>, tensor<100x16xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.output_loss %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} smoothing 1.000000e-01 ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<4x100xf32>
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss smoothing 0.1 ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<4x100xf32>
  return %loss, %tokens, %dh, %dw : tensor<f32>, tensor<i32>, tensor<2x7x16xf32>, tensor<100x16xf32>
}

// Its smoothing at run time (the attribute is the default).
// CHECK-LABEL: func.func @output_loss_run_time_smoothing(
func.func @output_loss_run_time_smoothing(%h: tensor<2x7x16xf32>, %w: tensor<100x16xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>, %ls: tensor<f32>) -> tensor<f32> {
  // CHECK-NEXT: tg.output_loss %arg0, %arg1, %arg2, %arg3 smoothing 1.000000e-01 run_time %arg4 ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<4x100xf32>
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss smoothing 0.1 run_time %ls ignore 0 chunk 4 : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<4x100xf32>
  return %loss : tensor<f32>
}

// Both on bf16 operands (tg-mixed-precision): the results and gradients are
// f32.
// CHECK-LABEL: func.func @bf16_gemms(
func.func @bf16_gemms(%x: tensor<14x16xbf16>, %w: tensor<16x64xbf16>, %b: tensor<64xf32>, %h: tensor<2x7x16xbf16>, %v: tensor<100x16xbf16>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>) -> (tensor<14x64xf32>, tensor<2x7x16xf32>, tensor<100x16xf32>) {
  // CHECK-NEXT: tg.linear %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} relu : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>
  // CHECK-NEXT: tg.output_loss {{.*}} : tensor<2x7x16xbf16>, tensor<100x16xbf16>, tensor<2x7xi32>, tensor<4x100xf32>
  %y = tg.linear %x, %w, %b relu : tensor<14x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<14x64xf32>
  %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %v, %tgt, %dloss smoothing 0.1 ignore 0 chunk 4 : tensor<2x7x16xbf16>, tensor<100x16xbf16>, tensor<2x7xi32>, tensor<4x100xf32>
  return %y, %dh, %dw : tensor<14x64xf32>, tensor<2x7x16xf32>, tensor<100x16xf32>
}

// A bf16 bias beside bf16 operands (tg-mixed-precision, for a result read
// only in bf16), with a bf16 or an f32 result.
// CHECK-LABEL: func.func @bf16_bias(
func.func @bf16_bias(%x: tensor<2x7x16xbf16>, %w: tensor<16x64xbf16>, %b: tensor<64xbf16>) -> (tensor<2x7x64xbf16>, tensor<2x7x64xf32>) {
  // CHECK-NEXT: tg.linear %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} relu : tensor<2x7x16xbf16>, tensor<16x64xbf16>, tensor<64xbf16> -> tensor<2x7x64xbf16>
  // CHECK-NEXT: tg.linear {{.*}} : tensor<2x7x16xbf16>, tensor<16x64xbf16>, tensor<64xbf16> -> tensor<2x7x64xf32>
  %y = tg.linear %x, %w, %b relu : tensor<2x7x16xbf16>, tensor<16x64xbf16>, tensor<64xbf16> -> tensor<2x7x64xbf16>
  %z = tg.linear %x, %w, %b : tensor<2x7x16xbf16>, tensor<16x64xbf16>, tensor<64xbf16> -> tensor<2x7x64xf32>
  return %y, %z : tensor<2x7x64xbf16>, tensor<2x7x64xf32>
}

// A layer's weight and bias gradients from one read of the output
// gradient, on f32 and on bf16 operands: f32 results.
// CHECK-LABEL: func.func @weight_bias_grad(
func.func @weight_bias_grad(%x: tensor<14x16xf32>, %dy: tensor<14x64xf32>, %xb: tensor<14x16xbf16>, %dyb: tensor<14x64xbf16>) -> (tensor<16x64xf32>, tensor<64xf32>, tensor<16x64xf32>, tensor<64xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.weight_bias_grad %arg0, %arg1 : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.weight_bias_grad %arg2, %arg3 : tensor<14x16xbf16>, tensor<14x64xbf16> -> tensor<16x64xf32>, tensor<64xf32>
  %dw, %db = tg.weight_bias_grad %x, %dy : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
  %dwb, %dbb = tg.weight_bias_grad %xb, %dyb : tensor<14x16xbf16>, tensor<14x64xbf16> -> tensor<16x64xf32>, tensor<64xf32>
  return %dw, %db, %dwb, %dbb : tensor<16x64xf32>, tensor<64xf32>, tensor<16x64xf32>, tensor<64xf32>
}

// Attention on bf16 queries, keys and values: output, lse and gradients f32.
// CHECK-LABEL: func.func @bf16_attention(
func.func @bf16_attention(%q: tensor<2x4x5x8xbf16>, %k: tensor<2x4x9x8xbf16>, %v: tensor<2x4x9x6xbf16>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) {
  // CHECK-NEXT: tg.attention {{.*}} : (tensor<2x4x5x8xbf16>, tensor<2x4x9x8xbf16>, tensor<2x4x9x6xbf16>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  // CHECK-NEXT: tg.attention_grad {{.*}} : (tensor<2x4x5x6xf32>, tensor<2x4x5x8xbf16>, tensor<2x4x9x8xbf16>, tensor<2x4x9x6xbf16>, tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>)
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x8xbf16>, tensor<2x4x9x8xbf16>, tensor<2x4x9x6xbf16>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  %dq, %dk, %dv = tg.attention_grad %o, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x6xf32>, tensor<2x4x5x8xbf16>, tensor<2x4x9x8xbf16>, tensor<2x4x9x6xbf16>, tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>)
  return %dq, %dk, %dv : tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>
}
