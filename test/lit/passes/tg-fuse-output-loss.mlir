// tg-fuse-output-loss: the output projection (matmul with a transposed
// [V, d] weight), its cross-entropy and gradient, and the two GEMMs the
// gradient feeds become one tg.output_loss with a [chunk, V] workspace; the
// chunk is capped at the rows. A logits value with another user, or a
// gradient with another user, stays as it is. Positive cases pin the whole
// body with CHECK-NEXT, so nothing of the group is left behind.
// RUN: tgc-opt --tg-fuse-output-loss=chunk-rows=8 --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-output-loss=chunk-rows=64 --split-input-file %s | FileCheck %s --check-prefix=CAP
// RUN: tgc-opt --tg-fuse-output-loss=chunk-rows=0 --split-input-file %s | FileCheck %s --check-prefix=OFF
// RUN: tgc-opt --tg-fuse-output-loss=report=true %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not tgc-opt --tg-fuse-output-loss=chunk-rows=-1 %s --split-input-file 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// The group tg-autodiff leaves at the end of a step.
// CHECK-LABEL: func.func @step_end(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<2x8x16xf32>, %[[W:[a-z0-9]+]]: tensor<100x16xf32>, %[[T:[a-z0-9]+]]: tensor<2x8xi32>, %[[ONE:[a-z0-9]+]]: tensor<f32>
// CHECK-NEXT: %[[LOSS:[a-z0-9_]+]], %[[TOK:[a-z0-9_]+]], %[[DH:[a-z0-9_]+]], %[[DW:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.output_loss %[[H]], %[[W]], %[[T]], %[[ONE]] smoothing 1.000000e-01 ignore 0 chunk 8 : tensor<2x8x16xf32>, tensor<100x16xf32>, tensor<2x8xi32>, tensor<8x100xf32>
// CHECK-NEXT: return %[[LOSS]], %[[TOK]], %[[DH]], %[[DW]]
// CAP-LABEL: func.func @step_end(
// CAP: chunk 16 : tensor<2x8x16xf32>, tensor<100x16xf32>, tensor<2x8xi32>, tensor<16x100xf32>
// OFF-LABEL: func.func @step_end(
// OFF-NOT: tg.output_loss
// OFF: tg.cross_entropy_grad
// REPORT: remark: tg-fuse-output-loss: fused 1 output projections with their loss, in chunks of 1024 rows
// NEGATIVE: error: tg-fuse-output-loss: chunk-rows must be 0 (off) or positive, not -1
func.func @step_end(%h: tensor<2x8x16xf32>, %w: tensor<100x16xf32>, %t: tensor<2x8xi32>, %one: tensor<f32>) -> (tensor<f32>, tensor<i32>, tensor<2x8x16xf32>, tensor<100x16xf32>) {
  %l = tg.matmul %h, %w transpose_rhs : tensor<2x8x16xf32>, tensor<100x16xf32> -> tensor<2x8x100xf32>
  %loss, %tokens = tg.cross_entropy %l, %t smoothing 0.1 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
  %dl = tg.cross_entropy_grad %one, %l, %t smoothing 0.1 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
  %dh = tg.matmul %dl, %w : tensor<2x8x100xf32>, tensor<100x16xf32> -> tensor<2x8x16xf32>
  %dl2 = tg.reshape %dl : tensor<2x8x100xf32> -> tensor<16x100xf32>
  %h2 = tg.reshape %h : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %dw = tg.matmul %dl2, %h2 transpose_lhs : tensor<16x100xf32>, tensor<16x16xf32> -> tensor<100x16xf32>
  return %loss, %tokens, %dh, %dw : tensor<f32>, tensor<i32>, tensor<2x8x16xf32>, tensor<100x16xf32>
}

// -----

// The logits are returned too (a user would read them): nothing fuses.
// CHECK-LABEL: func.func @logits_used(
// CHECK-NOT: tg.output_loss
// CHECK: tg.cross_entropy_grad
func.func @logits_used(%h: tensor<2x8x16xf32>, %w: tensor<100x16xf32>, %t: tensor<2x8xi32>, %one: tensor<f32>) -> (tensor<f32>, tensor<2x8x16xf32>, tensor<2x8x100xf32>) {
  %l = tg.matmul %h, %w transpose_rhs : tensor<2x8x16xf32>, tensor<100x16xf32> -> tensor<2x8x100xf32>
  %loss, %tokens = tg.cross_entropy %l, %t smoothing 0.1 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
  %dl = tg.cross_entropy_grad %one, %l, %t smoothing 0.1 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
  %dh = tg.matmul %dl, %w : tensor<2x8x100xf32>, tensor<100x16xf32> -> tensor<2x8x16xf32>
  return %loss, %dh, %l : tensor<f32>, tensor<2x8x16xf32>, tensor<2x8x100xf32>
}

// -----

// The gradient of the logits feeds something else too: nothing fuses.
// CHECK-LABEL: func.func @gradient_used(
// CHECK-NOT: tg.output_loss
// CHECK: tg.cross_entropy_grad
func.func @gradient_used(%h: tensor<2x8x16xf32>, %w: tensor<100x16xf32>, %t: tensor<2x8xi32>, %one: tensor<f32>) -> (tensor<f32>, tensor<2x8x16xf32>, tensor<2x8x100xf32>) {
  %l = tg.matmul %h, %w transpose_rhs : tensor<2x8x16xf32>, tensor<100x16xf32> -> tensor<2x8x100xf32>
  %loss, %tokens = tg.cross_entropy %l, %t smoothing 0.1 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
  %dl = tg.cross_entropy_grad %one, %l, %t smoothing 0.1 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
  %dh = tg.matmul %dl, %w : tensor<2x8x100xf32>, tensor<100x16xf32> -> tensor<2x8x16xf32>
  return %loss, %dh, %dl : tensor<f32>, tensor<2x8x16xf32>, tensor<2x8x100xf32>
}

// -----

// The backward written before the loss, its input gradient read in between:
// the fused op (at the loss) would come after that reader, so nothing fuses.
// CHECK-LABEL: func.func @gradient_read_before_loss(
// CHECK-NOT: tg.output_loss
// CHECK: tg.cross_entropy_grad
func.func @gradient_read_before_loss(%h: tensor<4x8xf32>, %w: tensor<16x8xf32>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<i32>, tensor<4x8xf32>) {
  %one = tg.constant dense<1.0> : tensor<f32>
  %logits = tg.matmul %h, %w transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %dl = tg.cross_entropy_grad %one, %logits, %t smoothing 0.0 ignore 0 : tensor<4x16xf32>, tensor<4xi32>
  %dh = tg.matmul %dl, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %n = tg.neg %dh : tensor<4x8xf32>
  %l, %c = tg.cross_entropy %logits, %t smoothing 0.0 ignore 0 : tensor<4x16xf32>, tensor<4xi32>
  return %l, %c, %n : tensor<f32>, tensor<i32>, tensor<4x8xf32>
}
