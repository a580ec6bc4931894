// tg-fold-bf16-roundings: a tg.matmul or tg.linear on bf16 operands whose
// result is read by nothing but its tg.to_bf16 copy writes the result in
// bf16, and the copy goes; so does a tg.attention_grad with bf16_products
// whose three gradients are each read only by their copies. A result
// something else reads in f32, a GEMM on f32 operands, a copy of another
// op's value, and an attention gradient with one f32 reader or without
// bf16_products stay as they are. A transpose of f32 values read only by
// its copy rounds as it writes, and an elementwise loop (a group, or a
// single elementwise op made a group) writes the copy as one more result;
// so does a residual LayerNorm, beside its f32 result, and its gradient
// for the sublayer's gradient. A GEMM result that a loop only masks with
// tg.relu_grad and rounds is written rounded. A second run changes nothing.
// RUN: tgc-opt --tg-fold-bf16-roundings --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fold-bf16-roundings --tg-fold-bf16-roundings --split-input-file %s | FileCheck %s
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
// REPORT: remark: tg-fold-bf16-roundings: 2 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
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

// A GELU linear keeping its pre-activation: each result folds on its own.
// The result read only rounded (by the next GEMM) becomes bf16; the
// pre-activation, which tg.gelu_grad reads in f32, stays f32; a second
// linear whose pre-activation is read only rounded writes both in bf16.
// CHECK-LABEL: func.func @pre_activation(
// CHECK-NEXT: %[[H:[a-z0-9_]+]], %[[P:[a-z0-9_]+]] = tg.linear {{.*}} gelu : {{.*}} -> tensor<8x64xbf16>, tensor<8x64xf32>
// CHECK-NEXT: tg.gelu_grad %{{[a-z0-9_]+}}, %[[P]] : tensor<8x64xf32>
// CHECK-NEXT: %[[H2:[a-z0-9_]+]], %[[P2:[a-z0-9_]+]] = tg.linear {{.*}} silu : {{.*}} -> tensor<8x64xbf16>, tensor<8x64xbf16>
// CHECK-NOT: tg.to_bf16
// REPORT: remark: tg-fold-bf16-roundings: 3 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @pre_activation(%x: tensor<8x16xbf16>, %w1: tensor<16x64xbf16>, %b1: tensor<64xf32>, %w2: tensor<64x16xbf16>, %dy: tensor<8x64xf32>)
    -> (tensor<8x16xf32>, tensor<8x64xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %h, %pre = tg.linear %x, %w1, %b1 gelu : tensor<8x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<8x64xf32>, tensor<8x64xf32>
  %dx = tg.gelu_grad %dy, %pre : tensor<8x64xf32>
  %h2, %pre2 = tg.linear %x, %w1, %b1 silu : tensor<8x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<8x64xf32>, tensor<8x64xf32>
  %hb = tg.to_bf16 %h : tensor<8x64xf32>
  %y = tg.matmul %hb, %w2 : tensor<8x64xbf16>, tensor<64x16xbf16> -> tensor<8x16xf32>
  %h2b = tg.to_bf16 %h2 : tensor<8x64xf32>
  %y2 = tg.matmul %h2b, %w2 : tensor<8x64xbf16>, tensor<64x16xbf16> -> tensor<8x16xf32>
  %pre2b = tg.to_bf16 %pre2 : tensor<8x64xf32>
  %z2 = tg.matmul %pre2b, %w2 : tensor<8x64xbf16>, tensor<64x16xbf16> -> tensor<8x16xf32>
  return %y, %dx, %y2, %z2 : tensor<8x16xf32>, tensor<8x64xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// What stays: a result also read in f32 (the residual add), a GEMM on f32
// operands, and a copy of an argument (no op makes it).
// CHECK-LABEL: func.func @stays(
// CHECK: tg.matmul {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: tg.to_bf16
// CHECK-NEXT: tg.add
// CHECK: tg.matmul {{.*}} : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT: tg.to_bf16
// CHECK-NEXT: tg.to_bf16 %arg2
// REPORT: remark: tg-fold-bf16-roundings: 0 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @stays(%x: tensor<2x4x16xbf16>, %w: tensor<16x16xbf16>, %xf: tensor<2x4x16xf32>, %wf: tensor<16x16xf32>)
    -> (tensor<2x4x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>) {
  %a = tg.matmul %x, %w : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xf32>
  %ab = tg.to_bf16 %a : tensor<2x4x16xf32>
  %sum = tg.add %a, %xf : tensor<2x4x16xf32>
  %f = tg.matmul %xf, %wf : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %fb = tg.to_bf16 %f : tensor<2x4x16xf32>
  %eb = tg.to_bf16 %xf : tensor<2x4x16xf32>
  return %ab, %sum, %fb, %eb : tensor<2x4x16xbf16>, tensor<2x4x16xf32>, tensor<2x4x16xbf16>, tensor<2x4x16xbf16>
}

// -----

// The attention backward's three gradients, each read only by its copy (for
// the projections' gradient GEMMs): they become bf16 and the copies go.
// CHECK-LABEL: func.func @attention_gradients(
// CHECK-NEXT: %[[DQ:[a-z_]+]], %[[DK:[a-z_]+]], %[[DV:[a-z_]+]] = tg.attention_grad {{.*}} bf16_products {{.*}} -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>)
// CHECK-NEXT: return %[[DQ]], %[[DK]], %[[DV]] :
// REPORT: remark: tg-fold-bf16-roundings: 3 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @attention_gradients(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xbf16>, %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>)
    -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  %dqb = tg.to_bf16 %dq : tensor<2x4x7x8xf32>
  %dkb = tg.to_bf16 %dk : tensor<2x4x7x8xf32>
  %dvb = tg.to_bf16 %dv : tensor<2x4x7x8xf32>
  return %dqb, %dkb, %dvb : tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>
}

// -----

// What stays: a gradient also read in f32 keeps all three f32 (the kernel
// writes one type), and a backward without bf16_products keeps its.
// CHECK-LABEL: func.func @attention_gradients_stay(
// CHECK: tg.attention_grad {{.*}} -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
// CHECK-COUNT-3: tg.to_bf16
// CHECK: tg.add
// CHECK: tg.attention_grad {{.*}} -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
// CHECK-COUNT-3: tg.to_bf16
// REPORT: remark: tg-fold-bf16-roundings: 0 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @attention_gradients_stay(%do: tensor<2x4x7x8xf32>, %q: tensor<2x4x7x8xbf16>, %o: tensor<2x4x7x8xf32>, %lse: tensor<2x4x7xf32>)
    -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>,
        tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  %dqb = tg.to_bf16 %dq : tensor<2x4x7x8xf32>
  %dkb = tg.to_bf16 %dk : tensor<2x4x7x8xf32>
  %dvb = tg.to_bf16 %dv : tensor<2x4x7x8xf32>
  %sum = tg.add %dv, %o : tensor<2x4x7x8xf32>
  %eq, %ek, %ev = tg.attention_grad %do, %q, %q, %q, %o, %lse scale 0.353553385 dropout 0.0 op_id 8
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  %eqb = tg.to_bf16 %eq : tensor<2x4x7x8xf32>
  %ekb = tg.to_bf16 %ek : tensor<2x4x7x8xf32>
  %evb = tg.to_bf16 %ev : tensor<2x4x7x8xf32>
  return %dqb, %dkb, %dvb, %sum, %eqb, %ekb, %evb : tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>,
      tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>
}

// -----

// The attention output, read by its copy (the output projection) and by its
// gradient, whose bf16_products backward never reads it: the output becomes
// bf16 and the copy goes. Another reader in f32, or no bf16_products, keeps
// it f32.
// CHECK-LABEL: func.func @attention_output(
// CHECK: %[[O:[a-z_0-9]+]], %[[LSE:[a-z_0-9]+]] = tg.attention {{.*}} bf16_products {{.*}} -> (tensor<2x4x7x8xbf16>, tensor<2x4x7xf32>)
// CHECK-NEXT: tg.attention_grad {{.*}}, %[[O]], %[[LSE]] bf16_products
// CHECK-NOT: tg.to_bf16
// CHECK: return %[[O]]
// REPORT: remark: tg-fold-bf16-roundings: 1 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @attention_output(%q: tensor<2x4x7x8xbf16>, %do: tensor<2x4x7x8xf32>)
    -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) {
  %o, %lse = tg.attention %q, %q, %q bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %dq, %dk, %dv = tg.attention_grad %do, %q, %q, %q, %o, %lse bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>,
         tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
        -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
  %ob = tg.to_bf16 %o : tensor<2x4x7x8xf32>
  return %ob, %dq, %dk, %dv : tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>
}

// -----

// CHECK-LABEL: func.func @attention_output_stays(
// CHECK: tg.attention {{.*}} -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
// CHECK-NEXT: tg.to_bf16
// CHECK-NEXT: tg.add
// CHECK: tg.attention {{.*}} -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
// CHECK-NEXT: tg.to_bf16
// REPORT: remark: tg-fold-bf16-roundings: 0 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @attention_output_stays(%q: tensor<2x4x7x8xbf16>, %x: tensor<2x4x7x8xf32>)
    -> (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>) {
  %o, %lse = tg.attention %q, %q, %q bf16_products scale 0.353553385 dropout 0.0 op_id 7
      : (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %ob = tg.to_bf16 %o : tensor<2x4x7x8xf32>
  %sum = tg.add %o, %x : tensor<2x4x7x8xf32>
  %p, %plse = tg.attention %q, %q, %q scale 0.353553385 dropout 0.0 op_id 8
      : (tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>, tensor<2x4x7x8xbf16>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %pb = tg.to_bf16 %p : tensor<2x4x7x8xf32>
  return %ob, %sum, %pb : tensor<2x4x7x8xbf16>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xbf16>
}

// -----

// A head split read only rounded (by attention's bf16 products) folds; one
// that something else reads in f32 stays.
// CHECK-LABEL: func.func @transposes(
// CHECK-NEXT: %[[P:[a-z0-9_]+]] = tg.matmul {{.*}} -> tensor<2x4x16xbf16>
// CHECK-NEXT: %[[T:[a-z0-9_]+]] = tg.transpose %{{.*}} permutation [0, 2, 1] : tensor<2x4x16xf32> -> tensor<2x16x4xbf16>
// CHECK-NEXT: %[[U:[a-z0-9_]+]] = tg.transpose %{{.*}} permutation [0, 2, 1] : tensor<2x4x16xf32> -> tensor<2x16x4xf32>
// CHECK-NEXT: %[[UB:[a-z0-9_]+]] = tg.to_bf16 %[[U]]
// CHECK-NEXT: return %[[P]], %[[T]], %[[U]], %[[UB]]
// REPORT: remark: tg-fold-bf16-roundings: 2 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @transposes(%x: tensor<2x4x16xbf16>, %w: tensor<16x16xbf16>, %a: tensor<2x4x16xf32>)
    -> (tensor<2x4x16xbf16>, tensor<2x16x4xbf16>, tensor<2x16x4xf32>, tensor<2x16x4xbf16>) {
  %q = tg.matmul %x, %w : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xf32>
  %qb = tg.to_bf16 %q : tensor<2x4x16xf32>
  %t = tg.transpose %a permutation [0, 2, 1] : tensor<2x4x16xf32> -> tensor<2x16x4xf32>
  %tb = tg.to_bf16 %t : tensor<2x16x4xf32>
  %u = tg.transpose %a permutation [0, 2, 1] : tensor<2x4x16xf32> -> tensor<2x16x4xf32>
  %ub = tg.to_bf16 %u : tensor<2x16x4xf32>
  return %qb, %tb, %u, %ub : tensor<2x4x16xbf16>, tensor<2x16x4xbf16>, tensor<2x16x4xf32>, tensor<2x16x4xbf16>
}

// -----

// Elementwise loops. A tg.relu_grad whose result the bias gradient also
// reads in f32 becomes a group of its own that yields the f32 result and
// its rounding; a group read only rounded yields the rounding instead of
// the f32 value (which then never reaches memory).
// CHECK-LABEL: func.func @elementwise_loops(
// CHECK-NEXT: %[[G:[a-z0-9_]+]]:2 = tg.fused_elementwise(%arg0, %arg1) : (tensor<2x4x16xf32>, tensor<2x4x16xbf16>) -> (tensor<2x4x16xf32>, tensor<2x4x16xbf16>) {
// CHECK-NEXT: ^bb0(%[[DY:[a-z0-9_]+]]: tensor<2x4x16xf32>, %[[H:[a-z0-9_]+]]: tensor<2x4x16xbf16>):
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.relu_grad %[[DY]], %[[H]]
// CHECK-NEXT: %[[RB:[a-z0-9_]+]] = tg.to_bf16 %[[R]]
// CHECK-NEXT: tg.yield %[[R]], %[[RB]] : tensor<2x4x16xf32>, tensor<2x4x16xbf16>
// CHECK: %[[B:[a-z0-9_]+]] = tg.reduce_sum %[[G]]#0 dims [0, 1]
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tg.fused_elementwise(%arg2, %arg3) : (tensor<2x4x16xf32>, tensor<2xi32>) -> tensor<2x4x16xbf16> {
// CHECK: %[[D:[a-z0-9_]+]] = tg.dropout
// CHECK-NEXT: %[[DB:[a-z0-9_]+]] = tg.to_bf16 %[[D]]
// CHECK-NEXT: tg.yield %[[DB]] : tensor<2x4x16xbf16>
// CHECK: return %[[G]]#1, %[[B]], %[[E]]
// CHECK-NOT: tg.to_bf16
// REPORT: remark: tg-fold-bf16-roundings: 2 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @elementwise_loops(%dy: tensor<2x4x16xf32>, %h: tensor<2x4x16xbf16>, %x: tensor<2x4x16xf32>, %key: tensor<2xi32>)
    -> (tensor<2x4x16xbf16>, tensor<16xf32>, tensor<2x4x16xbf16>) {
  %r = tg.relu_grad %dy, %h : tensor<2x4x16xf32>, tensor<2x4x16xbf16>
  %rb = tg.to_bf16 %r : tensor<2x4x16xf32>
  %bias = tg.reduce_sum %r dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
  %e = tg.fused_elementwise(%x, %key) : (tensor<2x4x16xf32>, tensor<2xi32>) -> tensor<2x4x16xf32> {
  ^bb0(%a: tensor<2x4x16xf32>, %k: tensor<2xi32>):
    %s = tg.scale %a by 2.0 : tensor<2x4x16xf32>
    %d = tg.dropout %s, %k rate 1.000000e-01 op_id 3 : tensor<2x4x16xf32>
    tg.yield %d : tensor<2x4x16xf32>
  }
  %eb = tg.to_bf16 %e : tensor<2x4x16xf32>
  return %rb, %bias, %eb : tensor<2x4x16xbf16>, tensor<16xf32>, tensor<2x4x16xbf16>
}

// -----

// A residual LayerNorm whose result a GEMM reads rounded writes the copy
// beside its f32 result, which the next residual still reads.
// CHECK-LABEL: func.func @residual_layer_norm(
// CHECK-NEXT: %[[Y:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[YB:[a-z0-9_]+]] = tg.residual_layer_norm {{.*}} : tensor<2x4x16xf32>, tensor<16xf32> rounded tensor<2x4x16xbf16>
// CHECK-NEXT: %[[P:[a-z0-9_]+]] = tg.matmul %[[YB]], %arg4
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = tg.add %[[Y]], %[[P]]
// CHECK-NEXT: return %[[S]]
// REPORT: remark: tg-fold-bf16-roundings: 1 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @residual_layer_norm(%x: tensor<2x4x16xf32>, %s: tensor<2x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %w: tensor<16x16xbf16>, %key: tensor<2xi32>)
    -> tensor<2x4x16xf32> {
  %y, %mean, %rstd = tg.residual_layer_norm %x, %s, %g, %b, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x4x16xf32>, tensor<16xf32>
  %yb = tg.to_bf16 %y : tensor<2x4x16xf32>
  %p = tg.matmul %yb, %w : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xf32>
  %sum = tg.add %y, %p : tensor<2x4x16xf32>
  return %sum : tensor<2x4x16xf32>
}

// -----

// Its gradient likewise writes the copy of the sublayer's gradient (for
// the sublayer's gradient GEMMs) beside the f32 one the bias gradient reads.
// CHECK-LABEL: func.func @residual_layer_norm_grad(
// CHECK-NEXT: %{{[a-z0-9_]+}}, %[[DS:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[DSB:[a-z0-9_]+]] = tg.residual_layer_norm_grad {{.*}} : tensor<2x4x16xf32>, tensor<16xf32> rounded tensor<2x4x16xbf16>
// CHECK-NEXT: %[[DB:[a-z0-9_]+]] = tg.reduce_sum %[[DS]] dims [0, 1]
// CHECK-NEXT: %[[DX:[a-z0-9_]+]] = tg.matmul %[[DSB]], %arg5 transpose_rhs
// CHECK-NEXT: return %[[DB]], %[[DX]]
// REPORT: remark: tg-fold-bf16-roundings: 1 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms
func.func @residual_layer_norm_grad(%dy: tensor<2x4x16xf32>, %y: tensor<2x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %rstd: tensor<2x4xf32>, %w: tensor<16x16xbf16>, %key: tensor<2xi32>)
    -> (tensor<16xf32>, tensor<2x4x16xf32>) {
  %dx, %ds, %dg, %db = tg.residual_layer_norm_grad %dy, %y, %g, %b, %rstd, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x4x16xf32>, tensor<16xf32>
  %dsb = tg.to_bf16 %ds : tensor<2x4x16xf32>
  %bias = tg.reduce_sum %ds dims [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
  %dxs = tg.matmul %dsb, %w transpose_rhs : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xf32>
  return %bias, %dxs : tensor<16xf32>, tensor<2x4x16xf32>
}

// -----

// A GEMM result that a loop only masks with tg.relu_grad and rounds (a
// feed-forward layer's gradient before its ReLU) is written rounded, and the
// loop widens it as it loads it: the mask picks each value or 0, so the
// loop's bf16 results are the same bits. Not where the loop also yields the
// masked f32 values, where something else reads the GEMM's result, or where
// the result is the mask's input rather than the masked gradient.
// CHECK-LABEL: func.func @masked_gemm_results(
// CHECK-NEXT: %[[G:[a-z0-9_]+]] = tg.matmul %arg0, %arg1 : tensor<8x16xbf16>, tensor<16x32xbf16> -> tensor<8x32xbf16>
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = tg.fused_elementwise(%[[G]], %arg2) : (tensor<8x32xbf16>, tensor<8x32xbf16>) -> tensor<8x32xbf16> {
// CHECK-NEXT: ^bb0(%[[A:[a-z0-9_]+]]: tensor<8x32xbf16>, %[[B:[a-z0-9_]+]]: tensor<8x32xbf16>):
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = tg.relu_grad %[[A]], %[[B]] : tensor<8x32xbf16>
// CHECK-NEXT: %[[RB:[a-z0-9_]+]] = tg.to_bf16 %[[R]] : tensor<8x32xf32>
// CHECK-NEXT: tg.yield %[[RB]] : tensor<8x32xbf16>
// CHECK: tg.matmul {{.*}} -> tensor<8x32xf32>
// CHECK: tg.matmul {{.*}} -> tensor<8x32xf32>
// CHECK: tg.matmul {{.*}} -> tensor<8x32xf32>
// CHECK: return
// REPORT: remark: tg-fold-bf16-roundings: 0 tg.to_bf16 copies folded into their GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms; 1 GEMM results written rounded for a ReLU gradient
func.func @masked_gemm_results(%x: tensor<8x16xbf16>, %w: tensor<16x32xbf16>, %y: tensor<8x32xbf16>, %dy: tensor<8x32xf32>)
    -> (tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<8x32xf32>, tensor<8x32xbf16>, tensor<8x32xf32>, tensor<8x32xbf16>) {
  %g = tg.matmul %x, %w : tensor<8x16xbf16>, tensor<16x32xbf16> -> tensor<8x32xf32>
  %m = tg.fused_elementwise(%g, %y) : (tensor<8x32xf32>, tensor<8x32xbf16>) -> tensor<8x32xbf16> {
  ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xbf16>):
    %r = tg.relu_grad %a, %b : tensor<8x32xf32>, tensor<8x32xbf16>
    %rb = tg.to_bf16 %r : tensor<8x32xf32>
    tg.yield %rb : tensor<8x32xbf16>
  }
  %g2 = tg.matmul %x, %w : tensor<8x16xbf16>, tensor<16x32xbf16> -> tensor<8x32xf32>
  %m2:2 = tg.fused_elementwise(%g2, %y) : (tensor<8x32xf32>, tensor<8x32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xf32>) {
  ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xbf16>):
    %r = tg.relu_grad %a, %b : tensor<8x32xf32>, tensor<8x32xbf16>
    %rb = tg.to_bf16 %r : tensor<8x32xf32>
    tg.yield %rb, %r : tensor<8x32xbf16>, tensor<8x32xf32>
  }
  %g3 = tg.matmul %x, %w : tensor<8x16xbf16>, tensor<16x32xbf16> -> tensor<8x32xf32>
  %m3 = tg.fused_elementwise(%g3, %y) : (tensor<8x32xf32>, tensor<8x32xbf16>) -> tensor<8x32xbf16> {
  ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xbf16>):
    %r = tg.relu_grad %a, %b : tensor<8x32xf32>, tensor<8x32xbf16>
    %rb = tg.to_bf16 %r : tensor<8x32xf32>
    tg.yield %rb : tensor<8x32xbf16>
  }
  %s3 = tg.add %g3, %dy : tensor<8x32xf32>
  %g4 = tg.matmul %x, %w : tensor<8x16xbf16>, tensor<16x32xbf16> -> tensor<8x32xf32>
  %m4 = tg.fused_elementwise(%dy, %g4) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xbf16> {
  ^bb0(%a: tensor<8x32xf32>, %b: tensor<8x32xf32>):
    %r = tg.relu_grad %a, %b : tensor<8x32xf32>
    %rb = tg.to_bf16 %r : tensor<8x32xf32>
    tg.yield %rb : tensor<8x32xbf16>
  }
  return %m, %m2#0, %m2#1, %m3, %s3, %m4 : tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<8x32xf32>, tensor<8x32xbf16>, tensor<8x32xf32>, tensor<8x32xbf16>
}
