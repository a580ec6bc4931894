// Round trip of the unfused tensor ops and their gradients: custom form
// printed and parsed again, and generic form parsed back to the custom form.
// RUN: tgc-opt %s | tgc-opt | FileCheck %s
// RUN: tgc-opt %s --mlir-print-op-generic | tgc-opt | FileCheck %s

// CHECK-LABEL: func.func @embedding(
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x7xi32>) -> tensor<100x16xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.embedding %{{[a-z_0-9]+}}[%{{[a-z_0-9]+}}] : tensor<100x16xf32>, tensor<2x7xi32> -> tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.embedding_grad %{{[a-z_0-9]+}}[%{{[a-z_0-9]+}}] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  %x = tg.embedding %table[%ids] : tensor<100x16xf32>, tensor<2x7xi32> -> tensor<2x7x16xf32>
  %dt = tg.embedding_grad %x[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
  return %dt : tensor<100x16xf32>
}

// tg-mixed-precision's copies: bf16 GEMM operands, f32 product.
// CHECK-LABEL: func.func @bf16_matmul(
func.func @bf16_matmul(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>) -> tensor<2x7x64xf32> {
  // CHECK-NEXT: %[[XB:[a-z_0-9]+]] = tg.to_bf16 %{{[a-z_0-9]+}} : tensor<2x7x16xf32>
  // CHECK-NEXT: %[[WB:[a-z_0-9]+]] = tg.to_bf16 %{{[a-z_0-9]+}} : tensor<16x64xf32>
  // CHECK-NEXT: %[[FLAT:[a-z_0-9]+]] = tg.reshape %[[XB]] : tensor<2x7x16xbf16> -> tensor<14x16xbf16>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.relu_grad %{{[a-z_0-9]+}}, %[[XB]] : tensor<2x7x16xf32>, tensor<2x7x16xbf16>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.relu_grad %[[XB]], %[[XB]] : tensor<2x7x16xbf16>{{$}}
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.relu_grad %[[XB]], %{{[a-z_0-9]+}} : tensor<2x7x16xbf16>, tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.matmul %[[XB]], %[[WB]] : tensor<2x7x16xbf16>, tensor<16x64xbf16> -> tensor<2x7x64xf32>
  %xb = tg.to_bf16 %x : tensor<2x7x16xf32>
  %wb = tg.to_bf16 %w : tensor<16x64xf32>
  %flat = tg.reshape %xb : tensor<2x7x16xbf16> -> tensor<14x16xbf16>
  %dx = tg.relu_grad %x, %xb : tensor<2x7x16xf32>, tensor<2x7x16xbf16>
  // A bf16 gradient (tg-fold-bf16-roundings) gives an f32 result.
  %dxb = tg.relu_grad %xb, %xb : tensor<2x7x16xbf16>
  %dxf = tg.relu_grad %xb, %x : tensor<2x7x16xbf16>, tensor<2x7x16xf32>
  %h = tg.matmul %xb, %wb : tensor<2x7x16xbf16>, tensor<16x64xbf16> -> tensor<2x7x64xf32>
  return %h : tensor<2x7x64xf32>
}

// CHECK-LABEL: func.func @matmul(
func.func @matmul(%x: tensor<2x7x16xf32>, %w: tensor<16x64xf32>, %q: tensor<2x4x7x8xf32>, %k: tensor<2x4x9x8xf32>, %a: tensor<16x7xf32>) -> (tensor<2x7x64xf32>, tensor<2x4x7x9xf32>, tensor<7x64xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.matmul %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<2x7x16xf32>, tensor<16x64xf32> -> tensor<2x7x64xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.matmul %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32> -> tensor<2x4x7x9xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.matmul %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} transpose_lhs : tensor<16x7xf32>, tensor<16x64xf32> -> tensor<7x64xf32>
  %h = tg.matmul %x, %w : tensor<2x7x16xf32>, tensor<16x64xf32> -> tensor<2x7x64xf32>
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32> -> tensor<2x4x7x9xf32>
  %t = tg.matmul %a, %w transpose_lhs : tensor<16x7xf32>, tensor<16x64xf32> -> tensor<7x64xf32>
  return %h, %s, %t : tensor<2x7x64xf32>, tensor<2x4x7x9xf32>, tensor<7x64xf32>
}

// CHECK-LABEL: func.func @elementwise(
func.func @elementwise(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.add %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.sub %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.mul %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.div %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.neg %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.exp %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.log %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.sqrt %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.rsqrt %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.tanh %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.sigmoid %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.abs %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.gelu %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.gelu_tanh %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.gelu_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.gelu_tanh_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.stop_gradient %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.relu %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.scale %{{[a-z_0-9]+}} by 1.250000e-01 : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.relu_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  %0 = tg.add %x, %y : tensor<4xf32>
  %1 = tg.sub %0, %y : tensor<4xf32>
  %2 = tg.mul %1, %y : tensor<4xf32>
  %3 = tg.div %2, %y : tensor<4xf32>
  %4 = tg.neg %3 : tensor<4xf32>
  %5 = tg.exp %4 : tensor<4xf32>
  %6 = tg.log %5 : tensor<4xf32>
  %7 = tg.sqrt %6 : tensor<4xf32>
  %8 = tg.rsqrt %7 : tensor<4xf32>
  %t = tg.tanh %8 : tensor<4xf32>
  %sg = tg.sigmoid %t : tensor<4xf32>
  %ab = tg.abs %sg : tensor<4xf32>
  %ge = tg.gelu %ab : tensor<4xf32>
  %gt = tg.gelu_tanh %ge : tensor<4xf32>
  %gg = tg.gelu_grad %gt, %ge : tensor<4xf32>
  %gtg = tg.gelu_tanh_grad %gg, %ab : tensor<4xf32>
  %stg = tg.stop_gradient %gtg : tensor<4xf32>
  %9 = tg.relu %stg : tensor<4xf32>
  %10 = tg.scale %9 by 0.125 : tensor<4xf32>
  %11 = tg.relu_grad %10, %8 : tensor<4xf32>
  return %11 : tensor<4xf32>
}

// CHECK-LABEL: func.func @select(
func.func @select(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.maximum %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.minimum %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.pow %{{[a-z_0-9]+}}, 2.500000e+00 : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.less %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.less_equal %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.greater %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.greater_equal %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.equal %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.not_equal %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.where %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} : tensor<4xf32>
  %0 = tg.maximum %x, %y : tensor<4xf32>
  %1 = tg.minimum %0, %y : tensor<4xf32>
  %2 = tg.pow %1, 2.5 : tensor<4xf32>
  %3 = tg.less %2, %y : tensor<4xf32>
  %4 = tg.less_equal %3, %y : tensor<4xf32>
  %5 = tg.greater %4, %y : tensor<4xf32>
  %6 = tg.greater_equal %5, %y : tensor<4xf32>
  %7 = tg.equal %6, %y : tensor<4xf32>
  %8 = tg.not_equal %7, %y : tensor<4xf32>
  %9 = tg.where %8, %x, %2 : tensor<4xf32>
  return %9 : tensor<4xf32>
}

// CHECK-LABEL: func.func @shapes(
func.func @shapes(%b: tensor<16xf32>, %m: tensor<2x7xf32>, %x: tensor<2x7x16xf32>) -> (tensor<2x7x16xf32>, tensor<2x4x7x7xf32>, tensor<2x4x7x4xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.broadcast %{{[a-z_0-9]+}} dims [2] : tensor<16xf32> -> tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.broadcast %{{[a-z_0-9]+}} dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.reshape %{{[a-z_0-9]+}} : tensor<2x7x16xf32> -> tensor<2x7x4x4xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.transpose %{{[a-z_0-9]+}} permutation [0, 2, 1, 3] : tensor<2x7x4x4xf32> -> tensor<2x4x7x4xf32>
  %b3 = tg.broadcast %b dims [2] : tensor<16xf32> -> tensor<2x7x16xf32>
  %m4 = tg.broadcast %m dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %r = tg.reshape %x : tensor<2x7x16xf32> -> tensor<2x7x4x4xf32>
  %t = tg.transpose %r permutation [0, 2, 1, 3] : tensor<2x7x4x4xf32> -> tensor<2x4x7x4xf32>
  return %b3, %m4, %t : tensor<2x7x16xf32>, tensor<2x4x7x7xf32>, tensor<2x4x7x4xf32>
}

// CHECK-LABEL: func.func @slices_and_gathers(
func.func @slices_and_gathers(%x: tensor<2x7x16xf32>, %y: tensor<2x7x8xf32>, %rows: tensor<3x2xi32>) -> (tensor<2x7x16xf32>, tensor<2x7x24xf32>, tensor<2x7x16xf32>) {
  // CHECK-NEXT: %[[S:[a-z_0-9]+]] = tg.slice %{{[a-z_0-9]+}} dim 1 start 2 : tensor<2x7x16xf32> -> tensor<2x3x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.slice_grad %[[S]] dim 1 start 2 : tensor<2x3x16xf32> -> tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.concat %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} dim 2 : tensor<2x7x16xf32>, tensor<2x7x8xf32> -> tensor<2x7x24xf32>
  // CHECK-NEXT: %[[G:[a-z_0-9]+]] = tg.gather %{{[a-z_0-9]+}}[%{{[a-z_0-9]+}}] dim 2 : tensor<2x7x16xf32>, tensor<3x2xi32> -> tensor<2x7x3x2xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.gather_grad %[[G]][%{{[a-z_0-9]+}}] dim 2 : tensor<2x7x3x2xf32>, tensor<3x2xi32> -> tensor<2x7x16xf32>
  %s = tg.slice %x dim 1 start 2 : tensor<2x7x16xf32> -> tensor<2x3x16xf32>
  %ds = tg.slice_grad %s dim 1 start 2 : tensor<2x3x16xf32> -> tensor<2x7x16xf32>
  %c = tg.concat %x, %y dim 2 : tensor<2x7x16xf32>, tensor<2x7x8xf32> -> tensor<2x7x24xf32>
  %g = tg.gather %x[%rows] dim 2 : tensor<2x7x16xf32>, tensor<3x2xi32> -> tensor<2x7x3x2xf32>
  %dg = tg.gather_grad %g[%rows] dim 2 : tensor<2x7x3x2xf32>, tensor<3x2xi32> -> tensor<2x7x16xf32>
  return %ds, %c, %dg : tensor<2x7x16xf32>, tensor<2x7x24xf32>, tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @reductions(
func.func @reductions(%x: tensor<2x7x16xf32>) -> (tensor<16xf32>, tensor<2x7x1xf32>, tensor<2x7xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.reduce_sum %{{[a-z_0-9]+}} dims [0, 1] : tensor<2x7x16xf32> -> tensor<16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.reduce_max %{{[a-z_0-9]+}} dims [2] keep_dims : tensor<2x7x16xf32> -> tensor<2x7x1xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.reduce_mean %{{[a-z_0-9]+}} dims [2] : tensor<2x7x16xf32> -> tensor<2x7xf32>
  %s = tg.reduce_sum %x dims [0, 1] : tensor<2x7x16xf32> -> tensor<16xf32>
  %m = tg.reduce_max %x dims [2] keep_dims : tensor<2x7x16xf32> -> tensor<2x7x1xf32>
  %mu = tg.reduce_mean %x dims [2] : tensor<2x7x16xf32> -> tensor<2x7xf32>
  return %s, %m, %mu : tensor<16xf32>, tensor<2x7x1xf32>, tensor<2x7xf32>
}

// A bias gradient of bf16 GEMM operands: a bf16 input, an f32 sum.
// CHECK-LABEL: func.func @bf16_sum(
func.func @bf16_sum(%g: tensor<2x7x16xbf16>) -> tensor<16xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.reduce_sum %{{[a-z_0-9]+}} dims [0, 1] : tensor<2x7x16xbf16> -> tensor<16xf32>
  %s = tg.reduce_sum %g dims [0, 1] : tensor<2x7x16xbf16> -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// CHECK-LABEL: func.func @softmax(
func.func @softmax(%s: tensor<2x4x7x7xf32>, %ds: tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.softmax %{{[a-z_0-9]+}} axis 3 : tensor<2x4x7x7xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.softmax_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} axis 3 : tensor<2x4x7x7xf32>
  %p = tg.softmax %s axis 3 : tensor<2x4x7x7xf32>
  %g = tg.softmax_grad %p, %ds axis 3 : tensor<2x4x7x7xf32>
  return %g : tensor<2x4x7x7xf32>
}

// CHECK-LABEL: func.func @layer_norm(
func.func @layer_norm(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>, %beta: tensor<16xf32>) -> (tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.layer_norm %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.layer_norm_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  %y = tg.layer_norm %x, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %dx, %dg, %db = tg.layer_norm_grad %y, %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %dx, %dg, %db : tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// CHECK-LABEL: func.func @rms_norm(
func.func @rms_norm(%x: tensor<2x7x16xf32>, %gamma: tensor<16xf32>) -> (tensor<2x7x16xf32>, tensor<16xf32>) {
  // CHECK-NEXT: %[[Y:[a-z_0-9]+]] = tg.rms_norm %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.rms_norm_grad %[[Y]], %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} eps 9.99999997E-7 : tensor<2x7x16xf32>, tensor<16xf32>
  %y = tg.rms_norm %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  %dx, %dg = tg.rms_norm_grad %y, %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
  return %dx, %dg : tensor<2x7x16xf32>, tensor<16xf32>
}

// CHECK-LABEL: func.func @dropout(
func.func @dropout(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>) -> tensor<2x7x16xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.dropout %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.dropout_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
  %y = tg.dropout %x, %key rate 0.1 op_id 3 : tensor<2x7x16xf32>
  %dx = tg.dropout_grad %y, %key rate 0.1 op_id 3 : tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// The rate at run time (the attribute is the compiled default).
// CHECK-LABEL: func.func @run_time_dropout(
func.func @run_time_dropout(%x: tensor<2x7x16xf32>, %key: tensor<2xi32>, %p: tensor<f32>) -> tensor<2x7x16xf32> {
  // CHECK-NEXT: tg.dropout %arg0, %arg1 rate 1.000000e-01 run_time %arg2 op_id 3 : tensor<2x7x16xf32>
  // CHECK-NEXT: tg.dropout_grad %{{[a-z_0-9]+}}, %arg1 rate 1.000000e-01 run_time %arg2 op_id 3 : tensor<2x7x16xf32>
  %y = tg.dropout %x, %key rate 0.1 run_time %p op_id 3 : tensor<2x7x16xf32>
  %dx = tg.dropout_grad %y, %key rate 0.1 run_time %p op_id 3 : tensor<2x7x16xf32>
  return %dx : tensor<2x7x16xf32>
}

// CHECK-LABEL: func.func @masks_and_positions(
func.func @masks_and_positions(%src: tensor<2x7xi32>) -> (tensor<7x7xf32>, tensor<2x7xf32>, tensor<7x16xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.causal_mask : tensor<7x7xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.padding_mask %{{[a-z_0-9]+}} pad_id 0 : tensor<2x7xi32> -> tensor<2x7xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.positional_encoding : tensor<7x16xf32>
  %causal = tg.causal_mask : tensor<7x7xf32>
  %pad = tg.padding_mask %src pad_id 0 : tensor<2x7xi32> -> tensor<2x7xf32>
  %pe = tg.positional_encoding : tensor<7x16xf32>
  return %causal, %pad, %pe : tensor<7x7xf32>, tensor<2x7xf32>, tensor<7x16xf32>
}

// CHECK-LABEL: func.func @position_row(
func.func @position_row(%position: tensor<i32>) -> tensor<1x16xf32> {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.positional_encoding offset %{{[a-z_0-9]+}} : tensor<1x16xf32>
  %pe = tg.positional_encoding offset %position : tensor<1x16xf32>
  return %pe : tensor<1x16xf32>
}

// CHECK-LABEL: func.func @rotary(
func.func @rotary(%q: tensor<2x4x7x16xf32>, %row: tensor<2x4x1x16xf32>, %position: tensor<i32>) -> (tensor<2x4x7x16xf32>, tensor<2x4x1x16xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.rotary %{{[a-z_0-9]+}} base 1.000000e+04 : tensor<2x4x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.rotary %{{[a-z_0-9]+}} base 1.000000e+04 inverse : tensor<2x4x7x16xf32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.rotary %{{[a-z_0-9]+}} offset %{{[a-z_0-9]+}} base 5.000000e+05 : tensor<2x4x1x16xf32>
  %r = tg.rotary %q base 10000.0 : tensor<2x4x7x16xf32>
  %back = tg.rotary %r base 10000.0 inverse : tensor<2x4x7x16xf32>
  %one = tg.rotary %row offset %position base 500000.0 : tensor<2x4x1x16xf32>
  return %back, %one : tensor<2x4x7x16xf32>, tensor<2x4x1x16xf32>
}

// CHECK-LABEL: func.func @loss(
func.func @loss(%logits: tensor<2x7x100xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>) -> (tensor<f32>, tensor<i32>, tensor<2x7x100xf32>) {
  // CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tg.cross_entropy %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} smoothing 1.000000e-01 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  // CHECK-NEXT: %{{[a-z_0-9]+}} = tg.cross_entropy_grad %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} smoothing 1.000000e-01 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 0.1 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  %dl = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing 0.1 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  return %loss, %ntok, %dl : tensor<f32>, tensor<i32>, tensor<2x7x100xf32>
}

// The smoothing at run time (the attribute is the default).
// CHECK-LABEL: func.func @run_time_smoothing(
func.func @run_time_smoothing(%logits: tensor<2x7x100xf32>, %tgt: tensor<2x7xi32>, %dloss: tensor<f32>, %ls: tensor<f32>) -> (tensor<f32>, tensor<i32>, tensor<2x7x100xf32>) {
  // CHECK-NEXT: tg.cross_entropy %arg0, %arg1 smoothing 1.000000e-01 run_time %arg3 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  // CHECK-NEXT: tg.cross_entropy_grad %arg2, %arg0, %arg1 smoothing 1.000000e-01 run_time %arg3 ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 0.1 run_time %ls ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  %dl = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing 0.1 run_time %ls ignore 0 : tensor<2x7x100xf32>, tensor<2x7xi32>
  return %loss, %ntok, %dl : tensor<f32>, tensor<i32>, tensor<2x7x100xf32>
}

