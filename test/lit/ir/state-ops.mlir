// Round trip of the state ops: variables, loads, stores, constants, Adam.
// RUN: tgc-opt %s | tgc-opt | FileCheck %s
// RUN: tgc-opt %s --mlir-print-op-generic | tgc-opt | FileCheck %s

// CHECK: tg.variable @encoder.layer0.self_attn.w_q trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @encoder.layer0.self_attn.w_q trainable init(xavier_uniform) : tensor<16x16xf32>
// CHECK: tg.variable @embedding trainable init(normal, 2.500000e-01) : tensor<100x16xf32>
tg.variable @embedding trainable init(normal, 0.25) : tensor<100x16xf32>
// CHECK: tg.variable @bias trainable init(uniform, 1.000000e-01) : tensor<16xf32>
tg.variable @bias trainable init(uniform, 0.1) : tensor<16xf32>
// CHECK: tg.variable @ln.gamma trainable init(ones) : tensor<16xf32>
tg.variable @ln.gamma trainable init(ones) : tensor<16xf32>
// CHECK: tg.variable @adam.m.w_q init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.w_q init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w_q init(zeros) : tensor<16x16xf32>
// CHECK: tg.variable @step init(zeros) : tensor<i32>
tg.variable @step init(zeros) : tensor<i32>
// CHECK: tg.variable @decode.keys cache init(zeros) : tensor<2x4x7x8xf32>
tg.variable @decode.keys cache init(zeros) : tensor<2x4x7x8xf32>

// CHECK-LABEL: func.func @store_slice
func.func @store_slice(%k: tensor<2x4x1x8xf32>, %position: tensor<i32>) {
  // CHECK-NEXT: tg.store_slice %{{.*}}, @decode.keys[%{{.*}}] axis 2 : tensor<2x4x1x8xf32>
  tg.store_slice %k, @decode.keys[%position] axis 2 : tensor<2x4x1x8xf32>
  return
}

// CHECK-LABEL: func.func @load_store
func.func @load_store(%next: tensor<i32>) -> tensor<16x16xf32> {
  // CHECK-NEXT: %[[W:.*]] = tg.load @encoder.layer0.self_attn.w_q : tensor<16x16xf32>
  %w = tg.load @encoder.layer0.self_attn.w_q : tensor<16x16xf32>
  // CHECK-NEXT: tg.store %{{.*}}, @step : tensor<i32>
  tg.store %next, @step : tensor<i32>
  // CHECK-NEXT: return %[[W]]
  return %w : tensor<16x16xf32>
}

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2x3xf32>, tensor<1x3xi32>) {
  // CHECK-NEXT: tg.constant dense<1.000000e+00> : tensor<2x3xf32>
  %one = tg.constant dense<1.0> : tensor<2x3xf32>
  // CHECK-NEXT: tg.constant dense<{{\[\[}}5, 6, 0]]> : tensor<1x3xi32>
  %ids = tg.constant dense<[[5, 6, 0]]> : tensor<1x3xi32>
  return %one, %ids : tensor<2x3xf32>, tensor<1x3xi32>
}

// CHECK-LABEL: func.func @adam
func.func @adam(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // CHECK-NEXT: tg.adam_update @encoder.layer0.self_attn.w_q, @adam.m.w_q, @adam.v.w_q grad %{{.*}} lr %{{.*}} step %{{.*}} beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>
  tg.adam_update @encoder.layer0.self_attn.w_q, @adam.m.w_q, @adam.v.w_q grad %dw lr %lr step %step
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// CHECK: tg.variable @adam.m.bias init(zeros) : tensor<16xf32>
tg.variable @adam.m.bias init(zeros) : tensor<16xf32>
tg.variable @adam.v.bias init(zeros) : tensor<16xf32>

// CHECK-LABEL: func.func @multi_adam
func.func @multi_adam(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // CHECK-NEXT: tg.multi_adam_update [@encoder.layer0.self_attn.w_q, @bias], [@adam.m.w_q, @adam.m.bias], [@adam.v.w_q, @adam.v.bias] grads(%{{.*}}, %{{.*}}) lr %{{.*}} step %{{.*}} beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>, tensor<16xf32>
  tg.multi_adam_update [@encoder.layer0.self_attn.w_q, @bias], [@adam.m.w_q, @adam.m.bias], [@adam.v.w_q, @adam.v.bias]
      grads(%dw, %db) lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32>
  return
}

// The optimizer step: weight, accumulation phase and clip in, the global
// gradient norm out.
// CHECK-LABEL: func.func @optimizer_step
func.func @optimizer_step(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>, %weight: tensor<f32>, %phase: tensor<i32>, %clip: tensor<f32>) -> tensor<f32> {
  // CHECK-NEXT: %[[NORM:.*]] = tg.multi_adam_update [@encoder.layer0.self_attn.w_q, @bias], [@adam.m.w_q, @adam.m.bias], [@adam.v.w_q, @adam.v.bias] grads(%{{.*}}, %{{.*}}) lr %{{.*}} step %{{.*}} weight %{{.*}} phase %{{.*}} clip %{{.*}} beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>, tensor<16xf32> -> tensor<f32>
  %norm = tg.multi_adam_update [@encoder.layer0.self_attn.w_q, @bias], [@adam.m.w_q, @adam.m.bias], [@adam.v.w_q, @adam.v.bias]
      grads(%dw, %db) lr %lr step %step weight %weight phase %phase clip %clip
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32> -> tensor<f32>
  // CHECK-NEXT: return %[[NORM]]
  return %norm : tensor<f32>
}

// Adam's betas and epsilon at run time: the attributes are the defaults.
// CHECK-LABEL: func.func @run_time_adam
func.func @run_time_adam(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i32>, %weight: tensor<f32>, %phase: tensor<i32>, %clip: tensor<f32>, %b1: tensor<f32>, %b2: tensor<f32>, %eps: tensor<f32>) -> tensor<f32> {
  // CHECK-NEXT: %[[NORM:.*]] = tg.multi_adam_update {{.*}} clip %{{.*}} beta1 0.899999976 run_time %arg7 beta2 9.800000e-01 run_time %arg8 eps 9.99999971E-10 run_time %arg9 : tensor<16x16xf32>, tensor<16xf32> -> tensor<f32>
  %norm = tg.multi_adam_update [@encoder.layer0.self_attn.w_q, @bias], [@adam.m.w_q, @adam.m.bias], [@adam.v.w_q, @adam.v.bias]
      grads(%dw, %db) lr %lr step %step weight %weight phase %phase clip %clip
      beta1 0.9 run_time %b1 beta2 0.98 run_time %b2 eps 1.0e-9 run_time %eps : tensor<16x16xf32>, tensor<16xf32> -> tensor<f32>
  return %norm : tensor<f32>
}

// The data-parallel sum of gradients: results of the operands' types.
// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%dw: tensor<16x16xf32>, %db: tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  // CHECK-NEXT: %[[SUMS:.*]]:2 = tg.all_reduce %{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16xf32>
  %sums:2 = tg.all_reduce %dw, %db : tensor<16x16xf32>, tensor<16xf32>
  // CHECK-NEXT: return %[[SUMS]]#0, %[[SUMS]]#1
  return %sums#0, %sums#1 : tensor<16x16xf32>, tensor<16xf32>
}
