// Slices, concatenation and gathers keep the time axis when they work along
// another dimension: on the target (a table gathered by the target's ids,
// whose positions become the result's; its features cut, joined the other
// way round and gathered by a fixed list) and on what @decode_step
// recomputes (a positional encoding cut and gathered along its features:
// built for the one position first).
// RUN: tgc-opt --tg-derive-decoder %s | FileCheck %s

// CHECK-LABEL: func.func @decode_step(
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x1xi32> {tg.name = "target_in_ids"}, %[[POS:[a-z0-9]+]]: tensor<i32> {tg.name = "position"}) -> tensor<2x1x10xf32> {
// CHECK: %[[X:.+]] = tg.gather %{{.+}}[%[[IDS]]] dim 0 : tensor<10x8xf32>, tensor<2x1xi32> -> tensor<2x1x8xf32>
// CHECK-NEXT: %[[LO:.+]] = tg.slice %[[X]] dim 2 start 0 : tensor<2x1x8xf32> -> tensor<2x1x3xf32>
// CHECK-NEXT: %[[HI:.+]] = tg.slice %[[X]] dim 2 start 3 : tensor<2x1x8xf32> -> tensor<2x1x5xf32>
// CHECK-NEXT: %[[SW:.+]] = tg.concat %[[HI]], %[[LO]] dim 2 : tensor<2x1x5xf32>, tensor<2x1x3xf32> -> tensor<2x1x8xf32>
// CHECK: %[[P:.+]] = tg.gather %[[SW]][%{{.+}}] dim 2 : tensor<2x1x8xf32>, tensor<8xi32> -> tensor<2x1x8xf32>
// CHECK: %[[PE:.+]] = tg.positional_encoding offset %[[POS]] : tensor<1x16xf32>
// CHECK: tg.gather %[[PE]][%{{.+}}] dim 1 : tensor<1x16xf32>, tensor<8xi32> -> tensor<1x8xf32>
// CHECK: tg.slice %[[PE]] dim 1 start 4 : tensor<1x16xf32> -> tensor<1x8xf32>
// CHECK: tg.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<2x1x8xf32>, tensor<10x8xf32> -> tensor<2x1x10xf32>
module {
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %x = tg.gather %e[%tin] dim 0 : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %lo = tg.slice %x dim 2 start 0 : tensor<2x4x8xf32> -> tensor<2x4x3xf32>
    %hi = tg.slice %x dim 2 start 3 : tensor<2x4x8xf32> -> tensor<2x4x5xf32>
    %sw = tg.concat %hi, %lo dim 2 : tensor<2x4x5xf32>, tensor<2x4x3xf32> -> tensor<2x4x8xf32>
    %cols = tg.constant dense<[1, 0, 3, 2, 5, 4, 7, 6]> : tensor<8xi32>
    %p = tg.gather %sw[%cols] dim 2 : tensor<2x4x8xf32>, tensor<8xi32> -> tensor<2x4x8xf32>
    %pe = tg.positional_encoding : tensor<4x16xf32>
    %peg = tg.gather %pe[%cols] dim 1 : tensor<4x16xf32>, tensor<8xi32> -> tensor<4x8xf32>
    %pes = tg.slice %pe dim 1 start 4 : tensor<4x16xf32> -> tensor<4x8xf32>
    %pep = tg.add %peg, %pes : tensor<4x8xf32>
    %pe3 = tg.broadcast %pep dims [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
    %y = tg.add %p, %pe3 : tensor<2x4x8xf32>
    %l = tg.matmul %y, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
    return %l : tensor<2x4x10xf32>
  }
}
