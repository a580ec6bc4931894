// tg-plan-memory gives a result that no kernel writes no bytes (offset -1):
// a residual LayerNorm gradient's f32 sublayer gradient that nothing reads
// beside its rounded copy (a bf16 step). Read, or without the copy, it has
// its bytes as any result.
// RUN: tgc-opt --tg-plan-memory --split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK: tg.residual_layer_norm_grad {{.*}} {tg.arena_offsets = array<i64: {{[0-9]+}}, -1, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>}
func.func @train_step(%dy: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %rstd: tensor<2x4xf32>, %key: tensor<2xi32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x4x8xbf16>) {
  %dx, %dsub, %dg, %db, %dsub16 = tg.residual_layer_norm_grad %dy, %y, %g, %b, %rstd, %key rate 1.000000e-01 op_id 1 eps 1.0e-06 : tensor<2x4x8xf32>, tensor<8xf32> rounded tensor<2x4x8xbf16>
  return %dx, %dg, %db, %dsub16 : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @train_step(
// CHECK: tg.residual_layer_norm_grad {{.*}} {tg.arena_offsets = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>}
func.func @train_step(%dy: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %rstd: tensor<2x4xf32>, %key: tensor<2xi32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xbf16>) {
  %dx, %dsub, %dg, %db, %dsub16 = tg.residual_layer_norm_grad %dy, %y, %g, %b, %rstd, %key rate 1.000000e-01 op_id 1 eps 1.0e-06 : tensor<2x4x8xf32>, tensor<8xf32> rounded tensor<2x4x8xbf16>
  return %dx, %dsub, %dsub16 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @train_step(
// CHECK: tg.residual_layer_norm_grad {{.*}} {tg.arena_offsets = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>}
func.func @train_step(%dy: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %rstd: tensor<2x4xf32>, %key: tensor<2xi32>) -> (tensor<2x4x8xf32>, tensor<8xf32>) {
  %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %dy, %y, %g, %b, %rstd, %key rate 1.000000e-01 op_id 1 eps 1.0e-06 : tensor<2x4x8xf32>, tensor<8xf32>
  return %dx, %dg : tensor<2x4x8xf32>, tensor<8xf32>
}
