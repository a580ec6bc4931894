// tg-fold-head-transposes: an attention between head transposes (the DSL's
// splitHeads and mergeHeads) reads and writes the untransposed [B, S, H, D]
// tensors; one with any other operand or use, or a decoding step, keeps its
// transposes. Each positive case pins the whole body with CHECK-NEXT, so no
// transpose is left behind.
// RUN: tgc-opt --tg-fold-head-transposes --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fold-head-transposes=report=true --split-input-file %s 2>&1 | FileCheck %s --check-prefix=REPORT

// (a) Self-attention with a padding mask and dropout: q, k, v each split,
// the output merged by one transpose.
func.func @self_attention(%qp: tensor<2x7x4x8xf32>, %kp: tensor<2x7x4x8xf32>, %vp: tensor<2x7x4x8xf32>, %pad: tensor<2x7xf32>, %key: tensor<2xi32>) -> tensor<2x7x4x8xf32> {
  %q = tg.transpose %qp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %k = tg.transpose %kp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %v = tg.transpose %vp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %o, %lse = tg.attention %q, %k, %v mask %pad key %key scale 0.353553385 dropout 1.000000e-01 op_id 3 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x7x8xf32> -> tensor<2x7x4x8xf32>
  return %m : tensor<2x7x4x8xf32>
}

// CHECK-LABEL: func.func @self_attention(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x7x4x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x7x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x7x4x8xf32>, %[[PAD:[a-z0-9]+]]: tensor<2x7xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x7x4x8xf32> {
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] key %[[KEY]] sequence_major scale 0.353553385 dropout 1.000000e-01 op_id 3 : (tensor<2x7x4x8xf32>, tensor<2x7x4x8xf32>, tensor<2x7x4x8xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x7x4x8xf32>, tensor<2x7x4xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x7x4x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fold-head-transposes: 1 attentions read and write the sequence-major layout, 0 kept head-major

// -----

// (b) Cross-attention, causal-free, 5 queries against 9 keys of another
// width, the value split once and read as key too; two merges of the output.
func.func @cross_attention(%qp: tensor<2x5x4x8xf32>, %kvp: tensor<2x9x4x8xf32>) -> (tensor<2x5x4x8xf32>, tensor<2x5x4x8xf32>) {
  %q = tg.transpose %qp permutation [0, 2, 1, 3] : tensor<2x5x4x8xf32> -> tensor<2x4x5x8xf32>
  %kv = tg.transpose %kvp permutation [0, 2, 1, 3] : tensor<2x9x4x8xf32> -> tensor<2x4x9x8xf32>
  %o, %lse = tg.attention %q, %kv, %kv scale 0.353553385 dropout 0.000000e+00 op_id 4 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x8xf32>) -> (tensor<2x4x5x8xf32>, tensor<2x4x5xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x5x8xf32> -> tensor<2x5x4x8xf32>
  %n = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x5x8xf32> -> tensor<2x5x4x8xf32>
  return %m, %n : tensor<2x5x4x8xf32>, tensor<2x5x4x8xf32>
}

// CHECK-LABEL: func.func @cross_attention(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x5x4x8xf32>, %[[KV:[a-z0-9]+]]: tensor<2x9x4x8xf32>)
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[KV]], %[[KV]] sequence_major scale 0.353553385 dropout 0.000000e+00 op_id 4 : (tensor<2x5x4x8xf32>, tensor<2x9x4x8xf32>, tensor<2x9x4x8xf32>) -> (tensor<2x5x4x8xf32>, tensor<2x5x4xf32>)
// CHECK-NEXT: return %[[O]], %[[O]] : tensor<2x5x4x8xf32>, tensor<2x5x4x8xf32>
// CHECK-NEXT: }

// -----

// (c) Kept head-major: the value is not a head transpose.
func.func @value_not_split(%qp: tensor<2x7x4x8xf32>, %kp: tensor<2x7x4x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x7x4x8xf32> {
  %q = tg.transpose %qp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %k = tg.transpose %kp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.000000e+00 op_id 0 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x7x8xf32> -> tensor<2x7x4x8xf32>
  return %m : tensor<2x7x4x8xf32>
}

// CHECK-LABEL: func.func @value_not_split(
// CHECK-COUNT-2: tg.transpose
// CHECK-NEXT: tg.attention
// CHECK-NOT: sequence_major
// CHECK-NEXT: tg.transpose
// REPORT: remark: tg-fold-head-transposes: 0 attentions read and write the sequence-major layout, 1 kept head-major

// -----

// (d) Kept head-major: the output is also used as it is.
func.func @output_used(%qp: tensor<2x7x4x8xf32>) -> (tensor<2x7x4x8xf32>, tensor<2x4x7x8xf32>) {
  %q = tg.transpose %qp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %o, %lse = tg.attention %q, %q, %q scale 0.353553385 dropout 0.000000e+00 op_id 0 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x7x8xf32> -> tensor<2x7x4x8xf32>
  return %m, %o : tensor<2x7x4x8xf32>, tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @output_used(
// CHECK-NOT: sequence_major
// CHECK: return

// -----

// (e) Kept head-major: the split is another permutation.
func.func @other_permutation(%qp: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  %q = tg.transpose %qp permutation [0, 1, 2, 3] : tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  %o, %lse = tg.attention %q, %q, %q scale 0.353553385 dropout 0.000000e+00 op_id 0 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x7x8xf32> -> tensor<2x7x4x8xf32>
  %n = tg.transpose %m permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  return %n : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @other_permutation(
// CHECK-NOT: sequence_major
// CHECK: return

// -----

// (f) Kept head-major: the splits also round to bf16 (dropping them would
// drop the rounding: the results changed).
func.func @rounding_splits(%q: tensor<1x2x2x2xf32>, %k: tensor<1x2x2x2xf32>, %v: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %qt = tg.transpose %q permutation [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xbf16>
  %kt = tg.transpose %k permutation [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xbf16>
  %vt = tg.transpose %v permutation [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xbf16>
  %o, %lse = tg.attention %qt, %kt, %vt bf16_products scale 0.7 dropout 0.0 op_id 0 : (tensor<1x2x2x2xbf16>, tensor<1x2x2x2xbf16>, tensor<1x2x2x2xbf16>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  return %m : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @rounding_splits(
// CHECK-NOT: sequence_major
// CHECK: return


// -----

// A discardable attribute stays on the folded attention (it was rebuilt
// without it).
func.func @discardable(%qp: tensor<2x7x4x8xf32>, %kp: tensor<2x7x4x8xf32>, %vp: tensor<2x7x4x8xf32>) -> tensor<2x7x4x8xf32> {
  %q = tg.transpose %qp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %k = tg.transpose %kp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %v = tg.transpose %vp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
  %o, %lse = tg.attention %q, %k, %v causal scale 0.353553385 dropout 0.000000e+00 op_id 5 {tg.note = "kept"} : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
  %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x7x8xf32> -> tensor<2x7x4x8xf32>
  return %m : tensor<2x7x4x8xf32>
}

// CHECK-LABEL: func.func @discardable(
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal sequence_major scale 0.353553385 dropout 0.000000e+00 op_id 5 {tg.note = "kept"} : (tensor<2x7x4x8xf32>, tensor<2x7x4x8xf32>, tensor<2x7x4x8xf32>) -> (tensor<2x7x4x8xf32>, tensor<2x7x4xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x7x4x8xf32>
// CHECK-NEXT: }
