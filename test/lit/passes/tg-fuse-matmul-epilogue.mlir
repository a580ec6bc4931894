// tg-fuse-matmul-epilogue: add(matmul(x, W), broadcast(b)) with a rank-2 W
// and b broadcast along the last dimension becomes one tg.linear, with the
// activation reading the sum folded in (relu, gelu, gelu_tanh, tanh,
// sigmoid, SiLU's x * sigmoid(x)); where the sum has other uses (the
// backward of GELU and SiLU), tg.linear writes it too as pre_activation. A
// matmul with another use, a transposed or batched rhs, or a bias broadcast
// along another dimension stays as it is. A bias gradient and its weight
// gradient's GEMM become one tg.weight_bias_grad. Positive cases pin the whole
// function body with CHECK-NEXT, so no matmul, broadcast, add or activation
// is left behind.
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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 1 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 1 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 2 bias adds into their GEMM, 1 with an activation, 0 keeping its input

// -----

// The bias add has another use besides the relu (the pre-activation is
// returned): the relu still folds, and tg.linear writes the sum as well.
func.func @add_used_twice(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %2 = tg.add %0, %1 : tensor<16x32xf32>
  %3 = tg.relu %2 : tensor<16x32xf32>
  return %3, %2 : tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @add_used_twice(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:[a-z0-9_]+]], %[[P:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] relu : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT: return %[[Y]], %[[P]] : tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 1 bias adds into their GEMM, 1 with an activation, 1 keeping its input

// -----

// Each activation that is the sum's one use (the forward alone, or a
// backward written from the output: tanh's and sigmoid's): one tg.linear
// with it and no pre-activation.
func.func @activations(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %m0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s0 = tg.add %m0, %1 : tensor<16x32xf32>
  %y0 = tg.gelu %s0 : tensor<16x32xf32>
  %m1 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s1 = tg.add %m1, %1 : tensor<16x32xf32>
  %y1 = tg.gelu_tanh %s1 : tensor<16x32xf32>
  %m2 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s2 = tg.add %m2, %1 : tensor<16x32xf32>
  %y2 = tg.tanh %s2 : tensor<16x32xf32>
  %m3 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s3 = tg.add %m3, %1 : tensor<16x32xf32>
  %y3 = tg.sigmoid %s3 : tensor<16x32xf32>
  %m4 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s4 = tg.add %m4, %1 : tensor<16x32xf32>
  %g4 = tg.sigmoid %s4 : tensor<16x32xf32>
  %y4 = tg.mul %g4, %s4 : tensor<16x32xf32>
  // The backward of tanh and sigmoid reads their output only.
  %d2 = tg.mul %y2, %y2 : tensor<16x32xf32>
  %d3 = tg.mul %y3, %y3 : tensor<16x32xf32>
  return %y0, %y1, %d2, %d3, %y4 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @activations(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y0:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] gelu : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[Y1:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] gelu_tanh : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[Y2:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] tanh : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[Y3:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] sigmoid : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[Y4:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] silu : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[D2:[a-z0-9_]+]] = tg.mul %[[Y2]], %[[Y2]]
// CHECK-NEXT: %[[D3:[a-z0-9_]+]] = tg.mul %[[Y3]], %[[Y3]]
// CHECK-NEXT: return %[[Y0]], %[[Y1]], %[[D2]], %[[D3]], %[[Y4]] :
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 5 bias adds into their GEMM, 5 with an activation, 0 keeping its input

// -----

// A training step's GELU and SiLU: the backward reads the sum (tg.gelu_grad,
// tg.gelu_tanh_grad, SiLU's dy * x and its sigmoid's result), so tg.linear
// also writes it; SiLU's sigmoid stays, now of the kept sum.
func.func @kept_for_backward(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %dy: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %m0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s0 = tg.add %m0, %1 : tensor<16x32xf32>
  %y0 = tg.gelu %s0 : tensor<16x32xf32>
  %d0 = tg.gelu_grad %dy, %s0 : tensor<16x32xf32>
  %m1 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s1 = tg.add %m1, %1 : tensor<16x32xf32>
  %y1 = tg.gelu_tanh %s1 : tensor<16x32xf32>
  %d1 = tg.gelu_tanh_grad %dy, %s1 : tensor<16x32xf32>
  %m2 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s2 = tg.add %m2, %1 : tensor<16x32xf32>
  %g2 = tg.sigmoid %s2 : tensor<16x32xf32>
  %y2 = tg.mul %s2, %g2 : tensor<16x32xf32>
  %a2 = tg.mul %dy, %g2 : tensor<16x32xf32>
  %b2 = tg.mul %dy, %s2 : tensor<16x32xf32>
  return %y0, %d0, %y1, %d1, %y2, %a2, %b2 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @kept_for_backward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[DY:[a-z0-9]+]]: tensor<16x32xf32>)
// CHECK-NEXT: %[[L0:[a-z0-9_]+]], %[[P0:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] gelu : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT: %[[D0:[a-z0-9_]+]] = tg.gelu_grad %[[DY]], %[[P0]]
// CHECK-NEXT: %[[L1:[a-z0-9_]+]], %[[P1:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] gelu_tanh : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT: %[[D1:[a-z0-9_]+]] = tg.gelu_tanh_grad %[[DY]], %[[P1]]
// CHECK-NEXT: %[[L2:[a-z0-9_]+]], %[[P2:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] silu : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT: %[[G2:[a-z0-9_]+]] = tg.sigmoid %[[P2]]
// CHECK-NEXT: %[[A2:[a-z0-9_]+]] = tg.mul %[[DY]], %[[G2]]
// CHECK-NEXT: %[[B2:[a-z0-9_]+]] = tg.mul %[[DY]], %[[P2]]
// CHECK-NEXT: return %[[L0]], %[[D0]], %[[L1]], %[[D1]], %[[L2]], %[[A2]], %[[B2]] :
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 3 bias adds into their GEMM, 3 with an activation, 3 keeping its input

// -----

// Not an epilogue activation: x * sigmoid(y) of another value is no SiLU,
// and tg.exp is not one of the activations. The bias adds still fold,
// without an activation; the sigmoid, the product and the exp stay.
func.func @neg_not_an_activation(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %y: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %1 = tg.broadcast %b dims [1] : tensor<32xf32> -> tensor<16x32xf32>
  %m0 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s0 = tg.add %m0, %1 : tensor<16x32xf32>
  %g0 = tg.sigmoid %y : tensor<16x32xf32>
  %p0 = tg.mul %s0, %g0 : tensor<16x32xf32>
  %m1 = tg.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %s1 = tg.add %m1, %1 : tensor<16x32xf32>
  %e1 = tg.exp %s1 : tensor<16x32xf32>
  return %p0, %e1 : tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @neg_not_an_activation(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[Y:[a-z0-9]+]]: tensor<16x32xf32>)
// CHECK-NEXT: %[[S0:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[G0:[a-z0-9_]+]] = tg.sigmoid %[[Y]]
// CHECK-NEXT: %[[P0:[a-z0-9_]+]] = tg.mul %[[S0]], %[[G0]]
// CHECK-NEXT: %[[S1:[a-z0-9_]+]] = tg.linear %[[X]], %[[W]], %[[B]] : tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[E1:[a-z0-9_]+]] = tg.exp %[[S1]]
// CHECK-NEXT: return %[[P0]], %[[E1]] :
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-matmul-epilogue: folded 2 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

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
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input

// -----

// A size-1 bias broadcast to N is a legal tg.broadcast but not tg.linear's
// [N] bias: the chain stays unfused (and valid).
// CHECK-LABEL: func.func @size_one_bias(
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.broadcast
// CHECK-NEXT: tg.add
// CHECK-NOT: tg.linear
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input
func.func @size_one_bias(%x: tensor<4x32xf32>, %w: tensor<32x64xf32>, %b: tensor<1xf32>) -> tensor<4x64xf32> {
  %0 = tg.matmul %x, %w : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
  %1 = tg.broadcast %b dims [1] : tensor<1xf32> -> tensor<4x64xf32>
  %2 = tg.add %0, %1 : tensor<4x64xf32>
  return %2 : tensor<4x64xf32>
}

// -----

// The backward's side: a bias gradient (every dimension but the last summed)
// and the weight gradient's GEMM reading the same gradient (through its
// reshape to rows) become one tg.weight_bias_grad, at the later of the two.
// CHECK-LABEL: func.func @bias_gradient(
// CHECK-NEXT: %[[XF:[a-z0-9_]+]] = tg.reshape %arg0 : tensor<2x7x16xf32> -> tensor<14x16xf32>
// CHECK-NEXT: %[[GF:[a-z0-9_]+]] = tg.reshape %arg1 : tensor<2x7x64xf32> -> tensor<14x64xf32>
// CHECK-NEXT: %[[DW:[a-z0-9_]+]], %[[DB:[a-z0-9_]+]] = tg.weight_bias_grad %[[XF]], %[[GF]] : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
// CHECK-NEXT: return %[[DW]], %[[DB]]
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input; 1 bias gradients into their weight gradient
func.func @bias_gradient(%x: tensor<2x7x16xf32>, %dy: tensor<2x7x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %db = tg.reduce_sum %dy dims [0, 1] : tensor<2x7x64xf32> -> tensor<64xf32>
  %xf = tg.reshape %x : tensor<2x7x16xf32> -> tensor<14x16xf32>
  %dyf = tg.reshape %dy : tensor<2x7x64xf32> -> tensor<14x64xf32>
  %dw = tg.matmul %xf, %dyf transpose_lhs : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>
  return %dw, %db : tensor<16x64xf32>, tensor<64xf32>
}

// -----

// Rank-2 gradients need no reshape; the sum may come after the GEMM.
// CHECK-LABEL: func.func @bias_gradient_rows(
// CHECK-NEXT: %[[DW:[a-z0-9_]+]], %[[DB:[a-z0-9_]+]] = tg.weight_bias_grad %arg0, %arg1 : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
// CHECK-NEXT: return %[[DW]], %[[DB]]
func.func @bias_gradient_rows(%x: tensor<14x16xf32>, %dy: tensor<14x64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %dw = tg.matmul %x, %dy transpose_lhs : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>
  %db = tg.reduce_sum %dy dims [0] : tensor<14x64xf32> -> tensor<64xf32>
  return %dw, %db : tensor<16x64xf32>, tensor<64xf32>
}

// -----

// Left alone: a sum over other dimensions or with keep_dims, a GEMM that
// does not transpose its lhs or reads the gradient as its lhs, and a
// weight gradient read before the sum it would move to.
// CHECK-LABEL: func.func @not_bias_gradients(
// CHECK-NOT: tg.weight_bias_grad
// CHECK: return
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input; 0 bias gradients into their weight gradient
func.func @not_bias_gradients(%x: tensor<14x16xf32>, %dy: tensor<14x64xf32>, %w: tensor<64x64xf32>) -> (tensor<14xf32>, tensor<1x64xf32>, tensor<14x64xf32>, tensor<64x16xf32>, tensor<16x64xf32>, tensor<64xf32>) {
  %rows = tg.reduce_sum %dy dims [1] : tensor<14x64xf32> -> tensor<14xf32>
  %kept = tg.reduce_sum %dy dims [0] keep_dims : tensor<14x64xf32> -> tensor<1x64xf32>
  %p = tg.matmul %dy, %w : tensor<14x64xf32>, tensor<64x64xf32> -> tensor<14x64xf32>
  %q = tg.matmul %dy, %x transpose_lhs : tensor<14x64xf32>, tensor<14x16xf32> -> tensor<64x16xf32>
  %dw = tg.matmul %x, %dy transpose_lhs : tensor<14x16xf32>, tensor<14x64xf32> -> tensor<16x64xf32>
  %n = tg.add %dw, %dw : tensor<16x64xf32>
  %db = tg.reduce_sum %dy dims [0] : tensor<14x64xf32> -> tensor<64xf32>
  return %rows, %kept, %p, %q, %n, %db : tensor<14xf32>, tensor<1x64xf32>, tensor<14x64xf32>, tensor<64x16xf32>, tensor<16x64xf32>, tensor<64xf32>
}

// -----

// A weight gradient that reads the gradient reshaped to rows of another
// width than the bias ([3, 2, 4] as [3, 8], bias [4]) is not the bias's:
// left alone (it once made a tg.weight_bias_grad the verifier refused).
// CHECK-LABEL: func.func @rows_of_another_width(
// CHECK-NOT: tg.weight_bias_grad
// CHECK: return
// REPORT: remark: tg-fuse-matmul-epilogue: folded 0 bias adds into their GEMM, 0 with an activation, 0 keeping its input; 0 bias gradients into their weight gradient
func.func @rows_of_another_width(%x: tensor<3x2xf32>, %g: tensor<3x2x4xf32>) -> (tensor<2x8xf32>, tensor<4xf32>) {
  %v = tg.reshape %g : tensor<3x2x4xf32> -> tensor<3x8xf32>
  %w = tg.matmul %x, %v transpose_lhs : tensor<3x2xf32>, tensor<3x8xf32> -> tensor<2x8xf32>
  %b = tg.reduce_sum %g dims [0, 1] : tensor<3x2x4xf32> -> tensor<4xf32>
  return %w, %b : tensor<2x8xf32>, tensor<4xf32>
}
