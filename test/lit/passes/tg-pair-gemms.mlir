// tg-pair-gemms: a tg.matmul and the next op that computes something (a
// reshape, load or constant computes nothing), when that is an f32
// tg.matmul that does not read the first's result, with between min-macs
// and max-macs multiply-adds each and the smaller at least half the larger,
// run at once: the first gets tg.beside_next. Each op is in one pair at most.
// RUN: tgc-opt --tg-pair-gemms=min-macs=1 --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-pair-gemms="min-macs=1 report=true" --split-input-file %s -o /dev/null --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=REPORT
// The default floor (2^20 multiply-adds) leaves these small products alone.
// RUN: tgc-opt --tg-pair-gemms --split-input-file %s | FileCheck %s --check-prefix=SMALL
// SMALL-NOT: tg.beside_next

// A projection's two gradient products (dX = dY W^T, dW = X^T dY), a
// reshape between them: a pair. Then three forward projections of one input:
// the first two pair, the third is left alone.
func.func @step(%dy: tensor<2x8x16xf32>, %w: tensor<16x16xf32>, %x: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %dx = tg.matmul %dy, %w transpose_rhs : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %x2 = tg.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %dy2 = tg.reshape %dy : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %dw = tg.matmul %x2, %dy2 transpose_lhs : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %q = tg.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %k = tg.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %v = tg.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  return %dx, %dw, %q, %k, %v : tensor<2x8x16xf32>, tensor<16x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}
// CHECK-LABEL: func.func @step(
// CHECK: tg.matmul {{.*}} transpose_rhs {tg.beside_next}
// CHECK: tg.matmul {{.*}} transpose_lhs :
// CHECK: tg.matmul {{.*}} {tg.beside_next}
// CHECK-NEXT: tg.matmul {{.*}} :
// CHECK-NEXT: tg.matmul {{.*}} :
// REPORT: remark: tg-pair-gemms: 2 pairs of GEMMs run side by side

// -----

// The second reads the first's result, through a reshape: one after the
// other. So does an op between them that computes something.
func.func @dependent(%x: tensor<2x8x16xf32>, %w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<2x8x16xf32>) {
  %h = tg.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %h2 = tg.reshape %h : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %g = tg.matmul %h2, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %e = tg.exp %x : tensor<2x8x16xf32>
  %k = tg.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  return %g, %k : tensor<16x16xf32>, tensor<2x8x16xf32>
}
// CHECK-LABEL: func.func @dependent(
// CHECK-NOT: tg.beside_next
// REPORT: remark: tg-pair-gemms: 0 pairs of GEMMs run side by side

// -----

// Through a tg.stop_gradient (a view, as a reshape; no code between them):
// one after the other (paired, the second read the first's rows while they
// were written).
func.func @through_stop_gradient(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %h = tg.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %s = tg.stop_gradient %h : tensor<16x16xf32>
  %g = tg.matmul %s, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %g : tensor<16x16xf32>
}
// CHECK-LABEL: func.func @through_stop_gradient(
// CHECK-NOT: tg.beside_next
// REPORT: remark: tg-pair-gemms: 0 pairs of GEMMs run side by side

// -----

// Unbalanced (2x8x16x16 against 2x8x64x16: the smaller is a quarter), and
// bf16 operands: one after the other.
func.func @unsuited(%x: tensor<2x8x16xf32>, %w: tensor<16x16xf32>, %w4: tensor<16x64xf32>, %xb: tensor<2x8x16xbf16>, %wb: tensor<16x16xbf16>) -> (tensor<2x8x16xf32>, tensor<2x8x64xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %a = tg.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %b = tg.matmul %x, %w4 : tensor<2x8x16xf32>, tensor<16x64xf32> -> tensor<2x8x64xf32>
  %c = tg.matmul %xb, %wb : tensor<2x8x16xbf16>, tensor<16x16xbf16> -> tensor<2x8x16xf32>
  %d = tg.matmul %xb, %wb : tensor<2x8x16xbf16>, tensor<16x16xbf16> -> tensor<2x8x16xf32>
  return %a, %b, %c, %d : tensor<2x8x16xf32>, tensor<2x8x64xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}
// CHECK-LABEL: func.func @unsuited(
// CHECK-NOT: tg.beside_next
