// tg-mixed-precision: every GEMM (tg.matmul, tg.linear, tg.output_loss) reads
// bf16 copies of its operands; each f32 value is rounded once, right after
// it is made, however many GEMMs read it; a reshape between a value and its
// GEMM moves to the bf16 side (the f32 one goes when nothing else reads
// it). Results and everything else stay f32, but for the biases of the
// linears whose result is read only in bf16 and the bias gradients.
// RUN: tgc-opt --tg-mixed-precision --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-mixed-precision --tg-mixed-precision --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-mixed-precision=report=true --split-input-file %s 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: tgc-opt --tg-mixed-precision=attention=false --split-input-file %s | FileCheck %s --check-prefix=NOATT
// RUN: tgc-opt --tg-mixed-precision=attention-products=false --split-input-file %s | FileCheck %s --check-prefix=NOPROD

// A weight read by the forward GEMM and by the backward's input-gradient
// GEMM, an activation read by the forward GEMM and (reshaped) by the
// weight-gradient GEMM: two copies, made where the values are.
// CHECK-LABEL: func.func @forward_and_backward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x16xf32>, %[[DY:[a-z0-9]+]]: tensor<2x4x64xf32>
// CHECK-NEXT: %[[XB:[a-z0-9_]+]] = tg.to_bf16 %[[X]] : tensor<2x4x16xf32>
// CHECK-NEXT: %[[XFLAT:[a-z0-9_]+]] = tg.reshape %[[XB]] : tensor<2x4x16xbf16> -> tensor<8x16xbf16>
// CHECK-NEXT: %[[DYB:[a-z0-9_]+]] = tg.to_bf16 %[[DY]] : tensor<2x4x64xf32>
// CHECK-NEXT: %[[DYFLAT:[a-z0-9_]+]] = tg.reshape %[[DYB]] : tensor<2x4x64xbf16> -> tensor<8x64xbf16>
// CHECK-NEXT: %[[W:[a-z0-9_]+]] = tg.load @w : tensor<16x64xf32>
// CHECK-NEXT: %[[WB:[a-z0-9_]+]] = tg.to_bf16 %[[W]] : tensor<16x64xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.matmul %[[XB]], %[[WB]] : tensor<2x4x16xbf16>, tensor<16x64xbf16> -> tensor<2x4x64xf32>
// CHECK-NEXT: %[[DX:[a-z0-9_]+]] = tg.matmul %[[DYB]], %[[WB]] transpose_rhs : tensor<2x4x64xbf16>, tensor<16x64xbf16> -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[DW:[a-z0-9_]+]] = tg.matmul %[[XFLAT]], %[[DYFLAT]] transpose_lhs : tensor<8x16xbf16>, tensor<8x64xbf16> -> tensor<16x64xf32>
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = tg.add %[[X]], %[[DX]] : tensor<2x4x16xf32>
// CHECK-NEXT: return %[[Y]], %[[SUM]], %[[DW]]
// REPORT: remark: tg-mixed-precision: 3 GEMMs on bf16 operands, 3 tg.to_bf16 copies
module {
  tg.variable @w trainable init(xavier_uniform) : tensor<16x64xf32>
  func.func @forward_and_backward(%x: tensor<2x4x16xf32>, %dy: tensor<2x4x64xf32>) -> (tensor<2x4x64xf32>, tensor<2x4x16xf32>, tensor<16x64xf32>) {
    %w = tg.load @w : tensor<16x64xf32>
    %y = tg.matmul %x, %w : tensor<2x4x16xf32>, tensor<16x64xf32> -> tensor<2x4x64xf32>
    %dx = tg.matmul %dy, %w transpose_rhs : tensor<2x4x64xf32>, tensor<16x64xf32> -> tensor<2x4x16xf32>
    %xf = tg.reshape %x : tensor<2x4x16xf32> -> tensor<8x16xf32>
    %dyf = tg.reshape %dy : tensor<2x4x64xf32> -> tensor<8x64xf32>
    %dw = tg.matmul %xf, %dyf transpose_lhs : tensor<8x16xf32>, tensor<8x64xf32> -> tensor<16x64xf32>
    %sum = tg.add %x, %dx : tensor<2x4x16xf32>
    return %y, %sum, %dw : tensor<2x4x64xf32>, tensor<2x4x16xf32>, tensor<16x64xf32>
  }
}

// -----

// tg.linear: input and weight in bf16; its result is read only through its
// bf16 copy, so the bias is a bf16 copy too. tg.output_loss: hidden and
// weight in bf16, its gradients stay f32. The ReLU's gradient reads the bf16
// copy of the ReLU's output (same signs).
// CHECK-LABEL: func.func @fused_gemms(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x16xf32>, %{{[a-z0-9]+}}: tensor<16x16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>
// CHECK: %[[BB:[a-z0-9_]+]] = tg.to_bf16 %[[B]] : tensor<16xf32>
// CHECK-NEXT: %[[H:[a-z0-9_]+]] = tg.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BB]] relu : tensor<8x16xbf16>, tensor<16x16xbf16>, tensor<16xbf16> -> tensor<8x16xf32>
// CHECK-NEXT: %[[HB:[a-z0-9_]+]] = tg.to_bf16 %[[H]] : tensor<8x16xf32>
// CHECK-NEXT: tg.output_loss %[[HB]], {{.*}} : tensor<8x16xbf16>, tensor<100x16xbf16>, tensor<8xi32>, tensor<4x100xf32>
// CHECK-NEXT: tg.relu_grad %{{[a-z0-9_]+}}, %[[HB]] : tensor<8x16xf32>, tensor<8x16xbf16>
// CHECK-NOT: tg.to_bf16
// CHECK: return
func.func @fused_gemms(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %v: tensor<100x16xf32>, %t: tensor<8xi32>, %one: tensor<f32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<100x16xf32>) {
  %h = tg.linear %x, %w, %b relu : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %loss, %tokens, %dh, %dv, %ws = tg.output_loss %h, %v, %t, %one smoothing 0.1 ignore 0 chunk 4 : tensor<8x16xf32>, tensor<100x16xf32>, tensor<8xi32>, tensor<4x100xf32>
  %dr = tg.relu_grad %dh, %h : tensor<8x16xf32>
  return %loss, %dr, %dv : tensor<f32>, tensor<8x16xf32>, tensor<100x16xf32>
}

// -----

// A linear whose result is also read in f32 (here returned) keeps its f32
// bias; so does one whose result no GEMM reads.
// CHECK-LABEL: func.func @f32_read_linears(
// CHECK-NOT: tg.to_bf16 %arg2
// CHECK: tg.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %arg2 relu : tensor<8x16xbf16>, tensor<16x16xbf16>, tensor<16xf32> -> tensor<8x16xf32>
// CHECK: tg.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %arg2 : tensor<8x16xbf16>, tensor<16x16xbf16>, tensor<16xf32> -> tensor<8x16xf32>
// CHECK-NOT: tg.to_bf16 %arg2
// CHECK: return
func.func @f32_read_linears(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %h = tg.linear %x, %w, %b relu : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %y = tg.linear %h, %w, %b : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  return %h, %y : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A GELU tg.linear keeping its pre-activation: its operands in bf16, both
// results f32; tg.gelu_grad reads the f32 pre-activation.
// CHECK-LABEL: func.func @gelu_linear(
// CHECK: %[[H:[a-z0-9_]+]], %[[P:[a-z0-9_]+]] = tg.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} gelu : tensor<8x16xbf16>, tensor<16x16xbf16>, tensor<16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NEXT: tg.gelu_grad %{{[a-z0-9_]+}}, %[[P]] : tensor<8x16xf32>
// CHECK: return
func.func @gelu_linear(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %dy: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %h, %pre = tg.linear %x, %w, %b gelu : tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<8x16xf32>, tensor<8x16xf32>
  %dx = tg.gelu_grad %dy, %pre : tensor<8x16xf32>
  return %h, %dx : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A relu_grad inside an elementwise group keeps its f32 input (the group's
// loop reads it).
// CHECK-LABEL: func.func @grouped_relu_grad(
// CHECK: tg.fused_elementwise
// CHECK: tg.relu_grad %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<8x16xf32>{{$}}
func.func @grouped_relu_grad(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %dy: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %h = tg.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %g = tg.fused_elementwise(%dy, %h) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>):
    %r = tg.relu_grad %a, %b : tensor<8x16xf32>
    tg.yield %r : tensor<8x16xf32>
  }
  return %h, %g : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Attention and its gradient read the same bf16 copies of q, k and v, and
// their other products are bf16 ones too (bf16_products), unless
// attention-products=false (the CUDA target); an incremental decoder's
// attention over cache variables stays f32.
// CHECK-LABEL: func.func @attention(
// CHECK-NEXT: %[[QB:[a-z0-9_]+]] = tg.to_bf16 %{{[a-z0-9_]+}} : tensor<2x4x5x8xf32>
// CHECK-NEXT: %[[KB:[a-z0-9_]+]] = tg.to_bf16 %{{[a-z0-9_]+}} : tensor<2x4x9x8xf32>
// CHECK-NEXT: %[[VB:[a-z0-9_]+]] = tg.to_bf16 %{{[a-z0-9_]+}} : tensor<2x4x9x6xf32>
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %[[L:[a-z0-9_]+]] = tg.attention %[[QB]], %[[KB]], %[[VB]] bf16_products scale
// CHECK-NEXT: tg.attention_grad %[[O]], %[[QB]], %[[KB]], %[[VB]], %[[O]], %[[L]] bf16_products scale
// NOATT-LABEL: func.func @attention(
// NOATT-NOT: tg.to_bf16
// NOATT-NOT: bf16_products
// NOATT: return
// NOPROD-LABEL: func.func @attention(
// NOPROD: tg.attention %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} scale
// NOPROD: tg.attention_grad %{{.*}} scale
func.func @attention(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x6xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) {
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
  %dq, %dk, %dv = tg.attention_grad %o, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x6xf32>, tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>, tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>)
  return %dq, %dk, %dv : tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>
}

// -----

// CHECK-LABEL: func.func @decode_step(
// CHECK-NOT: tg.to_bf16
// CHECK: return
module {
  tg.variable @cache.k cache init(zeros) : tensor<2x4x7x8xf32>
  tg.variable @cache.v cache init(zeros) : tensor<2x4x7x8xf32>
  func.func @decode_step(%q: tensor<2x4x1x8xf32>, %position: tensor<i32>) -> tensor<2x4x1x8xf32> {
    %k = tg.load @cache.k : tensor<2x4x7x8xf32>
    %v = tg.load @cache.v : tensor<2x4x7x8xf32>
    %o, %lse = tg.attention %q, %k, %v causal position %position scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x1x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<i32>) -> (tensor<2x4x1x8xf32>, tensor<2x4x1xf32>)
    return %o : tensor<2x4x1x8xf32>
  }
}

// -----

// A training step's attention that reads a variable (not a cache) as its
// keys goes to bf16 like its gradient (it stayed f32 while its gradient
// went to bf16, recomputing the probabilities from other keys).
// CHECK-LABEL: func.func @keys_of_a_variable(
// CHECK: %[[K:[a-z0-9_]+]] = tg.load @keys : tensor<2x4x9x8xf32>
// CHECK: %[[KB:[a-z0-9_]+]] = tg.to_bf16 %[[K]] : tensor<2x4x9x8xf32>
// CHECK: %[[O:[a-z0-9_]+]], %[[L:[a-z0-9_]+]] = tg.attention %{{[a-z0-9_]+}}, %[[KB]], %{{[a-z0-9_]+}} bf16_products scale
// CHECK: tg.attention_grad %[[O]], %{{[a-z0-9_]+}}, %[[KB]], %{{[a-z0-9_]+}}, %[[O]], %[[L]] bf16_products scale
module {
  tg.variable @keys trainable init(normal, 0.1) : tensor<2x4x9x8xf32>
  func.func @keys_of_a_variable(%q: tensor<2x4x5x8xf32>, %v: tensor<2x4x9x6xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) {
    %k = tg.load @keys : tensor<2x4x9x8xf32>
    %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
    %dq, %dk, %dv = tg.attention_grad %o, %q, %k, %v, %o, %lse scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x4x5x6xf32>, tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>, tensor<2x4x5x6xf32>, tensor<2x4x5xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>)
    return %dq, %dk, %dv : tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>
  }
}

// -----

// A bias gradient (every dimension but the last summed) of a gradient that
// a weight gradient's GEMM multiplies (as [rows, N], lhs transposed) reads
// the same bf16 copy, in f32; a sum over other dimensions, one with
// keep_dims, one of a value no GEMM reads, and one of a value only a forward
// GEMM reads (a sum of the model's, not a gradient: it was once read from
// the copy) stay f32.
// CHECK-LABEL: func.func @bias_gradients(
// CHECK: %[[GB:[a-z0-9_]+]] = tg.to_bf16 %{{[a-z0-9_]+}} : tensor<2x4x16xf32>
// CHECK: %[[GR:[a-z0-9_]+]] = tg.reshape %[[GB]] : tensor<2x4x16xbf16> -> tensor<8x16xbf16>
// CHECK: tg.matmul %{{[a-z0-9_]+}}, %[[GR]] transpose_lhs : tensor<8x8xbf16>, tensor<8x16xbf16> -> tensor<8x16xf32>
// CHECK: tg.matmul {{.*}} : tensor<2x4x16xbf16>, tensor<16x8xbf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: tg.reduce_sum %[[GB]] dims [0, 1] : tensor<2x4x16xbf16> -> tensor<16xf32>
// CHECK-NEXT: tg.reduce_sum %{{[a-z0-9_]+}} dims [1, 2] : tensor<2x4x16xf32> -> tensor<2xf32>
// CHECK-NEXT: tg.reduce_sum %{{[a-z0-9_]+}} dims [0, 1] keep_dims : tensor<2x4x16xf32> -> tensor<1x1x16xf32>
// CHECK-NEXT: tg.reduce_sum %{{[a-z0-9_]+}} dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
// CHECK-NEXT: tg.reduce_sum %{{[a-z0-9_]+}} dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
func.func @bias_gradients(%x: tensor<8x8xf32>, %g: tensor<2x4x16xf32>, %h: tensor<2x4x16xf32>, %f: tensor<2x4x16xf32>, %w: tensor<16x8xf32>) -> (tensor<8x16xf32>, tensor<2x4x8xf32>, tensor<16xf32>, tensor<2xf32>, tensor<1x1x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %rows = tg.reshape %g : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %dw = tg.matmul %x, %rows transpose_lhs : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %y = tg.matmul %f, %w : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %db = tg.reduce_sum %g dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
  %sums = tg.reduce_sum %g dims [1, 2] : tensor<2x4x16xf32> -> tensor<2xf32>
  %kept = tg.reduce_sum %g dims [0, 1] keep_dims : tensor<2x4x16xf32> -> tensor<1x1x16xf32>
  %other = tg.reduce_sum %h dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
  %forward = tg.reduce_sum %f dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
  return %dw, %y, %db, %sums, %kept, %other, %forward : tensor<8x16xf32>, tensor<2x4x8xf32>, tensor<16xf32>, tensor<2xf32>, tensor<1x1x16xf32>, tensor<16xf32>, tensor<16xf32>
}
