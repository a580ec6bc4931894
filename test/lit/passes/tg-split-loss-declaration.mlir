// A @loss declared without a body: tg-split-loss leaves it (it once
// crashed reading the missing body) and tg-autodiff says what is wrong.
// RUN: tgc-opt --tg-split-loss %s | FileCheck %s
// RUN: not tgc-opt --tg-split-loss --tg-autodiff %s 2>&1 | FileCheck %s --check-prefix=ERROR
// CHECK: func.func private @loss(tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
// ERROR: error: tg-autodiff: @loss must be a function with a body of one block
func.func private @loss(tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
