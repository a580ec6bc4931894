// tg-fuse-matmul-epilogue: add(matmul(x, W), broadcast(b)) with a rank-2 W
// and b broadcast along the last dimension becomes one tg.linear, with a
// following tg.relu folded in when it is the add's one use; a matmul with
// another use, a transposed or batched rhs, or a bias broadcast along another
// dimension stays as it is. Positive cases pin the whole function body with
// CHECK-NEXT, so no matmul, broadcast, add or relu is left behind.
// RUN: tgc-opt --tg-fuse-matmul-epilogue --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-matmul-epilogue=report=true %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REPORT

// Rank-3 input, bias add then relu (the FFN's first layer): one tg.linear
// with relu.
func.func @bias_relu_rank3(%x: tensor<4x8x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<4x8x64xf32> {
  %0 = tg.matmul %x, %w : tensor<4x8x32xf32>, tensor<32x64xf32> -> tensor<4x8x64xf32>
  %1 = tg.broadcast %b dims [2] : tensor<64xf32> -> tensor<4x8x64xf32>
  %2 = tg.add %0, %1 : tensor<4x8x64xf32>
  %3 = tg.relu %2 : tensor<4x8x64xf32>
  return %3 : tensor<4x8x64xf32>
}

// CHECK-LABEL: func.func @bias_relu_rank3(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>) -> tensor<4x8x64xf32> {
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] relu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x8x64xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 1 with a ReLU

// -----

// Rank-2 input, bias add without an activation (the FFN's second layer):
// tg.linear without relu.
func.func @bias_rank2(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @bias_rank2(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<16x32xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 0 with a ReLU

// -----

// The bias on the add's LHS, add(broadcast(b), matmul(x, W)), with a relu:
// the same tg.linear.
func.func @bias_lhs(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %1, %0 : tensor<16x32xf32>
  %3 = tg.relu %2 : tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @bias_lhs(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] relu : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: return %[[Y]] : tensor<16x32xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 1 with a ReLU

// -----

// Two GEMMs sharing one bias broadcast: both fuse, and the broadcast goes
// once its last use is folded. The relu's result has several uses, which
// does not matter: only the add must have the relu as its one use.
func.func @shared_broadcast(%x: tensor<4x8x32xf32>, %x2: tensor<4x8x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> (tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>) {
  %1 = tg.broadcast %b dims [2] : tensor<64xf32> -> tensor<4x8x64xf32>
  %0 = tg.matmul %x, %w : tensor<4x8x32xf32>, tensor<32x64xf32> -> tensor<4x8x64xf32>
  %2 = tg.add %0, %1 : tensor<4x8x64xf32>
  %3 = tg.relu %2 : tensor<4x8x64xf32>
  %4 = tg.matmul %x2, %w : tensor<4x8x32xf32>, tensor<32x64xf32> -> tensor<4x8x64xf32>
  %5 = tg.add %4, %1 : tensor<4x8x64xf32>
  return %3, %3, %5 : tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>
}

// CHECK-LABEL: func.func @shared_broadcast(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8x32xf32>, %[[X2:[a-z0-9]+]]: tensor<4x8x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>)
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] relu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>
// CHECK-NEXT: %[[Y2:[a-z0-9_]+]] = tg.linear %[[X2]], %[[W]], %[[B]] : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>
// CHECK-NEXT: return %[[Y]], %[[Y]], %[[Y2]] : tensor<4x8x64xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 2 bias adds into their GEMM, 1 with a ReLU

// -----

// The bias add has another use besides the relu (the pre-activation is
// returned): the add still folds into a tg.linear without relu, and the relu
// stays as a separate op reading it.
func.func @add_used_twice(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  %3 = tg.relu %2 : tensor<16x32xf32>
  return %3, %2 : tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @add_used_twice(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.relu %[[Y]] : tensor<16x32xf32>
// CHECK-NEXT: return %[[R]], %[[Y]] : tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: the matmul's result is returned too (another use).
func.func @neg_matmul_used_twice(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  %3 = tg.relu %2 : tensor<16x32xf32>
  return %3, %0 : tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @neg_matmul_used_twice(
// CHECK-NOT: tg.linear
// CHECK: %[[M:[a-z0-9_]+]] = tg.matmul
// CHECK-NEXT: %[[BB:[a-z0-9_]+]] = tg.broadcast
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.add %[[M]], %[[BB]]
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.relu %[[S]]
// CHECK-NEXT: return %[[R]], %[[M]]
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: x W^T (transpose_rhs) is not the [K, N] weight tg.linear takes.
func.func @neg_transpose_rhs(%x: tensor<16x64xf32>, %wt: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %x, %wt transpose_rhs : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @neg_transpose_rhs(
// CHECK-NOT: tg.linear
// CHECK: tg.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} transpose_rhs
// CHECK-NEXT: tg.broadcast
// CHECK-NEXT: tg.add
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: x^T W (transpose_lhs) does not fold either.
func.func @neg_transpose_lhs(%xt: tensor<64x16xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %xt, %w transpose_lhs : tensor<64x16xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @neg_transpose_lhs(
// CHECK-NOT: tg.linear
// CHECK: tg.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} transpose_lhs
// CHECK-NEXT: tg.broadcast
// CHECK-NEXT: tg.add
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: a batched rhs (rank 3, one matrix per batch) is not a weight.
func.func @neg_batched_rhs(%x: tensor<4x8x32xf32>, %w: tensor<4x32x64xf32>, %b: tensor<64xf32>) -> tensor<4x8x64xf32> {
  %0 = tg.matmul %x, %w : tensor<4x8x32xf32>, tensor<4x32x64xf32> -> tensor<4x8x64xf32>
  %1 = tg.broadcast %b dims [2] : tensor<64xf32> -> tensor<4x8x64xf32>
  %2 = tg.add %0, %1 : tensor<4x8x64xf32>
  %3 = tg.relu %2 : tensor<4x8x64xf32>
  return %3 : tensor<4x8x64xf32>
}

// CHECK-LABEL: func.func @neg_batched_rhs(
// CHECK-NOT: tg.linear
// CHECK: tg.matmul {{.*}} tensor<4x32x64xf32> -> tensor<4x8x64xf32>
// CHECK-NEXT: tg.broadcast
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.relu
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: a vector broadcast along the rows (dims [0]) is a per-row
// offset, not a bias over the output features.
func.func @neg_broadcast_rows(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %r: tensor<16xf32>) -> tensor<16x32xf32> {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %r dims [0] : tensor<16xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @neg_broadcast_rows(
// CHECK-NOT: tg.linear
// CHECK: tg.matmul
// CHECK-NEXT: tg.broadcast %{{[a-z0-9_]+}} dims [0]
// CHECK-NEXT: tg.add
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: a rank-2 addend broadcast over the batch (dims [1, 2]) is not a
// bias vector.
func.func @neg_matrix_bias(%x: tensor<4x8x32xf32>, %w: tensor<32x64xf32>, %m: tensor<8x64xf32>) -> tensor<4x8x64xf32> {
  %0 = tg.matmul %x, %w : tensor<4x8x32xf32>, tensor<32x64xf32> -> tensor<4x8x64xf32>
  %1 = tg.broadcast %m dims [1, 2] : tensor<8x64xf32> -> tensor<4x8x64xf32>
  %2 = tg.add %0, %1 : tensor<4x8x64xf32>
  return %2 : tensor<4x8x64xf32>
}

// CHECK-LABEL: func.func @neg_matrix_bias(
// CHECK-NOT: tg.linear
// CHECK: tg.matmul
// CHECK-NEXT: tg.broadcast %{{[a-z0-9_]+}} dims [1, 2]
// CHECK-NEXT: tg.add
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// Negative: the addend is a plain tensor, not a broadcast; a relu alone
// after a matmul does not fold either.
func.func @neg_no_broadcast(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %r: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.add %0, %r : tensor<16x32xf32>
  %2 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %3 = tg.relu %2 : tensor<16x32xf32>
  return %1, %3 : tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @neg_no_broadcast(
// CHECK-NOT: tg.linear
// CHECK: tg.matmul
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.relu
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU

// -----

// A size-1 bias broadcast to N is a legal tg.broadcast but not tg.linear's
// [N] bias: the chain stays unfused (and valid).
// CHECK-LABEL: func.func @size_one_bias(
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.broadcast
// CHECK-NEXT: tg.add
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with a ReLU
func.func @size_one_bias(%x: tensor<4x32xf32>, %w: tensor<32x64xf32>, %b: tensor<1xf32>) -> tensor<4x64xf32> {
  %0 = tg.matmul %x, %w : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
  %1 = tg.broadcast %b dims [1] : tensor<1xf32> -> tensor<4x64xf32>
  %2 = tg.add %0, %1 : tensor<4x64xf32>
  return %2 : tensor<4x64xf32>
}
