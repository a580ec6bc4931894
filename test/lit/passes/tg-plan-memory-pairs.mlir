// tg-plan-memory gives the two ops of a pair (tg.beside_next) one instant:
// what either reads lives until the second, what either makes from the
// first. Positions: 0 %a, 1 %m1, 2 %m2, 3 return; every value is 64x64 f32,
// 16384 bytes.
// Unpaired: %a [0, 1] dies at %m1, so %m2 [2, 3] takes its bytes (0) while
// %m1 [1, 3] goes to 16384. Paired: %a lives to 2 and %m2 starts at 1, so
// %m2 may not take %a's bytes, which %m1 reads while %m2 is written: 32768.
// RUN: tgc-opt --tg-plan-memory --split-input-file %s | FileCheck %s

func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = tg.exp %x : tensor<64x64xf32>
  %m1 = tg.matmul %a, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %m2 = tg.matmul %y, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %m1, %m2 : tensor<64x64xf32>, tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.matmul {{.*}} {tg.arena_offsets = array<i64: 16384>}
// CHECK-NEXT: tg.matmul {{.*}} {tg.arena_offsets = array<i64: 0>}

// -----

func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = tg.exp %x : tensor<64x64xf32>
  %m1 = tg.matmul %a, %y {tg.beside_next} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %m2 = tg.matmul %y, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %m1, %m2 : tensor<64x64xf32>, tensor<64x64xf32>
}
// CHECK-LABEL: func.func @train_step(
// CHECK: tg.exp {{.*}} {tg.arena_offsets = array<i64: 0>}
// CHECK-NEXT: tg.matmul {{.*}} {tg.arena_offsets = array<i64: 16384>, tg.beside_next}
// CHECK-NEXT: tg.matmul {{.*}} {tg.arena_offsets = array<i64: 32768>}
