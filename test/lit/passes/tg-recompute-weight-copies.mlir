// tg-recompute-weight-copies: a weight's bf16 copy read before the op that
// computes the function's first result (the forward) and after it (the
// backward) is made again right before its first backward reader, which
// reads the new copy with every later one; the forward's copy then dies with
// the forward. A copy read on one side only, and an activation's copy, stay.
// RUN: tgc-opt --tg-recompute-weight-copies --split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x16xbf16>, %[[DY:[a-z0-9]+]]: tensor<4x64xbf16>
// CHECK-NEXT: %[[W:[a-z0-9_]+]] = tg.load @w : tensor<16x64xf32>
// CHECK-NEXT: %[[WB:[a-z0-9_]+]] = tg.to_bf16 %[[W]] : tensor<16x64xf32>
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = tg.load @v : tensor<64x8xf32>
// CHECK-NEXT: %[[VB:[a-z0-9_]+]] = tg.to_bf16 %[[V]] : tensor<64x8xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = tg.matmul %[[X]], %[[WB]] : tensor<4x16xbf16>, tensor<16x64xbf16> -> tensor<4x64xf32>
// CHECK-NEXT: %[[LOSS:[a-z0-9_]+]] = tg.reduce_sum %[[Y]]
// CHECK-NEXT: %[[YB:[a-z0-9_]+]] = tg.to_bf16 %[[Y]] : tensor<4x64xf32>
// CHECK-NEXT: %[[Z:[a-z0-9_]+]] = tg.matmul %[[YB]], %[[VB]] : tensor<4x64xbf16>, tensor<64x8xbf16> -> tensor<4x8xf32>
// CHECK-NEXT: %[[WB2:[a-z0-9_]+]] = tg.to_bf16 %[[W]] : tensor<16x64xf32>
// CHECK-NEXT: %[[DX:[a-z0-9_]+]] = tg.matmul %[[DY]], %[[WB2]] transpose_rhs
// CHECK-NEXT: %[[DX2:[a-z0-9_]+]] = tg.matmul %[[DY]], %[[WB2]] transpose_rhs
// CHECK-NEXT: return %[[LOSS]], %[[DX]], %[[DX2]], %[[Z]]
module {
  tg.variable @w trainable init(xavier_uniform) : tensor<16x64xf32>
  tg.variable @v trainable init(xavier_uniform) : tensor<64x8xf32>
  func.func @step(%x: tensor<4x16xbf16>, %dy: tensor<4x64xbf16>) -> (tensor<f32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>) {
    %w = tg.load @w : tensor<16x64xf32>
    %wb = tg.to_bf16 %w : tensor<16x64xf32>
    %v = tg.load @v : tensor<64x8xf32>
    %vb = tg.to_bf16 %v : tensor<64x8xf32>
    %y = tg.matmul %x, %wb : tensor<4x16xbf16>, tensor<16x64xbf16> -> tensor<4x64xf32>
    %loss = tg.reduce_sum %y dims [0, 1] : tensor<4x64xf32> -> tensor<f32>
    %yb = tg.to_bf16 %y : tensor<4x64xf32>
    %z = tg.matmul %yb, %vb : tensor<4x64xbf16>, tensor<64x8xbf16> -> tensor<4x8xf32>
    %dx = tg.matmul %dy, %wb transpose_rhs : tensor<4x64xbf16>, tensor<16x64xbf16> -> tensor<4x16xf32>
    %dx2 = tg.matmul %dy, %wb transpose_rhs : tensor<4x64xbf16>, tensor<16x64xbf16> -> tensor<4x16xf32>
    return %loss, %dx, %dx2, %z : tensor<f32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>
  }
}
