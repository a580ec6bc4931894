// tg-fuse-adam: the tg.adam_updates of a function that share lr, step and
// hyperparameters become one tg.multi_adam_update at the place of the last of
// them, with the params, moments and gradients listed in program order. Each
// set of updates with equal lr, step and hyperparameters merges on its own,
// and only when it has two or more; a load or store of an updated variable
// between the updates keeps them apart. Positive cases pin the whole function
// body with CHECK-NEXT, so no tg.adam_update of a merged set is left.
// RUN: tgc-opt --tg-fuse-adam --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-adam=report=true %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REPORT

// Three updates with one lr, step and set of hyperparameters: one
// tg.multi_adam_update where the last one was, after the step's store (a
// variable none of them updates), listing the three in program order.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @g trainable init(ones) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
tg.variable @adam.m.g init(zeros) : tensor<16xf32>
tg.variable @adam.v.g init(zeros) : tensor<16xf32>
tg.variable @step init(zeros) : tensor<i32>
func.func @three(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %dg: tensor<16xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  tg.store %t, @step : tensor<i32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  tg.adam_update @g, @adam.m.g, @adam.v.g grad %dg lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  return
}

// CHECK-LABEL: func.func @three(
// CHECK-SAME: %[[DW:[a-z0-9]+]]: tensor<16x16xf32>, %[[DB:[a-z0-9]+]]: tensor<16xf32>, %[[DG:[a-z0-9]+]]: tensor<16xf32>, %[[LR:[a-z0-9]+]]: tensor<f32>, %[[T:[a-z0-9]+]]: tensor<i32>) {
// CHECK-NEXT: tg.store %[[T]], @step : tensor<i32>
// CHECK-NEXT: tg.multi_adam_update [@w, @b, @g], [@adam.m.w, @adam.m.b, @adam.m.g], [@adam.v.w, @adam.v.b, @adam.v.g] grads(%[[DW]], %[[DB]], %[[DG]]) lr %[[LR]] step %[[T]] beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-adam: merged 3 tg.adam_update ops

// -----

// Two beta1s, interleaved: each set merges on its own, each at the place of
// its own last update.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @g trainable init(ones) : tensor<16xf32>
tg.variable @e trainable init(normal, 2.000000e-02) : tensor<8x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
tg.variable @adam.m.g init(zeros) : tensor<16xf32>
tg.variable @adam.v.g init(zeros) : tensor<16xf32>
tg.variable @adam.m.e init(zeros) : tensor<8x16xf32>
tg.variable @adam.v.e init(zeros) : tensor<8x16xf32>
func.func @two_sets(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %dg: tensor<16xf32>, %de: tensor<8x16xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  tg.adam_update @g, @adam.m.g, @adam.v.g grad %dg lr %lr step %t beta1 0.8 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  tg.adam_update @e, @adam.m.e, @adam.v.e grad %de lr %lr step %t beta1 0.8 beta2 0.98 eps 1.0e-9 : tensor<8x16xf32>
  return
}

// CHECK-LABEL: func.func @two_sets(
// CHECK-SAME: %[[DW:[a-z0-9]+]]: tensor<16x16xf32>, %[[DB:[a-z0-9]+]]: tensor<16xf32>, %[[DG:[a-z0-9]+]]: tensor<16xf32>, %[[DE:[a-z0-9]+]]: tensor<8x16xf32>, %[[LR:[a-z0-9]+]]: tensor<f32>, %[[T:[a-z0-9]+]]: tensor<i32>) {
// CHECK-NEXT: tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[DW]], %[[DB]]) lr %[[LR]] step %[[T]] beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>, tensor<16xf32>
// CHECK-NEXT: tg.multi_adam_update [@g, @e], [@adam.m.g, @adam.m.e], [@adam.v.g, @adam.v.e] grads(%[[DG]], %[[DE]]) lr %[[LR]] step %[[T]] beta1 8.000000e-01 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16xf32>, tensor<8x16xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-adam: merged 4 tg.adam_update ops

// -----

// Two beta1s where one of them has a single update: the pair merges, the
// lone update stays a tg.adam_update (before the merged op, in its place).
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @g trainable init(ones) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
tg.variable @adam.m.g init(zeros) : tensor<16xf32>
tg.variable @adam.v.g init(zeros) : tensor<16xf32>
func.func @one_lone(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %dg: tensor<16xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  tg.adam_update @g, @adam.m.g, @adam.v.g grad %dg lr %lr step %t beta1 0.8 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  return
}

// CHECK-LABEL: func.func @one_lone(
// CHECK-SAME: %[[DW:[a-z0-9]+]]: tensor<16x16xf32>, %[[DB:[a-z0-9]+]]: tensor<16xf32>, %[[DG:[a-z0-9]+]]: tensor<16xf32>, %[[LR:[a-z0-9]+]]: tensor<f32>, %[[T:[a-z0-9]+]]: tensor<i32>) {
// CHECK-NEXT: tg.adam_update @g, @adam.m.g, @adam.v.g grad %[[DG]] lr %[[LR]] step %[[T]] beta1 8.000000e-01 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16xf32>
// CHECK-NEXT: tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[DW]], %[[DB]]) lr %[[LR]] step %[[T]] beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>, tensor<16xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-adam: merged 2 tg.adam_update ops

// -----

// A load of a variable none of the updates touches, between them, does not
// keep them apart.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @g trainable init(ones) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @unrelated_load(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %t: tensor<i32>) -> tensor<16xf32> {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  %g = tg.load @g : tensor<16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  return %g : tensor<16xf32>
}

// CHECK-LABEL: func.func @unrelated_load(
// CHECK-SAME: %[[DW:[a-z0-9]+]]: tensor<16x16xf32>, %[[DB:[a-z0-9]+]]: tensor<16xf32>, %[[LR:[a-z0-9]+]]: tensor<f32>, %[[T:[a-z0-9]+]]: tensor<i32>) -> tensor<16xf32> {
// CHECK-NEXT: %[[G:[a-z0-9_]+]] = tg.load @g : tensor<16xf32>
// CHECK-NEXT: tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[DW]], %[[DB]]) lr %[[LR]] step %[[T]] beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971E-10 : tensor<16x16xf32>, tensor<16xf32>
// CHECK-NEXT: return %[[G]] : tensor<16xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-adam: merged 2 tg.adam_update ops

// -----

// Negative: a single update stays as it is.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
func.func @neg_single(%dw: tensor<16x16xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  return
}

// CHECK-LABEL: func.func @neg_single(
// CHECK-NOT: tg.multi_adam_update
// CHECK: tg.adam_update @w, @adam.m.w, @adam.v.w
// CHECK-NEXT: return
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops

// -----

// Negative: the updates differ in lr (two values) or in beta2 or epsilon, so
// each set has a single update and none merges.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @g trainable init(ones) : tensor<16xf32>
tg.variable @e trainable init(ones) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
tg.variable @adam.m.g init(zeros) : tensor<16xf32>
tg.variable @adam.v.g init(zeros) : tensor<16xf32>
tg.variable @adam.m.e init(zeros) : tensor<16xf32>
tg.variable @adam.v.e init(zeros) : tensor<16xf32>
func.func @neg_different(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %dg: tensor<16xf32>, %de: tensor<16xf32>, %lr: tensor<f32>, %lr2: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr2 step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  tg.adam_update @g, @adam.m.g, @adam.v.g grad %dg lr %lr step %t beta1 0.9 beta2 0.999 eps 1.0e-9 : tensor<16xf32>
  tg.adam_update @e, @adam.m.e, @adam.v.e grad %de lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-8 : tensor<16xf32>
  return
}

// CHECK-LABEL: func.func @neg_different(
// CHECK-NOT: tg.multi_adam_update
// CHECK: tg.adam_update @w,
// CHECK-NEXT: tg.adam_update @b,
// CHECK-NEXT: tg.adam_update @g,
// CHECK-NEXT: tg.adam_update @e,
// CHECK-NEXT: return
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops

// -----

// Negative: a load of an updated parameter between the updates would see the
// old value if the first update moved past it, so nothing merges.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @neg_load_between(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %t: tensor<i32>) -> tensor<16x16xf32> {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  %w = tg.load @w : tensor<16x16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  return %w : tensor<16x16xf32>
}

// CHECK-LABEL: func.func @neg_load_between(
// CHECK-NOT: tg.multi_adam_update
// CHECK: tg.adam_update @w,
// CHECK-NEXT: %[[W:[a-z0-9_]+]] = tg.load @w : tensor<16x16xf32>
// CHECK-NEXT: tg.adam_update @b,
// CHECK-NEXT: return %[[W]]
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops

// -----

// Negative: a load of a moment of a later update (its old value) between the
// updates keeps them apart as well.
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @neg_moment_load_between(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %lr: tensor<f32>, %t: tensor<i32>) -> tensor<16xf32> {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  %v = tg.load @adam.v.b : tensor<16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  return %v : tensor<16xf32>
}

// CHECK-LABEL: func.func @neg_moment_load_between(
// CHECK-NOT: tg.multi_adam_update
// CHECK: tg.adam_update @w,
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = tg.load @adam.v.b : tensor<16xf32>
// CHECK-NEXT: tg.adam_update @b,
// CHECK-NEXT: return %[[V]]
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops

// -----

// Negative: a store to a variable an update writes (here a moment; a
// parameter's only writer is the optimizer) between the updates keeps them
// apart too (the first update must land before it).
tg.variable @w trainable init(xavier_uniform) : tensor<16x16xf32>
tg.variable @b trainable init(zeros) : tensor<16xf32>
tg.variable @adam.m.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<16x16xf32>
tg.variable @adam.m.b init(zeros) : tensor<16xf32>
tg.variable @adam.v.b init(zeros) : tensor<16xf32>
func.func @neg_store_between(%dw: tensor<16x16xf32>, %db: tensor<16xf32>, %m0: tensor<16x16xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16x16xf32>
  tg.store %m0, @adam.m.w : tensor<16x16xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<16xf32>
  return
}

// CHECK-LABEL: func.func @neg_store_between(
// CHECK-NOT: tg.multi_adam_update
// CHECK: tg.adam_update @w,
// CHECK-NEXT: tg.store %{{[a-z0-9_]+}}, @adam.m.w : tensor<16x16xf32>
// CHECK-NEXT: tg.adam_update @b,
// CHECK-NEXT: return
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops

// -----

// One param updated twice: a merged op would update it twice in one kernel,
// so the updates stay apart, in order.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
// CHECK-LABEL: func.func @same_param_twice(
// CHECK-NEXT: tg.adam_update @w, {{.*}} grad %arg0
// CHECK-NEXT: tg.adam_update @w, {{.*}} grad %arg1
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops
func.func @same_param_twice(%g1: tensor<4x4xf32>, %g2: tensor<4x4xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %g1 lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32>
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %g2 lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32>
  return
}

// -----

// Another update of @w (other hyperparameters) between two mergeable ones:
// merging would move the first past it and swap the order of @w's updates.
tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
tg.variable @b trainable init(zeros) : tensor<4xf32>
tg.variable @adam.m.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.v.w init(zeros) : tensor<4x4xf32>
tg.variable @adam.m.b init(zeros) : tensor<4xf32>
tg.variable @adam.v.b init(zeros) : tensor<4xf32>
// CHECK-LABEL: func.func @update_between(
// CHECK-NEXT: tg.adam_update @w, {{.*}} beta1 0.899999976
// CHECK-NEXT: tg.adam_update @w, {{.*}} beta1 5.000000e-01
// CHECK-NEXT: tg.adam_update @b,
// CHECK-NOT: tg.multi_adam_update
// REPORT: remark: tg-fuse-adam: merged 0 tg.adam_update ops
func.func @update_between(%g1: tensor<4x4xf32>, %g2: tensor<4x4xf32>, %gb: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %g1 lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32>
  tg.adam_update @w, @adam.m.w, @adam.v.w grad %g2 lr %lr step %step beta1 0.5 beta2 0.98 eps 1.0e-9 : tensor<4x4xf32>
  tg.adam_update @b, @adam.m.b, @adam.v.b grad %gb lr %lr step %step beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<4xf32>
  return
}
