// tgc parses a tg module, verifies it and prints it back (to stdout or -o).
// RUN: tgc --emit=tg %s | FileCheck %s
// RUN: tgc %s --emit=tg -o %t && FileCheck %s < %t
// RUN: tgc --emit=tg %s | tgc --emit=tg - | FileCheck %s

tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>

// CHECK: tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
// CHECK-LABEL: func.func @project
func.func @project(%x: tensor<2x7x16xf32>) -> tensor<2x7x16xf32> {
  // CHECK-NEXT: %[[W:.*]] = tg.load @w : tensor<16x16xf32>
  %w = tg.load @w : tensor<16x16xf32>
  // CHECK-NEXT: %[[Y:.*]] = tg.matmul %{{.*}}, %[[W]] : tensor<2x7x16xf32>, tensor<16x16xf32> -> tensor<2x7x16xf32>
  %y = tg.matmul %x, %w : tensor<2x7x16xf32>, tensor<16x16xf32> -> tensor<2x7x16xf32>
  // CHECK-NEXT: return %[[Y]]
  return %y : tensor<2x7x16xf32>
}
