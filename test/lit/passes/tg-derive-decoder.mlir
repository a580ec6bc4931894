// tg-derive-decoder splits a fused @predict into @encode (what depends on the
// source only, stored in cache variables) and @decode_step (one target
// position: self-attention keys/values appended to caches at `position`,
// positional encodings for that position only). @predict stays.
// RUN: tgc-opt --tg-derive-decoder --split-input-file %s | FileCheck %s

// A one-layer decoder with one head: self-attention, then attention over the
// embedded source (B 2, S 3, T 4, d 8, V 10).
tg.variable @embedding trainable init(normal, 0.3) : tensor<10x8xf32>
tg.variable @w_q trainable init(xavier_uniform) : tensor<8x8xf32>
tg.variable @w_k trainable init(xavier_uniform) : tensor<8x8xf32>
tg.variable @w_v trainable init(xavier_uniform) : tensor<8x8xf32>
tg.variable @cross.w_k trainable init(xavier_uniform) : tensor<8x8xf32>
func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
  %e = tg.load @embedding : tensor<10x8xf32>
  %pad = tg.padding_mask %src pad_id 0 : tensor<2x3xi32> -> tensor<2x3xf32>
  %s = tg.embedding %e[%src] : tensor<10x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %wck = tg.load @cross.w_k : tensor<8x8xf32>
  %ck = tg.matmul %s, %wck : tensor<2x3x8xf32>, tensor<8x8xf32> -> tensor<2x3x8xf32>
  %ck4 = tg.reshape %ck : tensor<2x3x8xf32> -> tensor<2x1x3x8xf32>
  %s4 = tg.reshape %s : tensor<2x3x8xf32> -> tensor<2x1x3x8xf32>
  %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
  %pe = tg.positional_encoding : tensor<4x8xf32>
  %pe3 = tg.broadcast %pe dims [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %xp = tg.add %x, %pe3 : tensor<2x4x8xf32>
  %wq = tg.load @w_q : tensor<8x8xf32>
  %wk = tg.load @w_k : tensor<8x8xf32>
  %wv = tg.load @w_v : tensor<8x8xf32>
  %q = tg.matmul %xp, %wq : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %k = tg.matmul %xp, %wk : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %v = tg.matmul %xp, %wv : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %q4 = tg.reshape %q : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
  %k4 = tg.reshape %k : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
  %v4 = tg.reshape %v : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
  %a, %alse = tg.attention %q4, %k4, %v4 causal scale 0.353553385 dropout 0.0 op_id 0 : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>) -> (tensor<2x1x4x8xf32>, tensor<2x1x4xf32>)
  %c, %clse = tg.attention %a, %ck4, %s4 mask %pad scale 0.353553385 dropout 0.0 op_id 1 : (tensor<2x1x4x8xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>, tensor<2x3xf32>) -> (tensor<2x1x4x8xf32>, tensor<2x1x4xf32>)
  %c3 = tg.reshape %c : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
  %logits = tg.matmul %c3, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
  return %logits : tensor<2x4x10xf32>
}

// The caches: self-attention keys and values [B, H, T, Dk], named after the
// layer of their weights; cross-attention keys and the source as values;
// the source padding mask.
// CHECK: tg.variable @decode.self_attention.keys cache init(zeros) : tensor<2x1x4x8xf32>
// CHECK-NEXT: tg.variable @decode.self_attention.values cache init(zeros) : tensor<2x1x4x8xf32>
// CHECK-NEXT: tg.variable @decode.cross.keys cache init(zeros) : tensor<2x1x3x8xf32>
// CHECK-NEXT: tg.variable @decode.values cache init(zeros) : tensor<2x1x3x8xf32>
// CHECK-NEXT: tg.variable @decode.source_padding_mask cache init(zeros) : tensor<2x3xf32>
// CHECK-LABEL: func.func @predict(

// @encode reads the source only and stores what the decoder reads of it.
// CHECK-LABEL: func.func @encode(
// CHECK-SAME: %[[SRC:[a-z0-9]+]]: tensor<2x3xi32> {tg.name = "source_ids"}) {
// CHECK-NOT: positional_encoding
// CHECK: %[[PAD:.+]] = tg.padding_mask %[[SRC]]
// CHECK: %[[S:.+]] = tg.embedding
// CHECK: %[[CK:.+]] = tg.reshape
// CHECK: %[[S4:.+]] = tg.reshape %[[S]]
// CHECK-NEXT: tg.store %[[CK]], @decode.cross.keys : tensor<2x1x3x8xf32>
// CHECK-NEXT: tg.store %[[S4]], @decode.values : tensor<2x1x3x8xf32>
// CHECK-NEXT: tg.store %[[PAD]], @decode.source_padding_mask : tensor<2x3xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }

// @decode_step: one position in, its logits out.
// CHECK-LABEL: func.func @decode_step(
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x1xi32> {tg.name = "target_in_ids"}, %[[POS:[a-z0-9]+]]: tensor<i32> {tg.name = "position"}) -> tensor<2x1x10xf32> {
// CHECK: %[[X:.+]] = tg.embedding %{{.+}}[%[[IDS]]] : tensor<10x8xf32>, tensor<2x1xi32> -> tensor<2x1x8xf32>
// CHECK-NEXT: %[[PE:.+]] = tg.positional_encoding offset %[[POS]] : tensor<1x8xf32>
// CHECK-NEXT: %[[PE3:.+]] = tg.broadcast %[[PE]] dims [1, 2] : tensor<1x8xf32> -> tensor<2x1x8xf32>
// CHECK-NEXT: tg.add %[[X]], %[[PE3]] : tensor<2x1x8xf32>
// CHECK: %[[Q4:.+]] = tg.reshape %{{.+}} : tensor<2x1x8xf32> -> tensor<2x1x1x8xf32>
// CHECK-NEXT: %[[K4:.+]] = tg.reshape %{{.+}} : tensor<2x1x8xf32> -> tensor<2x1x1x8xf32>
// CHECK-NEXT: %[[V4:.+]] = tg.reshape %{{.+}} : tensor<2x1x8xf32> -> tensor<2x1x1x8xf32>
// CHECK-NEXT: tg.store_slice %[[K4]], @decode.self_attention.keys[%[[POS]]] axis 2 : tensor<2x1x1x8xf32>
// CHECK-NEXT: %[[KC:.+]] = tg.load @decode.self_attention.keys : tensor<2x1x4x8xf32>
// CHECK-NEXT: tg.store_slice %[[V4]], @decode.self_attention.values[%[[POS]]] axis 2 : tensor<2x1x1x8xf32>
// CHECK-NEXT: %[[VC:.+]] = tg.load @decode.self_attention.values : tensor<2x1x4x8xf32>
// CHECK-NEXT: %[[A:.+]], %{{.+}} = tg.attention %[[Q4]], %[[KC]], %[[VC]] causal position %[[POS]] scale 0.353553385 dropout 0.000000e+00 op_id 0 : (tensor<2x1x1x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<i32>) -> (tensor<2x1x1x8xf32>, tensor<2x1x1xf32>)
// CHECK-NEXT: %[[CK:.+]] = tg.load @decode.cross.keys : tensor<2x1x3x8xf32>
// CHECK-NEXT: %[[CV:.+]] = tg.load @decode.values : tensor<2x1x3x8xf32>
// CHECK-NEXT: %[[M:.+]] = tg.load @decode.source_padding_mask : tensor<2x3xf32>
// CHECK-NEXT: tg.attention %[[A]], %[[CK]], %[[CV]] mask %[[M]] scale 0.353553385 dropout 0.000000e+00 op_id 1 : (tensor<2x1x1x8xf32>, tensor<2x1x3x8xf32>, tensor<2x1x3x8xf32>, tensor<2x3xf32>) -> (tensor<2x1x1x8xf32>, tensor<2x1x1xf32>)
// CHECK: %[[L:.+]] = tg.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<2x1x8xf32>, tensor<10x8xf32> -> tensor<2x1x10xf32>
// CHECK-NEXT: return %[[L]] : tensor<2x1x10xf32>

// -----

// RMSNorm over the features keeps the time axis: a plain tg.rms_norm and a
// fused residual RMSNorm that keeps its pre-LN sum run one position at a
// time, their gamma read whole.
module {
  tg.variable @gamma trainable init(ones) : tensor<8xf32>
  func.func @predict(%src: tensor<2x3xi32> {tg.name = "source_ids"}, %tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
    %e = tg.constant dense<0.5> : tensor<10x8xf32>
    %key = tg.constant dense<0> : tensor<2xi32>
    %g = tg.load @gamma : tensor<8xf32>
    %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %n = tg.rms_norm %x, %g eps 1.0e-06 : tensor<2x4x8xf32>, tensor<8xf32>
    %y, %rstd, %h = tg.residual_layer_norm rms %x, %n, %g, %key rate 0.0 op_id 0 eps 1.0e-06 : tensor<2x4x8xf32>, tensor<8xf32> sum tensor<2x4x8xf32>
    %o = tg.add %y, %h : tensor<2x4x8xf32>
    %l = tg.matmul %o, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
    return %l : tensor<2x4x10xf32>
  }
}

// CHECK-LABEL: func.func @decode_step(
// CHECK: %[[X:.+]] = tg.embedding %{{.+}}[%{{.+}}] : tensor<10x8xf32>, tensor<2x1xi32> -> tensor<2x1x8xf32>
// CHECK-NEXT: %[[G:.+]] = tg.load @gamma : tensor<8xf32>
// CHECK-NEXT: %[[N:.+]] = tg.rms_norm %[[X]], %[[G]] eps 9.99999997E-7 : tensor<2x1x8xf32>, tensor<8xf32>
// CHECK: %[[Y:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %[[H:[a-z0-9_]+]] = tg.residual_layer_norm rms %[[X]], %[[N]], %[[G]], %{{.+}} rate 0.000000e+00 op_id 0 eps 9.99999997E-7 : tensor<2x1x8xf32>, tensor<8xf32> sum tensor<2x1x8xf32>
// CHECK-NEXT: tg.add %[[Y]], %[[H]] : tensor<2x1x8xf32>
