// tg-fuse-attention matches attention by meaning: the padding mask
// broadcast explicitly, reshaped to [B, 1, 1, Sk] and broadcast implicitly,
// or given as [B, 1, 1, Sk]; the causal mask reshaped likewise; the scale as
// tg.scale, a division by a constant or on q. All fuse alike. What keeps a
// recognizable attention unfused is a remark at its line.
// RUN: tgc-opt --tg-fuse-attention --split-input-file --verify-diagnostics %s | FileCheck %s

// CHECK-LABEL: func.func @explicit_broadcast(
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} mask %arg3 scale 0.353553385
// CHECK-NOT: tg.softmax
func.func @explicit_broadcast(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %t, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// The mask reshaped to [B, 1, 1, Sk] and broadcast over all four dims, the
// scale a division by a constant: the reshape's input is the mask.
// CHECK-LABEL: func.func @reshaped_mask(
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} mask %arg3 scale 0.353553
// CHECK-NOT: tg.softmax
func.func @reshaped_mask(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %c = tg.constant dense<2.82842708> : tensor<2x4x7x7xf32>
  %t = tg.div %s, %c : tensor<2x4x7x7xf32>
  %r = tg.reshape %pad : tensor<2x7xf32> -> tensor<2x1x1x7xf32>
  %m = tg.broadcast %r dims [0, 1, 2, 3] : tensor<2x1x1x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %m, %t : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// A [B, 1, 1, Sk] mask as it comes (reshaped to [B, Sk] for the fused op),
// the causal mask reshaped to [1, 1, S, S], the scale on q.
// CHECK-LABEL: func.func @unit_dims_and_scaled_q(
// CHECK: %[[M:.*]] = tg.reshape %arg3 : tensor<2x1x1x7xf32> -> tensor<2x7xf32>
// CHECK: tg.attention %arg0, %{{.*}}, %{{.*}} mask %[[M]] causal scale 1.250000e-01
// CHECK-NOT: tg.softmax
func.func @unit_dims_and_scaled_q(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %pad: tensor<2x1x1x7xf32>) -> tensor<2x4x7x8xf32> {
  %qs = tg.scale %q by 0.125 : tensor<2x4x7x8xf32>
  %s = tg.matmul %qs, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 1, 2, 3] : tensor<2x1x1x7xf32> -> tensor<2x4x7x7xf32>
  %cm = tg.causal_mask : tensor<7x7xf32>
  %cr = tg.reshape %cm : tensor<7x7xf32> -> tensor<1x1x7x7xf32>
  %cb = tg.broadcast %cr dims [0, 1, 2, 3] : tensor<1x1x7x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %m : tensor<2x4x7x7xf32>
  %w = tg.add %u, %cb : tensor<2x4x7x7xf32>
  %p = tg.softmax %w axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// An additive score bias (relative positions, ALiBi) does not fuse yet.
// CHECK-LABEL: func.func @score_bias(
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
func.func @score_bias(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %bias: tensor<4x7x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %b = tg.broadcast %bias dims [1, 2, 3] : tensor<4x7x7xf32> -> tensor<2x4x7x7xf32>
  // expected-remark @+1 {{attention left unfused: an additive term of the scores is neither a padding mask [B, Sk] nor a causal mask [Sq, Sk] (an additive score bias does not fuse yet)}}
  %u = tg.add %s, %b : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// The probabilities returned too: the fused op would not keep them.
// CHECK-LABEL: func.func @probabilities_returned(
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
func.func @probabilities_returned(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>) {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  // expected-remark @+1 {{attention left unfused: the value of this tg.softmax has another use (the fused op keeps no intermediate)}}
  %p = tg.softmax %s axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %p : tensor<2x4x7x8xf32>, tensor<2x4x7x7xf32>
}
