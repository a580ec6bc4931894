// RUN: tgc-opt --tg-derive-predict %s | FileCheck %s
// An extra term (L2 on the logits' weight): @predict returns the logits of
// the cross-entropy the loss adds it to.
// CHECK-LABEL: func.func @predict(%{{.*}}: tensor<2x3xi32> {tg.name = "target_in_ids"}) -> tensor<2x3x5xf32>
// CHECK-NEXT: tg.load @e
// CHECK-NEXT: tg.embedding
// CHECK-NEXT: return
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

