// tg-all-reduce-gradients: one tg.all_reduce over the gradients of each
// tg.multi_adam_update, just before it, whose results the update reads
// instead; constant gradients (the same in every process) stay as they are.
// With tg-plan-memory after it, the sums live in their operands' bytes: the
// arena's gradient region, one contiguous run.
// RUN: tgc-opt --tg-all-reduce-gradients --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-all-reduce-gradients '--tg-plan-memory=function=' %s --split-input-file | FileCheck %s --check-prefix=PLAN

tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @step(%x: tensor<16x16xf32>, %y: tensor<16xf32>, %lr: tensor<f32>, %t: tensor<i32>, %wt: tensor<f32>, %ph: tensor<i32>, %c: tensor<f32>) -> tensor<f32> {
  %dw = tg.mul %x, %x : tensor<16x16xf32>
  %db = tg.add %y, %y : tensor<16xf32>
  %norm = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
      grads(%dw, %db) lr %lr step %t weight %wt phase %ph clip %c
      beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>, tensor<16xf32> -> tensor<f32>
  return %norm : tensor<f32>
}

// CHECK-LABEL: func.func @step(
// CHECK: %[[DW:.*]] = tg.mul
// CHECK-NEXT: %[[DB:.*]] = tg.add
// CHECK-NEXT: %[[SUMS:.*]]:2 = tg.all_reduce %[[DW]], %[[DB]] : tensor<16x16xf32>, tensor<16xf32>
// CHECK-NEXT: %[[NORM:.*]] = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[SUMS]]#0, %[[SUMS]]#1) lr
// CHECK-NEXT: return %[[NORM]]

// The gradients get the region after the reused part (64 bytes here: the
// norm), in program order, one after the other, and the sums the same
// offsets: one run of 1088 - 64 + 64 bytes to reduce, then the token count
// slot, summed in the same call.
// PLAN-LABEL: func.func @step(
// PLAN: tg.mul {{.*}}tg.arena_offsets = array<i64: 64>
// PLAN-NEXT: tg.add {{.*}}tg.arena_offsets = array<i64: 1088>
// PLAN-NEXT: tg.all_reduce {{.*}}tg.arena_offsets = array<i64: 64, 1088>, tg.token_count_offset = 1152 : i64

// -----

// A constant gradient is left out; a function without an update is left
// alone.
tg.variable @w trainable init(zeros) : tensor<4xf32>
tg.variable @b trainable init(zeros) : tensor<4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4xf32>
tg.variable @adam.m.b init(zeros) : tensor<4xf32>
tg.variable @adam.v.b init(zeros) : tensor<4xf32>
func.func @constant(%x: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  %dw = tg.mul %x, %x : tensor<4xf32>
  %db = tg.constant dense<0.0> : tensor<4xf32>
  tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
      grads(%dw, %db) lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4xf32>, tensor<4xf32>
  return
}
func.func @no_update(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tg.mul %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @constant(
// CHECK: %[[DW:.*]] = tg.mul
// CHECK-NEXT: %[[DB:.*]] = tg.constant
// CHECK-NEXT: %[[SUM:.*]] = tg.all_reduce %[[DW]] : tensor<4xf32>
// CHECK-NEXT: tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[SUM]], %[[DB]])
// CHECK-LABEL: func.func @no_update(
// CHECK-NOT: tg.all_reduce
// CHECK: return
