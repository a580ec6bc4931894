// tg-adam after tg-autodiff: per parameter, moments @adam.m.<p> / @adam.v.<p>
// (zeros, not trainable) declared right after it; one tg.multi_adam_update
// (the optimizer step) over every gradient; the gradients leave the results
// and the step's gradient norm becomes the last one; lr, step and the
// optimizer's controls (grad_weight, update_phase, clip_norm, weight_decay)
// and Adam's run-time hyperparameters (adam_beta1, adam_beta2, adam_eps, the
// update's run_time operands; the attributes are the defaults) become the
// last arguments, and label_smoothing where the loss has cross-entropies;
// @loss becomes @train_step. AdamW decays the
// matrices, not the rank-1 parameters nor the embedding tables, unless a
// variable says otherwise.
//
// The hyperparameters come from the module's tg.optimizer when it declares
// them, else from the pass options (defaults 0.9, 0.98, 1e-9).
// RUN: tgc-opt --split-input-file --tg-autodiff --tg-adam %s | FileCheck %s --check-prefixes=CHECK,DEFAULT
// RUN: tgc-opt --split-input-file --tg-autodiff '--tg-adam=beta1=0.5 beta2=0.75 epsilon=0.125' %s | FileCheck %s --check-prefixes=CHECK,OPTS
// RUN: tgc-opt --split-input-file --tg-autodiff '--tg-adam=step-function=my_step' %s | FileCheck %s --check-prefix=RENAME

// No tg.optimizer: the options decide. A non-trainable i32 variable between
// the parameters gets no moments; the i32 second result and the named input
// are kept.
tg.variable @w trainable init(xavier_uniform) : tensor<4x3xf32>
tg.variable @count init(zeros) : tensor<i32>
tg.variable @b trainable init(zeros) : tensor<3xf32>
func.func @loss(%x: tensor<2x4xf32> {tg.name = "x"}) -> (tensor<f32>, tensor<i32>) {
  %w = tg.load @w : tensor<4x3xf32>
  %b = tg.load @b : tensor<3xf32>
  %c = tg.load @count : tensor<i32>
  %y = tg.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %bb = tg.broadcast %b dims [1] : tensor<3xf32> -> tensor<2x3xf32>
  %z = tg.add %y, %bb : tensor<2x3xf32>
  %l = tg.reduce_sum %z dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l, %c : tensor<f32>, tensor<i32>
}

// CHECK-LABEL: tg.variable @w trainable init(xavier_uniform) : tensor<4x3xf32>
// CHECK-NEXT: tg.variable @adam.m.w init(zeros) : tensor<4x3xf32>
// CHECK-NEXT: tg.variable @adam.v.w init(zeros) : tensor<4x3xf32>
// CHECK-NEXT: tg.variable @count init(zeros) : tensor<i32>
// CHECK-NEXT: tg.variable @b trainable init(zeros) : tensor<3xf32>
// CHECK-NEXT: tg.variable @adam.m.b init(zeros) : tensor<3xf32>
// CHECK-NEXT: tg.variable @adam.v.b init(zeros) : tensor<3xf32>
// CHECK-NEXT: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32> {tg.name = "x"},
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {tg.name = "lr"},
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<i32> {tg.name = "step"},
// CHECK-SAME: %[[WEIGHT:[a-z0-9]+]]: tensor<f32> {tg.name = "grad_weight"},
// CHECK-SAME: %[[PHASE:[a-z0-9]+]]: tensor<i32> {tg.name = "update_phase"},
// CHECK-SAME: %[[CLIP:[a-z0-9]+]]: tensor<f32> {tg.name = "clip_norm"},
// CHECK-SAME: %[[WD:[a-z0-9]+]]: tensor<f32> {tg.name = "weight_decay"},
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<f32> {tg.name = "adam_beta1"},
// CHECK-SAME: %[[B2:[a-z0-9]+]]: tensor<f32> {tg.name = "adam_beta2"},
// CHECK-SAME: %[[EPS:[a-z0-9]+]]: tensor<f32> {tg.name = "adam_eps"})
// CHECK-SAME: -> (tensor<f32>, tensor<i32>, tensor<f32> {tg.name = "grad_norm"}) {
// CHECK: %[[C:.*]] = tg.load @count : tensor<i32>
// CHECK: %[[L:.*]] = tg.reduce_sum %{{.*}} dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
// CHECK: %[[DB:.*]] = tg.reduce_sum %{{.*}} dims [0] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.matmul %[[X]], %{{.*}} transpose_lhs : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// DEFAULT-NEXT: %[[NORM:.*]] = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[DW]], %[[DB]]) lr %[[LR]] step %[[STEP]] weight %[[WEIGHT]] phase %[[PHASE]] clip %[[CLIP]] decay %[[WD]] on [true, false] beta1 0.899999976 run_time %[[B1]] beta2 9.800000e-01 run_time %[[B2]] eps 9.99999971E-10 run_time %[[EPS]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<f32>
// OPTS-NEXT: %[[NORM:.*]] = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b] grads(%[[DW]], %[[DB]]) lr %[[LR]] step %[[STEP]] weight %[[WEIGHT]] phase %[[PHASE]] clip %[[CLIP]] decay %[[WD]] on [true, false] beta1 5.000000e-01 run_time %[[B1]] beta2 7.500000e-01 run_time %[[B2]] eps 1.250000e-01 run_time %[[EPS]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<f32>
// CHECK-NEXT: return %[[L]], %[[C]], %[[NORM]] : tensor<f32>, tensor<i32>, tensor<f32>

// RENAME-LABEL: tg.variable @w trainable
// RENAME-NOT: @train_step
// RENAME: func.func @my_step(
// RENAME-SAME: {tg.name = "lr"}
// RENAME-SAME: {tg.name = "step"}
// RENAME-COUNT-1: tg.multi_adam_update

// -----

// The module's tg.optimizer overrides the options (the OPTS run gets the
// same numbers as the default run).
module attributes {tg.optimizer = {name = "adam", beta1 = 0.25 : f32, beta2 = 0.5 : f32, epsilon = 1.0e-03 : f32}} {
  tg.variable @p trainable init(zeros) : tensor<4xf32>
  func.func @loss() -> tensor<f32> {
    %p = tg.load @p : tensor<4xf32>
    %l = tg.reduce_sum %p dims [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// CHECK-LABEL: tg.variable @p trainable init(zeros) : tensor<4xf32>
// CHECK-NEXT: tg.variable @adam.m.p init(zeros) : tensor<4xf32>
// CHECK-NEXT: tg.variable @adam.v.p init(zeros) : tensor<4xf32>
// CHECK-NEXT: func.func @train_step(%[[LR:[a-z0-9]+]]: tensor<f32> {tg.name = "lr"}, %[[STEP:[a-z0-9]+]]: tensor<i32> {tg.name = "step"}, %{{.*}}: tensor<f32> {tg.name = "grad_weight"}, %{{.*}}: tensor<i32> {tg.name = "update_phase"}, %{{.*}}: tensor<f32> {tg.name = "clip_norm"}, %{{.*}}: tensor<f32> {tg.name = "weight_decay"}, %{{.*}}: tensor<f32> {tg.name = "adam_beta1"}, %{{.*}}: tensor<f32> {tg.name = "adam_beta2"}, %{{.*}}: tensor<f32> {tg.name = "adam_eps"}) -> (tensor<f32>, tensor<f32> {tg.name = "grad_norm"}) {
// CHECK: %[[DP:.*]] = tg.broadcast %{{.*}} dims [] : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: %[[NORM:.*]] = tg.multi_adam_update [@p], [@adam.m.p], [@adam.v.p] grads(%[[DP]]) lr %[[LR]] step %[[STEP]] weight %{{.*}} phase %{{.*}} clip %{{.*}} decay %{{.*}} on [false] beta1 2.500000e-01 run_time %{{.*}} beta2 5.000000e-01 run_time %{{.*}} eps 1.000000e-03 run_time %{{.*}} : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: return %{{.*}}, %[[NORM]] : tensor<f32>, tensor<f32>

// RENAME-LABEL: tg.variable @p trainable
// RENAME: func.func @my_step(

// -----

// A tg.optimizer that declares only beta1: beta2 and epsilon come from the
// options.
module attributes {tg.optimizer = {name = "adam", beta1 = 0.25 : f32}} {
  tg.variable @q trainable init(zeros) : tensor<4xf32>
  func.func @loss() -> tensor<f32> {
    %q = tg.load @q : tensor<4xf32>
    %l = tg.reduce_sum %q dims [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// CHECK-LABEL: tg.variable @q trainable init(zeros) : tensor<4xf32>
// DEFAULT: tg.multi_adam_update [@q], [@adam.m.q], [@adam.v.q] grads(%{{.*}}) {{.*}} beta1 2.500000e-01 run_time %{{.*}} beta2 9.800000e-01 run_time %{{.*}} eps 9.99999971E-10 run_time %{{.*}} : tensor<4xf32>
// OPTS: tg.multi_adam_update [@q], [@adam.m.q], [@adam.v.q] grads(%{{.*}}) {{.*}} beta1 2.500000e-01 run_time %{{.*}} beta2 7.500000e-01 run_time %{{.*}} eps 1.250000e-01 run_time %{{.*}} : tensor<4xf32>

// RENAME-LABEL: tg.variable @q trainable
// RENAME: func.func @my_step(

// -----

// Which parameters decay: the embedding table and the rank-1 @g do not, the
// matrix @w does; @keep and @bias say so themselves. The frozen @f (not
// trainable) gets no moments and no entry. The model's default decay is the
// runtime's: tg.optimizer may carry it.
module attributes {tg.optimizer = {name = "adam", weight_decay = 1.0e-01 : f32}} {
  tg.variable @table trainable init(normal, 1.0) : tensor<5x4xf32>
  tg.variable @w trainable init(xavier_uniform) : tensor<4x4xf32>
  tg.variable @keep trainable weight_decay(false) init(xavier_uniform) : tensor<4x4xf32>
  tg.variable @bias trainable weight_decay(true) init(zeros) : tensor<4xf32>
  tg.variable @g trainable init(ones) : tensor<4xf32>
  tg.variable @f init(xavier_uniform) : tensor<4x4xf32>
  func.func @loss(%ids: tensor<2xi32> {tg.name = "ids"}) -> tensor<f32> {
    %t = tg.load @table : tensor<5x4xf32>
    %e = tg.embedding %t[%ids] : tensor<5x4xf32>, tensor<2xi32> -> tensor<2x4xf32>
    %w = tg.load @w : tensor<4x4xf32>
    %k = tg.load @keep : tensor<4x4xf32>
    %f = tg.load @f : tensor<4x4xf32>
    %y = tg.matmul %e, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %y2 = tg.matmul %y, %k : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %y3 = tg.matmul %y2, %f : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %b = tg.load @bias : tensor<4xf32>
    %g = tg.load @g : tensor<4xf32>
    %bg = tg.mul %b, %g : tensor<4xf32>
    %bb = tg.broadcast %bg dims [1] : tensor<4xf32> -> tensor<2x4xf32>
    %z = tg.add %y3, %bb : tensor<2x4xf32>
    %l = tg.reduce_sum %z dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// CHECK-LABEL: tg.variable @table trainable
// CHECK-NOT: @adam.m.f
// CHECK: tg.variable @f init(xavier_uniform) : tensor<4x4xf32>
// CHECK-NOT: @adam.m.f
// CHECK: tg.multi_adam_update [@table, @w, @keep, @bias, @g], {{.*}} decay %{{.*}} on [false, true, false, true, false] beta1

// -----

// A cross-entropy loss: its smoothing (0.1, compiled as the default) becomes
// the step's label_smoothing input, read by the loss and by its gradient.
tg.variable @u trainable init(xavier_uniform) : tensor<4x5xf32>
func.func @loss(%x: tensor<2x4xf32> {tg.name = "x"}, %t: tensor<2xi32> {tg.name = "t"}) -> (tensor<f32>, tensor<i32>) {
  %u = tg.load @u : tensor<4x5xf32>
  %y = tg.matmul %x, %u : tensor<2x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  %l, %n = tg.cross_entropy %y, %t smoothing 1.000000e-01 ignore 0 : tensor<2x5xf32>, tensor<2xi32>
  return %l, %n : tensor<f32>, tensor<i32>
}

// CHECK-LABEL: tg.variable @u trainable
// CHECK: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<f32> {tg.name = "adam_eps"},
// CHECK-SAME: %[[LS:[a-z0-9]+]]: tensor<f32> {tg.name = "label_smoothing"})
// CHECK: tg.cross_entropy %{{.*}}, %{{.*}} smoothing 1.000000e-01 run_time %[[LS]] ignore 0
// CHECK: tg.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} smoothing 1.000000e-01 run_time %[[LS]] ignore 0

// RENAME-LABEL: tg.variable @u trainable
// RENAME: func.func @my_step(

// -----

// Dropout sites (forward and backward) sharing one compiled rate read the
// step's dropout input; a site compiled at another rate would keep its own.
tg.variable @z trainable init(xavier_uniform) : tensor<2x4xf32>
func.func @loss(%key: tensor<2xi32> {tg.name = "dropout_key"}) -> tensor<f32> {
  %z = tg.load @z : tensor<2x4xf32>
  %y = tg.dropout %z, %key rate 2.500000e-01 op_id 3 : tensor<2x4xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: tg.variable @z trainable
// CHECK: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<f32> {tg.name = "adam_eps"},
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<f32> {tg.name = "dropout"})
// CHECK: tg.dropout %{{.*}}, %{{.*}} rate 2.500000e-01 run_time %[[P]] op_id 3
// CHECK: tg.dropout_grad %{{.*}}, %{{.*}} rate 2.500000e-01 run_time %[[P]] op_id 3

// RENAME-LABEL: tg.variable @z trainable
// RENAME: func.func @my_step(
