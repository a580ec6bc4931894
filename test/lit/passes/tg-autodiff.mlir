// tg-autodiff: one case per gradient rule family. Each split is its own
// module with its own trainable variables; the loss is reduced to a scalar
// with tg.reduce_sum, whose backward seeds dy = broadcast(1.0).
// RUN: tgc-opt --tg-autodiff --split-input-file %s | FileCheck %s

// Plain matmul: dW = X^T dY, a single matmul transpose_lhs; the gradient is
// appended as a result tagged with its variable.
tg.variable @w trainable init(xavier_uniform) : tensor<4x3xf32>
func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = tg.load @w : tensor<4x3xf32>
  %y = tg.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32> {tg.gradient_of = @w}) {
// CHECK: %[[W:.*]] = tg.load @w : tensor<4x3xf32>
// CHECK-NEXT: %[[Y:.*]] = tg.matmul %[[X]], %[[W]] : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[L:.*]] = tg.reduce_sum %[[Y]] dims [0, 1]
// CHECK-NEXT: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.matmul %[[X]], %[[DY]] transpose_lhs : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[L]], %[[DW]] : tensor<f32>, tensor<4x3xf32>

// -----

// transpose_rhs: y = X W^T, so dW = dY^T X (transpose_lhs on dY).
tg.variable @w trainable init(xavier_uniform) : tensor<3x4xf32>
func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = tg.load @w : tensor<3x4xf32>
  %y = tg.matmul %x, %w transpose_rhs : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>) -> (tensor<f32>, tensor<3x4xf32> {tg.gradient_of = @w}) {
// CHECK: %[[W:.*]] = tg.load @w
// CHECK-NEXT: tg.matmul %[[X]], %[[W]] transpose_rhs
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.matmul %[[DY]], %[[X]] transpose_lhs : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<3x4xf32>

// -----

// A batched lhs with a rank-2 shared weight: dX = dY W^T (batched), and the
// weight's gradient sums over the batch as ONE GEMM over the flattened rows:
// reshape X and dY to [10, .], then X^T dY.
tg.variable @x trainable init(normal, 0.02) : tensor<2x5x4xf32>
tg.variable @w trainable init(xavier_uniform) : tensor<4x3xf32>
func.func @loss() -> tensor<f32> {
  %x = tg.load @x : tensor<2x5x4xf32>
  %w = tg.load @w : tensor<4x3xf32>
  %y = tg.matmul %x, %w : tensor<2x5x4xf32>, tensor<4x3xf32> -> tensor<2x5x3xf32>
  %l = tg.reduce_sum %y dims [0, 1, 2] : tensor<2x5x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x5x4xf32> {tg.gradient_of = @x}, tensor<4x3xf32> {tg.gradient_of = @w})
// CHECK: %[[X:.*]] = tg.load @x : tensor<2x5x4xf32>
// CHECK-NEXT: %[[W:.*]] = tg.load @w : tensor<4x3xf32>
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x5x3xf32>
// CHECK-NEXT: %[[DX:.*]] = tg.matmul %[[DY]], %[[W]] transpose_rhs : tensor<2x5x3xf32>, tensor<4x3xf32> -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[FX:.*]] = tg.reshape %[[X]] : tensor<2x5x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT: %[[FDY:.*]] = tg.reshape %[[DY]] : tensor<2x5x3xf32> -> tensor<10x3xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.matmul %[[FX]], %[[FDY]] transpose_lhs : tensor<10x4xf32>, tensor<10x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DW]] : tensor<f32>, tensor<2x5x4xf32>, tensor<4x3xf32>

// -----

// Softmax: softmax_grad of the forward's output and dy, same axis.
tg.variable @s trainable init(normal, 0.02) : tensor<2x5xf32>
func.func @loss() -> tensor<f32> {
  %s = tg.load @s : tensor<2x5xf32>
  %p = tg.softmax %s axis 1 : tensor<2x5xf32>
  %l = tg.reduce_sum %p dims [0, 1] : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x5xf32> {tg.gradient_of = @s})
// CHECK: %[[P:.*]] = tg.softmax %{{.*}} axis 1 : tensor<2x5xf32>
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x5xf32>
// CHECK-NEXT: %[[DS:.*]] = tg.softmax_grad %[[P]], %[[DY]] axis 1 : tensor<2x5xf32>
// CHECK-NEXT: return %{{.*}}, %[[DS]]

// -----

// LayerNorm: one layer_norm_grad gives the gamma and beta gradients (the
// input is not trainable: its gradient is left unused).
tg.variable @gamma trainable init(ones) : tensor<8xf32>
tg.variable @beta trainable init(zeros) : tensor<8xf32>
func.func @loss(%x: tensor<2x3x8xf32>) -> tensor<f32> {
  %g = tg.load @gamma : tensor<8xf32>
  %b = tg.load @beta : tensor<8xf32>
  %y = tg.layer_norm %x, %g, %b eps 1.0e-06 : tensor<2x3x8xf32>, tensor<8xf32>
  %l = tg.reduce_sum %y dims [0, 1, 2] : tensor<2x3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8xf32>)
// CHECK-SAME: -> (tensor<f32>, tensor<8xf32> {tg.gradient_of = @gamma}, tensor<8xf32> {tg.gradient_of = @beta})
// CHECK: %[[G:.*]] = tg.load @gamma
// CHECK-NEXT: %[[B:.*]] = tg.load @beta
// CHECK-NEXT: tg.layer_norm %[[X]], %[[G]], %[[B]] eps [[EPS:.*]] : tensor<2x3x8xf32>, tensor<8xf32>
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x3x8xf32>
// CHECK-NEXT: %{{.*}}, %[[DG:.*]], %[[DB:.*]] = tg.layer_norm_grad %[[DY]], %[[X]], %[[G]] eps [[EPS]] : tensor<2x3x8xf32>, tensor<8xf32>
// CHECK-NEXT: return %{{.*}}, %[[DG]], %[[DB]] : tensor<f32>, tensor<8xf32>, tensor<8xf32>

// -----

// Fan-out: e = exp(w) is used twice by e * e; its two contributions are
// summed with tg.add before flowing into exp's rule.
tg.variable @w trainable init(normal, 0.02) : tensor<4xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %e = tg.exp %w : tensor<4xf32>
  %y = tg.mul %e, %e : tensor<4xf32>
  %l = tg.reduce_sum %y dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w})
// CHECK: %[[E:.*]] = tg.exp
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: %[[D0:.*]] = tg.mul %[[DY]], %[[E]] : tensor<4xf32>
// CHECK-NEXT: %[[D1:.*]] = tg.mul %[[DY]], %[[E]] : tensor<4xf32>
// CHECK-NEXT: %[[DE:.*]] = tg.add %[[D0]], %[[D1]] : tensor<4xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.mul %[[DE]], %[[E]] : tensor<4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]

// -----

// A variable loaded twice: the gradients of both loads are summed.
tg.variable @w trainable init(normal, 0.02) : tensor<4xf32>
func.func @loss() -> tensor<f32> {
  %a = tg.load @w : tensor<4xf32>
  %b = tg.load @w : tensor<4xf32>
  %y = tg.sub %a, %b : tensor<4xf32>
  %l = tg.reduce_sum %y dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w})
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: %[[NEG:.*]] = tg.neg %[[DY]] : tensor<4xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.add %[[NEG]], %[[DY]] : tensor<4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]

// -----

// Broadcast: the gradient of a broadcast bias is the sum over the
// replicated dimension.
tg.variable @b trainable init(zeros) : tensor<3xf32>
func.func @loss(%x: tensor<2x3xf32>) -> tensor<f32> {
  %b = tg.load @b : tensor<3xf32>
  %bb = tg.broadcast %b dims [1] : tensor<3xf32> -> tensor<2x3xf32>
  %y = tg.add %x, %bb : tensor<2x3xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: -> (tensor<f32>, tensor<3xf32> {tg.gradient_of = @b})
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DB:.*]] = tg.reduce_sum %[[DY]] dims [0] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DB]]

// -----

// Dropout: dropout_grad regenerates the mask from the same key, rate and
// op_id as the forward.
tg.variable @w trainable init(normal, 0.02) : tensor<2x4xf32>
func.func @loss(%key: tensor<2xi32>) -> tensor<f32> {
  %w = tg.load @w : tensor<2x4xf32>
  %y = tg.dropout %w, %key rate 1.000000e-01 op_id 3 : tensor<2x4xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[KEY:.*]]: tensor<2xi32>)
// CHECK-SAME: -> (tensor<f32>, tensor<2x4xf32> {tg.gradient_of = @w})
// CHECK: tg.dropout %{{.*}}, %[[KEY]] rate 1.000000e-01 op_id 3
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.dropout_grad %[[DY]], %[[KEY]] rate 1.000000e-01 op_id 3 : tensor<2x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]

// -----

// Embedding + cross-entropy: the loss's own gradient is 1 (no reduce_sum);
// cross_entropy_grad feeds the projection's and the embedding's gradients.
// The token count (i32) is returned unchanged and gets no gradient.
tg.variable @embedding trainable init(normal, 0.02) : tensor<10x4xf32>
tg.variable @proj trainable init(xavier_uniform) : tensor<4x10xf32>
func.func @loss(%ids: tensor<2x3xi32>, %tgt: tensor<2x3xi32>) -> (tensor<f32>, tensor<i32>) {
  %table = tg.load @embedding : tensor<10x4xf32>
  %w = tg.load @proj : tensor<4x10xf32>
  %x = tg.embedding %table[%ids] : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %logits = tg.matmul %x, %w : tensor<2x3x4xf32>, tensor<4x10xf32> -> tensor<2x3x10xf32>
  %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 ignore 0 : tensor<2x3x10xf32>, tensor<2x3xi32>
  return %loss, %ntok : tensor<f32>, tensor<i32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x3xi32>, %[[TGT:[a-z0-9]+]]: tensor<2x3xi32>)
// CHECK-SAME: -> (tensor<f32>, tensor<i32>, tensor<10x4xf32> {tg.gradient_of = @embedding}, tensor<4x10xf32> {tg.gradient_of = @proj})
// CHECK: %[[TABLE:.*]] = tg.load @embedding
// CHECK-NEXT: %[[W:.*]] = tg.load @proj
// CHECK-NEXT: %[[X:.*]] = tg.embedding %[[TABLE]][%[[IDS]]]
// CHECK-NEXT: %[[LOGITS:.*]] = tg.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[LOSS:.*]], %[[NTOK:.*]] = tg.cross_entropy %[[LOGITS]], %[[TGT]] smoothing 1.000000e-01 ignore 0
// CHECK-NEXT: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DLOGITS:.*]] = tg.cross_entropy_grad %[[ONE]], %[[LOGITS]], %[[TGT]] smoothing 1.000000e-01 ignore 0 : tensor<2x3x10xf32>, tensor<2x3xi32>
// CHECK-NEXT: %[[DX:.*]] = tg.matmul %[[DLOGITS]], %[[W]] transpose_rhs : tensor<2x3x10xf32>, tensor<4x10xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[FX:.*]] = tg.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[FD:.*]] = tg.reshape %[[DLOGITS]] : tensor<2x3x10xf32> -> tensor<6x10xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.matmul %[[FX]], %[[FD]] transpose_lhs : tensor<6x4xf32>, tensor<6x10xf32> -> tensor<4x10xf32>
// CHECK-NEXT: %[[DTABLE:.*]] = tg.embedding_grad %[[DX]][%[[IDS]]] : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<10x4xf32>
// CHECK-NEXT: return %[[LOSS]], %[[NTOK]], %[[DTABLE]], %[[DW]] : tensor<f32>, tensor<i32>, tensor<10x4xf32>, tensor<4x10xf32>

// -----

// ReLU: relu_grad(dy, x) with the forward's input.
tg.variable @w trainable init(normal, 0.02) : tensor<2x4xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<2x4xf32>
  %y = tg.relu %w : tensor<2x4xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x4xf32> {tg.gradient_of = @w})
// CHECK: %[[W:.*]] = tg.load @w
// CHECK-NEXT: tg.relu %[[W]]
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.relu_grad %[[DY]], %[[W]] : tensor<2x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DW]]

// -----

// Inactive path: the padding mask and the input-only product x * x do not
// depend on @w, so they get no gradient ops: the backward is the single mul
// of dy by the (forward) multiplier.
tg.variable @w trainable init(normal, 0.02) : tensor<2x3xf32>
func.func @loss(%src: tensor<2x3xi32>, %x: tensor<2x3xf32>) -> tensor<f32> {
  %pad = tg.padding_mask %src pad_id 0 : tensor<2x3xi32> -> tensor<2x3xf32>
  %xx = tg.mul %x, %x : tensor<2x3xf32>
  %m = tg.add %pad, %xx : tensor<2x3xf32>
  %w = tg.load @w : tensor<2x3xf32>
  %y = tg.mul %w, %m : tensor<2x3xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {tg.gradient_of = @w})
// CHECK: %[[M:.*]] = tg.add
// CHECK: %[[L:.*]] = tg.reduce_sum
// CHECK-NEXT: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.mul %[[DY]], %[[M]] : tensor<2x3xf32>
// CHECK-NEXT: return %[[L]], %[[DW]]

// -----

// A trainable variable that does not reach the loss gets a zero gradient
// (and a warning on stderr, checked in tg-autodiff-errors.mlir); results
// follow the declaration order.
tg.variable @used trainable init(normal, 0.02) : tensor<4xf32>
tg.variable @unused trainable init(normal, 0.02) : tensor<2x2xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @used : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @used}, tensor<2x2xf32> {tg.gradient_of = @unused})
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DUSED:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT: %[[ZERO:.*]] = tg.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT: return %{{.*}}, %[[DUSED]], %[[ZERO]]
