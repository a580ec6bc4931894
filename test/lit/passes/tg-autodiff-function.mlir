// tg-autodiff's `function` option: only the named function is
// differentiated; other functions (here the default name @loss) are left
// alone. A missing function is an error on the module.
// RUN: tgc-opt --tg-autodiff=function=step_loss %s | FileCheck %s
// RUN: not tgc-opt --tg-autodiff=function=missing %s 2>&1 | FileCheck %s --check-prefix=MISSING

tg.variable @w trainable init(normal, 0.02) : tensor<4xf32>

func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

func.func @step_loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %e = tg.exp %w : tensor<4xf32>
  %l = tg.reduce_sum %e dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss() -> tensor<f32> {
// CHECK-NEXT: tg.load @w
// CHECK-NEXT: tg.reduce_sum
// CHECK-NEXT: return
// CHECK-LABEL: func.func @step_loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w}) {
// CHECK: %[[E:.*]] = tg.exp
// CHECK: %[[DY:.*]] = tg.broadcast
// CHECK-NEXT: %[[DW:.*]] = tg.mul %[[DY]], %[[E]] : tensor<4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]

// MISSING: error: tg-autodiff: no function @missing to differentiate
