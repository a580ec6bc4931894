// tg-softmax-last-axis: a softmax (and a softmax gradient) over an axis that
// is not the last becomes one over the last between two transposes that
// swap that axis with the last; one over the last axis is left alone.
// RUN: tgc-opt --tg-softmax-last-axis %s | FileCheck %s

// CHECK-LABEL: func.func @middle(
// CHECK-SAME: %[[X:.+]]: tensor<2x7x16xf32>, %[[DY:.+]]: tensor<2x7x16xf32>
// CHECK: %[[T:.+]] = tg.transpose %[[X]] permutation [0, 2, 1] : tensor<2x7x16xf32> -> tensor<2x16x7xf32>
// CHECK: %[[R:.+]] = tg.softmax %[[T]] axis 2 : tensor<2x16x7xf32>
// CHECK: %[[P:.+]] = tg.transpose %[[R]] permutation [0, 2, 1] : tensor<2x16x7xf32> -> tensor<2x7x16xf32>
// CHECK: %[[PT:.+]] = tg.transpose %[[P]] permutation [0, 2, 1]
// CHECK: %[[DT:.+]] = tg.transpose %[[DY]] permutation [0, 2, 1]
// CHECK: %[[G:.+]] = tg.softmax_grad %[[PT]], %[[DT]] axis 2 : tensor<2x16x7xf32>
// CHECK: %[[DX:.+]] = tg.transpose %[[G]] permutation [0, 2, 1] : tensor<2x16x7xf32> -> tensor<2x7x16xf32>
// CHECK: return %[[P]], %[[DX]]
func.func @middle(%x: tensor<2x7x16xf32>, %dy: tensor<2x7x16xf32>) -> (tensor<2x7x16xf32>, tensor<2x7x16xf32>) {
  %p = tg.softmax %x axis 1 : tensor<2x7x16xf32>
  %dx = tg.softmax_grad %p, %dy axis 1 : tensor<2x7x16xf32>
  return %p, %dx : tensor<2x7x16xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @first(
// CHECK: tg.transpose %{{.+}} permutation [2, 1, 0] : tensor<3x4x5xf32> -> tensor<5x4x3xf32>
// CHECK: tg.softmax %{{.+}} axis 2 : tensor<5x4x3xf32>
// CHECK: tg.transpose %{{.+}} permutation [2, 1, 0] : tensor<5x4x3xf32> -> tensor<3x4x5xf32>
func.func @first(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %p = tg.softmax %x axis 0 : tensor<3x4x5xf32>
  return %p : tensor<3x4x5xf32>
}

// CHECK-LABEL: func.func @last(
// CHECK-NEXT: %[[P:.+]] = tg.softmax %{{.+}} axis 2 : tensor<3x4x5xf32>
// CHECK-NEXT: return %[[P]]
func.func @last(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %p = tg.softmax %x axis 2 : tensor<3x4x5xf32>
  return %p : tensor<3x4x5xf32>
}
