// tg-plan-memory puts a tg.embedding_grad's sum in its addend's bytes where
// the addend dies there and is not what the scatter reads, even when the
// sum is a gradient (the addend then lives in the gradient region from its
// definition on); elsewhere the sum gets bytes of its own (the kernel
// copies the addend first). Tables are 64x16 f32, 4096 bytes; the scattered
// rows 8x16, 512 bytes.
// RUN: tgc-opt --tg-plan-memory --split-input-file %s | FileCheck %s

// A tied table's gradient: the projection's term %p, a temporary, dies at
// the scatter, which makes the gradient Adam reads. The sum is made in %p's
// bytes, in the gradient region after the reused part (the rows at 0, the
// 64-byte loss at 512): %p and the sum both at 576, one 4096-byte class.
tg.variable @w trainable init(ones) : tensor<64x16xf32>
tg.variable @adam.m.w init(zeros) : tensor<64x16xf32>
tg.variable @adam.v.w init(zeros) : tensor<64x16xf32>
func.func @train_step(%x: tensor<64x16xf32>, %ids: tensor<8xi32>, %lr: tensor<f32>, %t: tensor<i32>) -> tensor<f32> {
  %p = tg.exp %x : tensor<64x16xf32>
  %rows = tg.embedding %x[%ids] : tensor<64x16xf32>, tensor<8xi32> -> tensor<8x16xf32>
  %g = tg.embedding_grad %rows[%ids] plus %p : tensor<8x16xf32>, tensor<8xi32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %l = tg.reduce_sum %rows dims [0, 1] : tensor<8x16xf32> -> tensor<f32>
  tg.multi_adam_update [@w], [@adam.m.w], [@adam.v.w] grads(%g) lr %lr step %t beta1 0.9 beta2 0.98 eps 1.0e-9 : tensor<64x16xf32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: arena = 4672 : i64, gradients = 4096 : i64, {{.*}} scratch = 576 : i64, unplanned = 4672 : i64
// CHECK-NEXT: tg.exp {{.*}} {tg.arena_offsets = array<i64: 576>}
// CHECK-NEXT: tg.embedding {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.embedding_grad {{.*}} plus {{.*}} {tg.arena_offsets = array<i64: 576>}

// -----

// The addend is read after the scatter: the sum gets bytes of its own.
func.func @train_step(%x: tensor<64x16xf32>, %ids: tensor<8xi32>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %p = tg.exp %x : tensor<64x16xf32>
  %rows = tg.embedding %x[%ids] : tensor<64x16xf32>, tensor<8xi32> -> tensor<8x16xf32>
  %g = tg.embedding_grad %rows[%ids] plus %p : tensor<8x16xf32>, tensor<8xi32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %q = tg.exp %p : tensor<64x16xf32>
  return %g, %q : tensor<64x16xf32>, tensor<64x16xf32>
}
// %p [0, 3] and %g [2, 4] overlap: 0 and 4096 (the largest first), the rows
// after them; %q writes over %p, which dies at it.
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.embedding {{.*}} {tg.arena_offsets = array<i64: 8192>}
// CHECK-NEXT: tg.embedding_grad {{.*}} plus {{.*}} {tg.arena_offsets = array<i64: 4096>}
// CHECK-NEXT: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}

// -----

// An argument is not the arena's: the sum goes to the arena.
func.func @train_step(%x: tensor<64x16xf32>, %ids: tensor<8xi32>) -> tensor<64x16xf32> {
  %rows = tg.embedding %x[%ids] : tensor<64x16xf32>, tensor<8xi32> -> tensor<8x16xf32>
  %g = tg.embedding_grad %rows[%ids] plus %x : tensor<8x16xf32>, tensor<8xi32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return %g : tensor<64x16xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.embedding {{.*}} {tg.arena_offsets = array<i64: 4096>}
// CHECK-NEXT: tg.embedding_grad {{.*}} plus {{.*}} {tg.arena_offsets = array<i64: 0>}
