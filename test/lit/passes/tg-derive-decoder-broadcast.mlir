// A positional encoding that reaches the target through a broadcast whose
// time axis comes from operand dimension 1 (transposed, broadcast, transposed
// back): @decode_step recomputes the encoding for its one position and
// broadcasts that, instead of the whole table cut to one position (which
// failed verification).
// RUN: tgc-opt --tg-derive-decoder %s | FileCheck %s

// CHECK-LABEL: func.func @decode_step
// CHECK:      tg.positional_encoding offset %{{.*}} : tensor<1x8xf32>
// CHECK-NEXT: tg.transpose %{{.*}} permutation [1, 0] : tensor<1x8xf32> -> tensor<8x1xf32>
// CHECK-NEXT: tg.broadcast %{{.*}} dims [1, 2] : tensor<8x1xf32> -> tensor<2x8x1xf32>
// CHECK-NEXT: tg.transpose %{{.*}} permutation [0, 2, 1] : tensor<2x8x1xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT: tg.add %{{.*}}, %{{.*}} : tensor<2x1x8xf32>
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %pe = tg.positional_encoding : tensor<4x8xf32>
    %pt = tg.transpose %pe permutation [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %b3 = tg.broadcast %pt dims [1, 2] : tensor<8x4xf32> -> tensor<2x8x4xf32>
    %p3 = tg.transpose %b3 permutation [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
    %y = tg.add %x, %p3 : tensor<2x4x8xf32>
    %l = tg.matmul %y, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
    return %l : tensor<2x4x10xf32>
  }
}
