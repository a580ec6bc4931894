// tg-fuse-attention: hand-written unfused attention chains (the shape the DSL
// emits) become one tg.attention; chains with an extra use of an
// intermediate, or whose axis, masks or transposes do not fit, stay as they
// are. Each positive case pins the whole function body with CHECK-NEXT up to
// its closing brace, so nothing of the chain (softmax, dropout, scale, mask
// broadcasts, causal_mask) is left behind.
// RUN: tgc-opt --tg-fuse-attention --split-input-file %s | FileCheck %s
// RUN: tgc-opt --tg-fuse-attention=report=true %s --split-input-file 2>&1 | FileCheck %s --check-prefix=REPORT

// (a) Encoder self-attention: Q K^T, scale, padding mask [B, Sk] broadcast
// over heads and queries, softmax on the key axis, dropout, P V.
func.func @encoder_self(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>, %key: tensor<2xi32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %t, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %d = tg.dropout %p, %key rate 1.000000e-01 op_id 1 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @encoder_self(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[PAD:[a-z0-9]+]]: tensor<2x7xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x4x7x8xf32> {
// CHECK-NOT: tg.softmax
// CHECK-NOT: tg.broadcast
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] key %[[KEY]] scale 0.353553385 dropout 1.000000e-01 op_id 1 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x4x7x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 1 attention chains (0 causal, 1 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// (b) Decoder self-attention: the causal mask [S, S] broadcast over batch
// and heads, no padding mask, with dropout. The causal_mask op goes too.
func.func @decoder_causal(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %key: tensor<2xi32>) -> tensor<2x4x7x8xf32> {
  %c = tg.causal_mask : tensor<7x7xf32>
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %m = tg.broadcast %c dims [2, 3] : tensor<7x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %t, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %d = tg.dropout %p, %key rate 1.000000e-01 op_id 5 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @decoder_causal(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x4x7x8xf32> {
// CHECK-NOT: tg.causal_mask
// CHECK-NOT: tg.softmax
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] key %[[KEY]] causal scale 0.353553385 dropout 1.000000e-01 op_id 5 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x4x7x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 1 attention chains (1 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// (c) Cross-attention, Sq = 5 queries over Sk = 9 keys, value width 6: the
// padding mask is over the source keys [B, Sk].
func.func @cross(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x9x8xf32>, %v: tensor<2x4x9x6xf32>, %pad: tensor<2x9xf32>, %key: tensor<2xi32>) -> tensor<2x4x5x6xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32> -> tensor<2x4x5x9xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x5x9xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x9xf32> -> tensor<2x4x5x9xf32>
  %u = tg.add %t, %m : tensor<2x4x5x9xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x5x9xf32>
  %d = tg.dropout %p, %key rate 2.000000e-01 op_id 9 : tensor<2x4x5x9xf32>
  %o = tg.matmul %d, %v : tensor<2x4x5x9xf32>, tensor<2x4x9x6xf32> -> tensor<2x4x5x6xf32>
  return %o : tensor<2x4x5x6xf32>
}

// CHECK-LABEL: func.func @cross(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x5x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x9x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x9x6xf32>, %[[PAD:[a-z0-9]+]]: tensor<2x9xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>) -> tensor<2x4x5x6xf32> {
// CHECK-NOT: tg.softmax
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] key %[[KEY]] scale 0.353553385 dropout 2.000000e-01 op_id 9 : (tensor<2x4x5x8xf32>, tensor<2x4x9x8xf32>, tensor<2x4x9x6xf32>, tensor<2x9xf32>, tensor<2xi32>) -> (tensor<2x4x5x6xf32>, tensor<2x4x5xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x4x5x6xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 1 attention chains (0 causal, 1 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// (d) No scale, no mask, no dropout: softmax(Q K^T) V fuses with scale 1,
// rate 0 and no rng key.
func.func @bare(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %p = tg.softmax %s axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @bare(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
// CHECK-NOT: tg.softmax
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] scale 1.000000e+00 dropout 0.000000e+00 op_id 0 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x4x7x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 1 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// (e) Both masks, each add written with the broadcast as its LHS, the causal
// add innermost (the DSL adds the padding mask first); a dropout of rate 0
// keeps its op_id but passes no key. The lse result is returned too.
func.func @both_masks_lhs(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>, %key: tensor<2xi32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 1.250000e-01 : tensor<2x4x7x7xf32>
  %c = tg.causal_mask : tensor<7x7xf32>
  %cm = tg.broadcast %c dims [2, 3] : tensor<7x7xf32> -> tensor<2x4x7x7xf32>
  %u1 = tg.add %cm, %t : tensor<2x4x7x7xf32>
  %pm = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u2 = tg.add %pm, %u1 : tensor<2x4x7x7xf32>
  %p = tg.softmax %u2 axis 3 : tensor<2x4x7x7xf32>
  %d = tg.dropout %p, %key rate 0.000000e+00 op_id 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @both_masks_lhs(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[PAD:[a-z0-9]+]]: tensor<2x7xf32>, %{{[a-z0-9]+}}: tensor<2xi32>) -> tensor<2x4x7x8xf32> {
// CHECK-NOT: tg.causal_mask
// CHECK-NOT: tg.broadcast
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] causal scale 1.250000e-01 dropout 0.000000e+00 op_id 3 : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
// CHECK-NEXT: return %[[O]] : tensor<2x4x7x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 1 attention chains (1 causal, 1 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// (f) Two heads' chains sharing one causal mask and its broadcast: both fuse,
// and the shared mask ops go once the second chain is fused.
func.func @shared_mask(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %q2: tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) {
  %c = tg.causal_mask : tensor<7x7xf32>
  %m = tg.broadcast %c dims [2, 3] : tensor<7x7xf32> -> tensor<2x4x7x7xf32>
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  %s2 = tg.matmul %q2, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %u2 = tg.add %s2, %m : tensor<2x4x7x7xf32>
  %p2 = tg.softmax %u2 axis 3 : tensor<2x4x7x7xf32>
  %o2 = tg.matmul %p2, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %o2 : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @shared_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[Q2:[a-z0-9]+]]: tensor<2x4x7x8xf32>)
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] causal scale 1.000000e+00 dropout 0.000000e+00 op_id 0 :
// CHECK-NEXT: %[[O2:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q2]], %[[K]], %[[V]] causal scale 1.000000e+00 dropout 0.000000e+00 op_id 0 :
// CHECK-NEXT: return %[[O]], %[[O2]] : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 2 attention chains (2 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// (g) The padding-mask broadcast has another use: it is not part of the
// chain's intermediates, so the chain fuses and the broadcast stays.
func.func @mask_broadcast_shared(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>) {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %m : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
}

// CHECK-LABEL: func.func @mask_broadcast_shared(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x7x8xf32>, %[[PAD:[a-z0-9]+]]: tensor<2x7xf32>)
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = tg.broadcast %[[PAD]] dims [0, 3]
// CHECK-NEXT: %[[O:[a-z0-9_]+]], %{{[a-z0-9_]+}} = tg.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] scale 1.000000e+00 dropout 0.000000e+00 op_id 0 :
// CHECK-NEXT: return %[[O]], %[[M]] : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
// CHECK-NEXT: }
// REPORT: remark: tg-fuse-attention: fused 1 attention chains (0 causal, 1 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Negative: the probabilities are returned too (the softmax has another use).
func.func @neg_probs_returned(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>, %key: tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>) {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %t, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %d = tg.dropout %p, %key rate 1.000000e-01 op_id 1 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %p : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
}

// CHECK-LABEL: func.func @neg_probs_returned(
// CHECK-NOT: tg.attention
// CHECK: tg.broadcast
// CHECK: %[[P:[a-z0-9_]+]] = tg.softmax
// CHECK-NEXT: tg.dropout %[[P]]
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: return %{{[a-z0-9_]+}}, %[[P]]
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 1 left unfused because an intermediate has another use

// -----

// Negative: the dropout output has another use.
func.func @neg_dropout_used_twice(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %key: tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>) {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %p = tg.softmax %s axis 3 : tensor<2x4x7x7xf32>
  %d = tg.dropout %p, %key rate 1.000000e-01 op_id 1 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %d : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
}

// CHECK-LABEL: func.func @neg_dropout_used_twice(
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 1 left unfused because an intermediate has another use

// -----

// Negative: the raw scores are used twice (returned next to the output).
func.func @neg_scores_used_twice(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>) {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %p = tg.softmax %t axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %s : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
}

// CHECK-LABEL: func.func @neg_scores_used_twice(
// CHECK-NOT: tg.attention
// CHECK: %[[S:[a-z0-9_]+]] = tg.matmul {{.*}} transpose_rhs
// CHECK-NEXT: tg.scale %[[S]]
// CHECK-NEXT: tg.softmax
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: return %{{[a-z0-9_]+}}, %[[S]]
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 1 left unfused because an intermediate has another use

// -----

// Negative: softmax over the query axis (2), not the key axis.
func.func @neg_softmax_axis(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %p = tg.softmax %s axis 2 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @neg_softmax_axis(
// CHECK-NOT: tg.attention
// CHECK: tg.softmax %{{[a-z0-9_]+}} axis 2
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Negative: a [B, Sq] mask broadcast along dims [0, 2] (over queries, not
// keys) is not a key-padding mask.
func.func @neg_mask_dims(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 2] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @neg_mask_dims(
// CHECK-NOT: tg.attention
// CHECK: tg.broadcast %{{[a-z0-9_]+}} dims [0, 2]
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Negative: a padding mask whose shape is not [B, Sk]. The broadcast verifier
// accepts a size-1 key dimension ([2, 1] -> [2, 4, 7, 7]; a [2, 9] mask over
// 7 keys does not verify), but tg.attention wants the mask as [B, Sk].
func.func @neg_mask_shape(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x1xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x1xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @neg_mask_shape(
// CHECK-NOT: tg.attention
// CHECK: tg.broadcast %{{[a-z0-9_]+}} dims [0, 3] : tensor<2x1xf32> -> tensor<2x4x7x7xf32>
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Negative: the scores are Q K with K already laid out [B, H, D, Sk] (no
// transpose_rhs): not the Q K^T the pass matches.
func.func @neg_no_transpose(%q: tensor<2x4x7x8xf32>, %kt: tensor<2x4x8x7xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %kt : tensor<2x4x7x8xf32>, tensor<2x4x8x7xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %p = tg.softmax %t axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @neg_no_transpose(
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Negative: the scale is applied after the mask add, scale * (Q K^T + mask),
// which is not the order tg.attention computes.
func.func @neg_scale_after_mask(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %t = tg.scale %u by 0.353553385 : tensor<2x4x7x7xf32>
  %p = tg.softmax %t axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @neg_scale_after_mask(
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Negative: a [1, 1] causal mask broadcasts over [2, 3] but masks nothing;
// fusing it as `causal` would hide the later keys.
func.func @neg_degenerate_causal_mask(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %c = tg.causal_mask : tensor<1x1xf32>
  %m = tg.broadcast %c dims [2, 3] : tensor<1x1xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @neg_degenerate_causal_mask(
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// Not attention at all (no softmax), so a dropout with another use is not
// counted as a rejected chain.
func.func @neg_not_attention_extra_use(%a: tensor<2x4x7x7xf32>, %v: tensor<2x4x7x8xf32>, %key: tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>) {
  %d = tg.dropout %a, %key rate 1.000000e-01 op_id 1 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %d : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
}

// CHECK-LABEL: func.func @neg_not_attention_extra_use(
// CHECK: tg.dropout
// CHECK-NOT: tg.attention
// REPORT: remark: tg-fuse-attention: fused 0 attention chains (0 causal, 0 with a padding mask, 0 with a score bias); 0 left unfused because an intermediate has another use

// -----

// A dropout with a run-time rate (the step's attention_dropout input): the
// fused op reads it too.
func.func @run_time_rate(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %key: tensor<2xi32>, %rate: tensor<f32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %p = tg.softmax %t axis 3 : tensor<2x4x7x7xf32>
  %d = tg.dropout %p, %key rate 1.000000e-01 run_time %rate op_id 1 : tensor<2x4x7x7xf32>
  %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// CHECK-LABEL: func.func @run_time_rate(
// CHECK-SAME: %[[KEY:[a-z0-9]+]]: tensor<2xi32>, %[[RATE:[a-z0-9]+]]: tensor<f32>)
// CHECK-NEXT: tg.attention %{{.*}} key %[[KEY]] scale 0.353553385 dropout 1.000000e-01 run_time %[[RATE]] op_id 1 :
