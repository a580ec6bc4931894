// tg-fuse-matmul-add: add(matmul(a, b), x), either order, where the add is
// the product's only reader, becomes tg.matmul_add a, b, x. It goes where
// the product was when x is ready by then (the backward's pairs stay
// together) and where the add was otherwise; of two such products the later
// takes the earlier as its summand, so a chain of sums is a chain of GEMMs.
// A product with another reader stays. Positive cases pin the whole body
// with CHECK-NEXT, so no add or matmul is left behind.
// RUN: tgc-opt --tg-fuse-matmul-add --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-matmul-add=report=true --split-input-file %s 2>&1 | FileCheck %s --check-prefix=REPORT

// The residual path's gradient plus an input gradient product: the fused
// op at the product's place, before the weight gradient it is paired with.
func.func @residual_first(%dy: tensor<4x8x64xf32>, %w: tensor<32x64xf32>, %x: tensor<32x32xf32>, %r: tensor<4x8x32xf32>) -> (tensor<4x8x32xf32>, tensor<32x64xf32>) {
  %dx = tg.matmul %dy, %w transpose_rhs : tensor<4x8x64xf32>, tensor<32x64xf32> -> tensor<4x8x32xf32>
  %dy2 = tg.reshape %dy : tensor<4x8x64xf32> -> tensor<32x64xf32>
  %dw = tg.matmul %x, %dy2 transpose_lhs : tensor<32x32xf32>, tensor<32x64xf32> -> tensor<32x64xf32>
  %sum = tg.add %r, %dx : tensor<4x8x32xf32>
  return %sum, %dw : tensor<4x8x32xf32>, tensor<32x64xf32>
}
// CHECK-LABEL: func.func @residual_first(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: tensor<4x8x64xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[X:[a-z0-9]+]]: tensor<32x32xf32>, %[[R:[a-z0-9]+]]: tensor<4x8x32xf32>)
// CHECK-NEXT: %[[SUM:[0-9]+]] = tg.matmul_add %[[DY]], %[[W]], %[[R]] transpose_rhs : tensor<4x8x64xf32>, tensor<32x64xf32>, tensor<4x8x32xf32> -> tensor<4x8x32xf32>
// CHECK-NEXT: %[[DY2:[0-9]+]] = tg.reshape %[[DY]]
// CHECK-NEXT: %[[DW:[0-9]+]] = tg.matmul %[[X]], %[[DY2]] transpose_lhs
// CHECK-NEXT: return %[[SUM]], %[[DW]]
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-add: added 1 sums in the GEMM of one of their summands

// -----

// The attention input's gradient: the residual's plus three projections'
// (((r + dv Wv^T) + dk Wk^T) + dq Wq^T), the adds in that order: three
// GEMMs, each adding into the last one's sum.
func.func @chain(%dq: tensor<16x32xf32>, %dk: tensor<16x32xf32>, %dv: tensor<16x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %r: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %dv, %wv transpose_rhs : tensor<16x32xf32>, tensor<32x32xf32> -> tensor<16x32xf32>
  %1 = tg.matmul %dk, %wk transpose_rhs : tensor<16x32xf32>, tensor<32x32xf32> -> tensor<16x32xf32>
  %2 = tg.matmul %dq, %wq transpose_rhs : tensor<16x32xf32>, tensor<32x32xf32> -> tensor<16x32xf32>
  %3 = tg.add %r, %0 : tensor<16x32xf32>
  %4 = tg.add %3, %1 : tensor<16x32xf32>
  %5 = tg.add %4, %2 : tensor<16x32xf32>
  return %5 : tensor<16x32xf32>
}
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[DQ:[a-z0-9]+]]: tensor<16x32xf32>, %[[DK:[a-z0-9]+]]: tensor<16x32xf32>, %[[DV:[a-z0-9]+]]: tensor<16x32xf32>, %[[WQ:[a-z0-9]+]]: tensor<32x32xf32>, %[[WK:[a-z0-9]+]]: tensor<32x32xf32>, %[[WV:[a-z0-9]+]]: tensor<32x32xf32>, %[[R:[a-z0-9]+]]: tensor<16x32xf32>)
// CHECK-NEXT: %[[S0:[0-9]+]] = tg.matmul_add %[[DV]], %[[WV]], %[[R]] transpose_rhs
// CHECK-NEXT: %[[S1:[0-9]+]] = tg.matmul_add %[[DK]], %[[WK]], %[[S0]] transpose_rhs
// CHECK-NEXT: %[[S2:[0-9]+]] = tg.matmul_add %[[DQ]], %[[WQ]], %[[S1]] transpose_rhs
// CHECK-NEXT: return %[[S2]]
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-add: added 3 sums in the GEMM of one of their summands

// -----

// The summand made after the product: the fused op goes to the add's place.
func.func @summand_later(%a: tensor<16x32xf32>, %b: tensor<32x32xf32>, %x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %a, %b : tensor<16x32xf32>, tensor<32x32xf32> -> tensor<16x32xf32>
  %1 = tg.exp %x : tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}
// CHECK-LABEL: func.func @summand_later(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<16x32xf32>, %[[B:[a-z0-9]+]]: tensor<32x32xf32>, %[[X:[a-z0-9]+]]: tensor<16x32xf32>)
// CHECK-NEXT: %[[E:[0-9]+]] = tg.exp %[[X]]
// CHECK-NEXT: %[[S:[0-9]+]] = tg.matmul_add %[[A]], %[[B]], %[[E]] : tensor<16x32xf32>, tensor<32x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: return %[[S]]
// CHECK-NEXT: }

// -----

// Two products: the later one (%1) takes the earlier (%0) as its summand;
// transposes and batches carry over.
func.func @two_products(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %a: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %0 = tg.matmul %q, %k transpose_rhs : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %1 = tg.matmul %a, %a transpose_lhs : tensor<2x8x4xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  %2 = tg.add %0, %1 : tensor<2x4x4xf32>
  return %2 : tensor<2x4x4xf32>
}
// CHECK-LABEL: func.func @two_products(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[A:[a-z0-9]+]]: tensor<2x8x4xf32>)
// CHECK-NEXT: %[[P:[0-9]+]] = tg.matmul %[[Q]], %[[K]] transpose_rhs
// CHECK-NEXT: %[[S:[0-9]+]] = tg.matmul_add %[[A]], %[[A]], %[[P]] transpose_lhs : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT: return %[[S]]
// CHECK-NEXT: }

// -----

// A product read by something else as well stays a tg.matmul, and so does
// an add of a product with itself.
func.func @other_reader(%a: tensor<16x32xf32>, %b: tensor<32x32xf32>, %x: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = tg.matmul %a, %b : tensor<16x32xf32>, tensor<32x32xf32> -> tensor<16x32xf32>
  %1 = tg.add %x, %0 : tensor<16x32xf32>
  %2 = tg.exp %0 : tensor<16x32xf32>
  %3 = tg.matmul %x, %b : tensor<16x32xf32>, tensor<32x32xf32> -> tensor<16x32xf32>
  %4 = tg.add %3, %3 : tensor<16x32xf32>
  return %1, %2, %4 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}
// CHECK-LABEL: func.func @other_reader(
// CHECK-NOT: tg.matmul_add
// CHECK: return
// REPORT: remark: tg-fuse-matmul-add: added 0 sums in the GEMM of one of their summands
