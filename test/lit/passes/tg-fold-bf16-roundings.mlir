// tg-fold-bf16-roundings: a tg.matmul or tg.linear on bf16 operands whose
// result is read by nothing but its tg.to_bf16 copy writes the result in
// bf16, and the copy goes. A result something else reads in f32, a GEMM on
// f32 operands and a copy of another op's value stay as they are.
// RUN: tgc-opt --tg-fold-bf16-roundings --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fold-bf16-roundings=report=true --split-input-file %s 2>&1 | FileCheck %s --check-prefix=REPORT

// A projection read only rounded (as attention reads queries) and a
// feed-forward layer's first linear: both fold; their readers read the
// GEMMs' results directly.
// CHECK-LABEL: func.func @folds(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x16xbf16>, %[[W:[a-z0-9]+]]: tensor<16x16xbf16>, %[[W1:[a-z0-9]+]]: tensor<16x64xbf16>, %[[B1:[a-z0-9]+]]: tensor<64xf32>, %[[W2:[a-z0-9]+]]: tensor<64x16xbf16>
// CHECK-NEXT: %[[Q:[a-z0-9_]+]] = tg.matmul %[[X]], %[[W]] : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xbf16>
// CHECK-NEXT: %[[H:[a-z0-9_]+]] = tg.linear %[[X]], %[[W1]], %[[B1]] relu : tensor<2x4x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<2x4x64xbf16>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.matmul %[[H]], %[[W2]] : tensor<2x4x64xbf16>, tensor<64x16xbf16> -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.matmul %[[Q]], %[[Q]] transpose_rhs : tensor<2x4x16xbf16>, tensor<2x4x16xbf16> -> tensor<2x4x4xf32>
// CHECK-NEXT: return %[[Y]], %[[S]]
// CHECK-NOT: tg.to_bf16
// REPORT: remark: tg-fold-bf16-roundings: 2 tg.to_bf16 copies folded into their GEMMs
func.func @folds(%x: tensor<2x4x16xbf16>, %w: tensor<16x16xbf16>, %w1: tensor<16x64xbf16>, %b1: tensor<64xf32>, %w2: tensor<64x16xbf16>)
    -> (tensor<2x4x16xf32>, tensor<2x4x4xf32>) {
  %q = tg.matmul %x, %w : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xf32>
  %qb = tg.to_bf16 %q : tensor<2x4x16xf32>
  %h = tg.linear %x, %w1, %b1 relu : tensor<2x4x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<2x4x64xf32>
  %hb = tg.to_bf16 %h : tensor<2x4x64xf32>
  %y = tg.matmul %hb, %w2 : tensor<2x4x64xbf16>, tensor<64x16xbf16> -> tensor<2x4x16xf32>
  %s = tg.matmul %qb, %qb transpose_rhs : tensor<2x4x16xbf16>, tensor<2x4x16xbf16> -> tensor<2x4x4xf32>
  return %y, %s : tensor<2x4x16xf32>, tensor<2x4x4xf32>
}

// -----

// What stays: a result also read in f32 (the residual add), a GEMM on f32
// operands, and a copy of a value no GEMM made.
// CHECK-LABEL: func.func @stays(
// CHECK: tg.matmul {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: tg.to_bf16
// CHECK-NEXT: tg.add
// CHECK: tg.matmul {{.*}} : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT: tg.to_bf16
// CHECK: tg.add
// CHECK-NEXT: tg.to_bf16
// REPORT: remark: tg-fold-bf16-roundings: 0 tg.to_bf16 copies folded into their GEMMs
func.func @stays(%x: tensor<2x4x16xbf16>, %w: tensor<16x16xbf16>, %xf: tensor<2x4x16xf32>, %wf: tensor<16x16xf32>)
    -> (tensor<2x4x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>) {
  %a = tg.matmul %x, %w : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xf32>
  %ab = tg.to_bf16 %a : tensor<2x4x16xf32>
  %sum = tg.add %a, %xf : tensor<2x4x16xf32>
  %f = tg.matmul %xf, %wf : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %fb = tg.to_bf16 %f : tensor<2x4x16xf32>
  %e = tg.add %xf, %xf : tensor<2x4x16xf32>
  %eb = tg.to_bf16 %e : tensor<2x4x16xf32>
  return %ab, %sum, %fb, %eb : tensor<2x4x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>
}
