// tg-fuse-attention matches attention by meaning: the padding mask
// broadcast explicitly, reshaped to [B, 1, 1, Sk] and broadcast implicitly,
// or given as [B, 1, 1, Sk]; the causal mask reshaped likewise; the scale as
// tg.scale, a division by a constant or on q; an additive score bias as the
// fused op's operand. All fuse alike. What keeps a recognizable attention
// unfused is a remark at its line.
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

// An additive score bias per head ([H, S, S] broadcast over the batch:
// ALiBi, relative positions) becomes the fused op's bias, reshaped to
// [1, H, Sq, Sk], with the padding mask beside it.
// CHECK-LABEL: func.func @score_bias_per_head(
// CHECK: %[[B:.*]] = tg.reshape %arg3 : tensor<4x7x7xf32> -> tensor<1x4x7x7xf32>
// CHECK: tg.attention %arg0, %arg1, %arg2 mask %arg4 bias %[[B]] scale 0.353553385
// CHECK-NOT: tg.softmax
// CHECK-NOT: tg.broadcast
func.func @score_bias_per_head(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %bias: tensor<4x7x7xf32>, %pad: tensor<2x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
  %b = tg.broadcast %bias dims [1, 2, 3] : tensor<4x7x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %b, %t : tensor<2x4x7x7xf32>
  %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  %w = tg.add %u, %m : tensor<2x4x7x7xf32>
  %p = tg.softmax %w axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// A bias with its unit dims in place ([1, H, S, S]) is read as it is; one
// for every batch row and head ([B, H, S, S], not broadcast) too.
// CHECK-LABEL: func.func @score_bias_unit_batch(
// CHECK: tg.attention %arg0, %arg1, %arg2 bias %arg3 causal scale 1.000000e+00
// CHECK-LABEL: func.func @score_bias_full(
// CHECK: tg.attention %arg0, %arg1, %arg2 bias %arg3 scale 1.000000e+00
func.func @score_bias_unit_batch(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %bias: tensor<1x4x7x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %b = tg.broadcast %bias dims [0, 1, 2, 3] : tensor<1x4x7x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %b : tensor<2x4x7x7xf32>
  %cm = tg.causal_mask : tensor<7x7xf32>
  %cb = tg.broadcast %cm dims [2, 3] : tensor<7x7xf32> -> tensor<2x4x7x7xf32>
  %w = tg.add %u, %cb : tensor<2x4x7x7xf32>
  %p = tg.softmax %w axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}
func.func @score_bias_full(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %bias: tensor<2x4x7x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %bias : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// A user's own [S, S] mask (a sliding window, not tg.causal_mask) is a
// bias shared by every batch row and head.
// CHECK-LABEL: func.func @own_mask(
// CHECK: %[[B:.*]] = tg.reshape %arg3 : tensor<7x7xf32> -> tensor<1x1x7x7xf32>
// CHECK: tg.attention %arg0, %arg1, %arg2 bias %[[B]] scale
func.func @own_mask(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %window: tensor<7x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %b = tg.broadcast %window dims [2, 3] : tensor<7x7xf32> -> tensor<2x4x7x7xf32>
  %u = tg.add %s, %b : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// Two biases: the fused op takes one (the user adds them first).
// CHECK-LABEL: func.func @two_biases(
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
func.func @two_biases(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %b1: tensor<2x4x7x7xf32>, %b2: tensor<2x4x7x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  // expected-remark @+1 {{attention left unfused: the scores have more than one additive bias (add them into one before the scores)}}
  %u = tg.add %s, %b1 : tensor<2x4x7x7xf32>
  %w = tg.add %u, %b2 : tensor<2x4x7x7xf32>
  %p = tg.softmax %w axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// A term spread over the keys ([B, H, Sq, 1]) is no score bias.
// CHECK-LABEL: func.func @row_term(
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
func.func @row_term(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %r: tensor<2x4x7xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %b = tg.broadcast %r dims [0, 1, 2] : tensor<2x4x7xf32> -> tensor<2x4x7x7xf32>
  // expected-remark @+1 {{attention left unfused: an additive term of the scores is neither a mask nor a score bias [B or 1, H or 1, Sq, Sk]}}
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

// -----

// A scale tg.attention cannot take (it must be positive and finite) keeps
// the chain: a negative factor, a zero one, and factors on q and k whose
// product overflows (each of these once made an op the verifier refused).
// CHECK-LABEL: func.func @scales_kept(
// CHECK-NOT: tg.attention
// CHECK: return
func.func @scales_kept(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>) {
  // expected-remark @+1 {{attention left unfused: the scores' scale (the product of the factors on q, k and the scores) is not positive and finite}}
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t = tg.scale %s by -0.5 : tensor<2x4x7x7xf32>
  %p = tg.softmax %t axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  %zero = tg.constant dense<0.0> : tensor<2x4x7x7xf32>
  // expected-remark @+1 {{attention left unfused: the scores' scale (the product of the factors on q, k and the scores) is not positive and finite}}
  %s2 = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %t2 = tg.mul %s2, %zero : tensor<2x4x7x7xf32>
  %p2 = tg.softmax %t2 axis 3 : tensor<2x4x7x7xf32>
  %o2 = tg.matmul %p2, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  %q3 = tg.scale %q by 1.0e+20 : tensor<2x4x7x8xf32>
  %k3 = tg.scale %k by 1.0e+20 : tensor<2x4x7x8xf32>
  // expected-remark @+1 {{attention left unfused: the scores' scale (the product of the factors on q, k and the scores) is not positive and finite}}
  %s3 = tg.matmul %q3, %k3 transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %p3 = tg.softmax %s3 axis 3 : tensor<2x4x7x7xf32>
  %o3 = tg.matmul %p3, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o, %o2, %o3 : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>
}

// -----

// A term of a padding mask's form ([B, Sk] spread over dims 0 and 3) that is
// learned (computed from a trainable variable) is no mask: tg.attention
// takes its mask as data, and autodiff then refused the fused module.
tg.variable @key_bias trainable init(zeros) : tensor<2x7xf32>
// CHECK-LABEL: func.func @learned_key_bias(
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
func.func @learned_key_bias(%q: tensor<2x4x7x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>) -> tensor<2x4x7x8xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
  %kb = tg.load @key_bias : tensor<2x7xf32>
  %b = tg.broadcast %kb dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
  // expected-remark @+1 {{attention left unfused: an additive term of the scores is neither a mask nor a score bias [B or 1, H or 1, Sq, Sk]}}
  %u = tg.add %s, %b : tensor<2x4x7x7xf32>
  %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
  %o = tg.matmul %p, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}

// -----

// One mask broadcast added twice (the causal mask, then the same term as a
// score bias; a decoding step's padding mask likewise): the fused op takes it
// as both, and its producers go once (they were erased twice: a heap
// use-after-free that the sanitizer build reports).
// CHECK-LABEL: func.func @causal_mask_twice(
// CHECK-NEXT: %[[CM:.*]] = tg.causal_mask : tensor<3x3xf32>
// CHECK-NEXT: %[[B:.*]] = tg.reshape %[[CM]] : tensor<3x3xf32> -> tensor<1x1x3x3xf32>
// CHECK-NEXT: %{{.*}}, %{{.*}} = tg.attention %arg0, %arg1, %arg2 bias %[[B]] causal scale
// CHECK-NEXT: return
func.func @causal_mask_twice(%q: tensor<1x2x3x2xf32>, %k: tensor<1x2x3x2xf32>, %v: tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32> -> tensor<1x2x3x3xf32>
  %cm = tg.causal_mask : tensor<3x3xf32>
  %cb = tg.broadcast %cm dims [2, 3] : tensor<3x3xf32> -> tensor<1x2x3x3xf32>
  %a1 = tg.add %s, %cb : tensor<1x2x3x3xf32>
  %a2 = tg.add %a1, %cb : tensor<1x2x3x3xf32>
  %p = tg.softmax %a2 axis 3 : tensor<1x2x3x3xf32>
  %o = tg.matmul %p, %v : tensor<1x2x3x3xf32>, tensor<1x2x3x2xf32> -> tensor<1x2x3x2xf32>
  return %o : tensor<1x2x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @padding_mask_twice(
// CHECK-NEXT: %[[M:.*]] = tg.padding_mask %arg3
// CHECK-NEXT: %[[B:.*]] = tg.reshape %[[M]] : tensor<2x3xf32> -> tensor<2x1x1x3xf32>
// CHECK-NEXT: %{{.*}}, %{{.*}} = tg.attention %arg0, %arg1, %arg2 mask %[[M]] bias %[[B]] scale
// CHECK-NEXT: return
func.func @padding_mask_twice(%q: tensor<2x2x1x2xf32>, %k: tensor<2x2x3x2xf32>, %v: tensor<2x2x3x2xf32>, %ids: tensor<2x3xi32>) -> tensor<2x2x1x2xf32> {
  %pad = tg.padding_mask %ids pad_id 0 : tensor<2x3xi32> -> tensor<2x3xf32>
  %s = tg.matmul %q, %k transpose_rhs : tensor<2x2x1x2xf32>, tensor<2x2x3x2xf32> -> tensor<2x2x1x3xf32>
  %pb = tg.broadcast %pad dims [0, 3] : tensor<2x3xf32> -> tensor<2x2x1x3xf32>
  %a1 = tg.add %s, %pb : tensor<2x2x1x3xf32>
  %a2 = tg.add %a1, %pb : tensor<2x2x1x3xf32>
  %p = tg.softmax %a2 axis 3 : tensor<2x2x1x3xf32>
  %o = tg.matmul %p, %v : tensor<2x2x1x3xf32>, tensor<2x2x3x2xf32> -> tensor<2x2x1x2xf32>
  return %o : tensor<2x2x1x2xf32>
}
