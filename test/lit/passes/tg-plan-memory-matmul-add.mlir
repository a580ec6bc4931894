// tg-plan-memory puts a tg.matmul_add's sum in its summand's bytes where the
// summand dies there and is neither one of the product's operands nor read
// by a GEMM running beside it (tg.beside_next); elsewhere the sum gets bytes of its own (the kernel
// copies the summand first). Every value is 64x64 f32, 16384 bytes.
// RUN: tgc-opt --tg-plan-memory --split-input-file %s | FileCheck %s

// The summand dies at the op: the same bytes, twice along the chain.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = tg.exp %x : tensor<64x64xf32>
  %s1 = tg.matmul_add %y, %y, %a : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %s2 = tg.matmul_add %x, %y, %s1 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %s2 : tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: 0>}

// -----

// The summand is read later: the sum goes elsewhere.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = tg.exp %x : tensor<64x64xf32>
  %s = tg.matmul_add %y, %y, %a : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %b = tg.exp %a : tensor<64x64xf32>
  return %s, %b : tensor<64x64xf32>, tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: 16384>}

// -----

// x + x W: the product reads the summand (here through a view), so the sums
// may not be written over it.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = tg.exp %x : tensor<64x64xf32>
  %v = tg.reshape %a : tensor<64x64xf32> -> tensor<64x64xf32>
  %s = tg.matmul_add %v, %y, %a : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: 16384>}

// -----

// An argument is not the arena's: the sum goes elsewhere.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %s = tg.matmul_add %y, %y, %x : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: 0>}

// -----

// Paired, the summand unread by the partner and dead at the pair's instant:
// in place, as the first of the pair and as the second.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = tg.exp %x : tensor<64x64xf32>
  %s = tg.matmul_add %y, %y, %a {tg.beside_next} : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %m = tg.matmul %x, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %b = tg.exp %y : tensor<64x64xf32>
  %n = tg.matmul %x, %x {tg.beside_next} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %t = tg.matmul_add %y, %x, %b : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %s, %m, %n, %t : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: [[A:[0-9]+]]>}
// CHECK-NEXT: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: [[A]]>, tg.beside_next}
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.exp {{.*}} {tg.arena_offsets = array<i64: [[B:[0-9]+]]>}
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: [[B]]>}

// -----

// Paired with a GEMM that reads the summand: the sums must not overwrite
// what the partner is reading at the same time, so they go elsewhere.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = tg.exp %x : tensor<64x64xf32>
  %s = tg.matmul_add %y, %y, %a {tg.beside_next} : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %m = tg.matmul %a, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %s, %m : tensor<64x64xf32>, tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.matmul_add {{.*}} {tg.arena_offsets = array<i64: 16384>, tg.beside_next}
// CHECK-NEXT: tg.matmul {{.*}} {tg.arena_offsets = array<i64: 32768>}
