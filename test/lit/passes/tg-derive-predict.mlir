// tg-derive-predict clones the loss function into @predict(source, target
// prefix) -> logits: dropout becomes the identity, the loss op and what only
// it needed are gone, and so are the arguments nothing reads (the target-out
// ids and the dropout key). The loss function is unchanged.
// RUN: tgc-opt --tg-derive-predict %S/Inputs/tiny-lm.mlir | FileCheck %s
// RUN: tgc-opt --tg-derive-predict --split-input-file --verify-diagnostics %s

// CHECK-LABEL: func.func @loss(
// CHECK-COUNT-2: tg.dropout
// CHECK: tg.cross_entropy
// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[TIN:[a-z0-9]+]]: tensor<2x5xi32> {tg.name = "target_in_ids"}) -> tensor<2x5x12xf32> {
// CHECK-NEXT: %[[E:.+]] = tg.load @embedding
// CHECK-NEXT: %[[W1:.+]] = tg.load @ffn.w1
// CHECK-NEXT: %[[W2:.+]] = tg.load @ffn.w2
// CHECK-NEXT: %[[G:.+]] = tg.load @norm.gamma
// CHECK-NEXT: %[[B:.+]] = tg.load @norm.beta
// CHECK-NEXT: %[[X:.+]] = tg.embedding %[[E]][%[[TIN]]]
// CHECK-NEXT: %[[H:.+]] = tg.matmul %[[X]], %[[W1]]
// CHECK-NEXT: %[[A:.+]] = tg.relu %[[H]]
// CHECK-NEXT: %[[F:.+]] = tg.matmul %[[A]], %[[W2]]
// CHECK-NEXT: %[[R:.+]] = tg.add %[[X]], %[[F]]
// CHECK-NEXT: %[[Y:.+]] = tg.layer_norm %[[R]], %[[G]], %[[B]]
// CHECK-NEXT: %[[L:.+]] = tg.matmul %[[Y]], %[[E]] transpose_rhs
// CHECK-NEXT: return %[[L]] : tensor<2x5x12xf32>
// CHECK-NEXT: }

// tiny-lm's source ids are unused by its (decoder-only) forward, so only the
// target prefix is left; the Transformer keeps both (models/ tests).

// The first result must be one tg.cross_entropy's loss, alone or with terms
// added: its logits are what @predict returns.
tg.variable @w trainable init(zeros) : tensor<4xf32>
// expected-error @+1 {{tg-derive-predict: the first result of @loss must be one tg.cross_entropy's loss, alone or with terms added (its logits are what @predict returns)}}
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Two cross-entropies summed: no one of them is the model's; a note at
// each says where they are (the error was at the function alone).
// expected-error @+1 {{tg-derive-predict: the first result of @loss must be one tg.cross_entropy's loss}}
func.func @loss(%logits: tensor<2x5x12xf32>, %a: tensor<2x5xi32>, %b: tensor<2x5xi32>) -> (tensor<f32>, tensor<i32>) {
  // expected-note @+1 {{a tg.cross_entropy}}
  %la, %na = tg.cross_entropy %logits, %a smoothing 0.000000e+00 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
  // expected-note @+1 {{a tg.cross_entropy}}
  %lb, %nb = tg.cross_entropy %logits, %b smoothing 0.000000e+00 ignore 0 : tensor<2x5x12xf32>, tensor<2x5xi32>
  %l = tg.add %la, %lb : tensor<f32>
  return %l, %na : tensor<f32>, tensor<i32>
}

// -----

// expected-error @+1 {{tg-derive-predict: no function @loss}}
module {
  func.func @other() {
    return
  }
}

// -----

// expected-error @+1 {{tg-derive-predict: the module already has a @predict}}
module {
  func.func @loss() -> tensor<f32> {
    %c = tg.constant dense<1.0> : tensor<f32>
    return %c : tensor<f32>
  }
  func.func @predict() {
    return
  }
}
