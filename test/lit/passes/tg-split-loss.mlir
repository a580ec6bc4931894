// tg-split-loss: a loss with an extra term also returns the cross-entropy,
// named, after its other results; autodiff and Adam keep it before the
// gradient norm. A loss that is the cross-entropy alone is left as it is,
// and so is a function that already returns the cross-entropy.
// RUN: tgc-opt --split-input-file --tg-split-loss %s | FileCheck %s
// RUN: tgc-opt --tg-split-loss --tg-split-loss --tg-autodiff --tg-adam %s --split-input-file | FileCheck %s --check-prefix=STEP

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: -> (tensor<f32>, tensor<i32>, tensor<f32> {tg.name = "cross_entropy"})
// CHECK: %[[CE:.+]], %[[N:.+]] = tg.cross_entropy
// CHECK: %[[L:.+]] = tg.add %[[CE]],
// CHECK: return %[[L]], %[[N]], %[[CE]] : tensor<f32>, tensor<i32>, tensor<f32>
// STEP-LABEL: func.func @train_step(
// STEP-SAME: -> (tensor<f32>, tensor<i32>, tensor<f32> {tg.name = "cross_entropy"}, tensor<f32> {tg.name = "grad_norm"})
tg.variable @e trainable init(normal, 1.0) : tensor<5x5xf32>
func.func @loss(%tin: tensor<2x3xi32> {tg.name = "target_in_ids"},
                %tout: tensor<2x3xi32> {tg.name = "target_out_ids"}) -> (tensor<f32>, tensor<i32>) {
  %e = tg.load @e : tensor<5x5xf32>
  %x = tg.embedding %e[%tin] : tensor<5x5xf32>, tensor<2x3xi32> -> tensor<2x3x5xf32>
  %ce, %n = tg.cross_entropy %x, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x3x5xf32>, tensor<2x3xi32>
  %sq = tg.mul %e, %e : tensor<5x5xf32>
  %l2 = tg.reduce_sum %sq dims [0, 1] : tensor<5x5xf32> -> tensor<f32>
  %aux = tg.scale %l2 by 1.000000e-04 : tensor<f32>
  %l = tg.add %ce, %aux : tensor<f32>
  return %l, %n : tensor<f32>, tensor<i32>
}

// -----

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: -> (tensor<f32>, tensor<i32>) {
// CHECK: return %{{.+}}, %{{.+}} : tensor<f32>, tensor<i32>
// STEP-LABEL: func.func @train_step(
// STEP-SAME: -> (tensor<f32>, tensor<i32>, tensor<f32> {tg.name = "grad_norm"})
tg.variable @e trainable init(normal, 1.0) : tensor<5x5xf32>
func.func @loss(%tin: tensor<2x3xi32> {tg.name = "target_in_ids"},
                %tout: tensor<2x3xi32> {tg.name = "target_out_ids"}) -> (tensor<f32>, tensor<i32>) {
  %e = tg.load @e : tensor<5x5xf32>
  %x = tg.embedding %e[%tin] : tensor<5x5xf32>, tensor<2x3xi32> -> tensor<2x3x5xf32>
  %ce, %n = tg.cross_entropy %x, %tout smoothing 1.000000e-01 ignore 0 : tensor<2x3x5xf32>, tensor<2x3xi32>
  return %ce, %n : tensor<f32>, tensor<i32>
}
