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

// A run-time rate (the step's dropout input): the gradient reads the same.
tg.variable @w trainable init(normal, 0.02) : tensor<2x4xf32>
func.func @loss(%key: tensor<2xi32>, %p: tensor<f32>) -> tensor<f32> {
  %w = tg.load @w : tensor<2x4xf32>
  %y = tg.dropout %w, %key rate 1.000000e-01 run_time %p op_id 3 : tensor<2x4xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[KEY:[a-z0-9]+]]: tensor<2xi32>, %[[P:[a-z0-9]+]]: tensor<f32>)
// CHECK: tg.dropout_grad %{{.*}}, %[[KEY]] rate 1.000000e-01 run_time %[[P]] op_id 3 : tensor<2x4xf32>

// -----

// Rotary embedding: the gradient is the inverse rotation of dy, at the
// same offset and base.
tg.variable @w trainable init(normal, 0.02) : tensor<1x2x3x4xf32>
func.func @loss(%position: tensor<i32>) -> tensor<f32> {
  %w = tg.load @w : tensor<1x2x3x4xf32>
  %y = tg.rotary %w offset %position base 1.000000e+04 : tensor<1x2x3x4xf32>
  %l = tg.reduce_sum %y dims [0, 1, 2, 3] : tensor<1x2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[POS:.*]]: tensor<i32>)
// CHECK-SAME: -> (tensor<f32>, tensor<1x2x3x4xf32> {tg.gradient_of = @w})
// CHECK: tg.rotary %{{.*}} offset %[[POS]] base 1.000000e+04 : tensor<1x2x3x4xf32>
// CHECK: %[[DY:.*]] = tg.broadcast %{{.*}} dims [] : tensor<f32> -> tensor<1x2x3x4xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.rotary %[[DY]] offset %[[POS]] base 1.000000e+04 inverse : tensor<1x2x3x4xf32>
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
// CHECK-NEXT: %[[Y:.*]] = tg.relu %[[W]]
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[DW:.*]] = tg.relu_grad %[[DY]], %[[Y]] : tensor<2x4xf32>
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

// -----

// A batched lhs used transposed with a shared rank-2 weight: dA is dy B^T
// transposed back, dB the batched A dy summed over the batch.
tg.variable @a trainable init(normal, 0.02) : tensor<2x4x5xf32>
tg.variable @b trainable init(normal, 0.02) : tensor<4x3xf32>
func.func @loss() -> tensor<f32> {
  %a = tg.load @a : tensor<2x4x5xf32>
  %b = tg.load @b : tensor<4x3xf32>
  %y = tg.matmul %a, %b transpose_lhs : tensor<2x4x5xf32>, tensor<4x3xf32> -> tensor<2x5x3xf32>
  %l = tg.reduce_sum %y dims [0, 1, 2] : tensor<2x5x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x4x5xf32> {tg.gradient_of = @a}, tensor<4x3xf32> {tg.gradient_of = @b})
// CHECK: %[[A:.*]] = tg.load @a
// CHECK-NEXT: %[[B:.*]] = tg.load @b
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x5x3xf32>
// CHECK-NEXT: %[[DAT:.*]] = tg.matmul %[[DY]], %[[B]] transpose_rhs : tensor<2x5x3xf32>, tensor<4x3xf32> -> tensor<2x5x4xf32>
// CHECK-NEXT: %[[DA:.*]] = tg.transpose %[[DAT]] permutation [0, 2, 1] : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
// CHECK-NEXT: %[[DBB:.*]] = tg.matmul %[[A]], %[[DY]] : tensor<2x4x5xf32>, tensor<2x5x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[DB:.*]] = tg.reduce_sum %[[DBB]] dims [0] : tensor<2x4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Fused attention: one attention_grad with the forward's operands, output,
// lse, mask, key and attributes. The padding mask is inactive; the value is
// an input, so only the query and key gradients are returned.
tg.variable @q trainable init(normal, 0.02) : tensor<1x2x3x4xf32>
tg.variable @k trainable init(normal, 0.02) : tensor<1x2x3x4xf32>
func.func @loss(%v: tensor<1x2x3x4xf32>, %src: tensor<1x3xi32>, %key: tensor<2xi32>) -> tensor<f32> {
  %q = tg.load @q : tensor<1x2x3x4xf32>
  %k = tg.load @k : tensor<1x2x3x4xf32>
  %pad = tg.padding_mask %src pad_id 0 : tensor<1x3xi32> -> tensor<1x3xf32>
  %o, %lse = tg.attention %q, %k, %v mask %pad key %key causal scale 0.5 dropout 1.000000e-01 op_id 7 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3xf32>, tensor<2xi32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
  %l = tg.reduce_sum %o dims [0, 1, 2, 3] : tensor<1x2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<1x2x3x4xf32>, %[[SRC:[a-z0-9]+]]: tensor<1x3xi32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>)
// CHECK-SAME: -> (tensor<f32>, tensor<1x2x3x4xf32> {tg.gradient_of = @q}, tensor<1x2x3x4xf32> {tg.gradient_of = @k})
// CHECK: %[[Q:.*]] = tg.load @q
// CHECK-NEXT: %[[K:.*]] = tg.load @k
// CHECK-NEXT: %[[PAD:.*]] = tg.padding_mask %[[SRC]]
// CHECK-NEXT: %[[O:.*]], %[[LSE:.*]] = tg.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] key %[[KEY]] causal
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<1x2x3x4xf32>
// CHECK-NEXT: %[[DQ:.*]], %[[DK:.*]], %{{.*}} = tg.attention_grad %[[DY]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] mask %[[PAD]] key %[[KEY]] causal scale 5.000000e-01 dropout 1.000000e-01 op_id 7
// CHECK-NEXT: return %{{.*}}, %[[DQ]], %[[DK]] :

// -----

// Fused residual + dropout + layer norm: residual_layer_norm_grad reads the
// forward's result, its saved rstd and the dropout key (neither the residual
// nor the sublayer output).
tg.variable @x trainable init(normal, 0.02) : tensor<2x3x8xf32>
tg.variable @gamma trainable init(ones) : tensor<8xf32>
tg.variable @beta trainable init(zeros) : tensor<8xf32>
func.func @loss(%sub: tensor<2x3x8xf32>, %key: tensor<2xi32>) -> tensor<f32> {
  %x = tg.load @x : tensor<2x3x8xf32>
  %g = tg.load @gamma : tensor<8xf32>
  %b = tg.load @beta : tensor<8xf32>
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %g, %b, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x3x8xf32>, tensor<8xf32>
  %l = tg.reduce_sum %y dims [0, 1, 2] : tensor<2x3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[SUB:[a-z0-9]+]]: tensor<2x3x8xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>)
// CHECK-SAME: -> (tensor<f32>, tensor<2x3x8xf32> {tg.gradient_of = @x}, tensor<8xf32> {tg.gradient_of = @gamma}, tensor<8xf32> {tg.gradient_of = @beta})
// CHECK: %[[X:.*]] = tg.load @x
// CHECK-NEXT: %[[G:.*]] = tg.load @gamma
// CHECK-NEXT: %[[B:.*]] = tg.load @beta
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %[[RSTD:.*]] = tg.residual_layer_norm %[[X]], %[[SUB]], %[[G]], %[[B]], %[[KEY]] rate 1.000000e-01 op_id 4
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[DX:.*]], %{{.*}}, %[[DG:.*]], %[[DB:.*]] = tg.residual_layer_norm_grad %[[DY]], %[[Y]], %[[G]], %[[B]], %[[RSTD]], %[[KEY]] rate 1.000000e-01 op_id 4
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DG]], %[[DB]] :

// -----

// RMSNorm: tg.rms_norm differentiates through one tg.rms_norm_grad (input
// and gamma); the fused residual RMSNorm that keeps a pre-LN sum takes that
// sum's gradient as sum_grad, and returns no beta gradient.
tg.variable @x trainable init(normal, 0.02) : tensor<2x3x8xf32>
tg.variable @gamma trainable init(ones) : tensor<8xf32>
tg.variable @gamma2 trainable init(ones) : tensor<8xf32>
func.func @loss(%sub: tensor<2x3x8xf32>, %key: tensor<2xi32>) -> tensor<f32> {
  %x = tg.load @x : tensor<2x3x8xf32>
  %g = tg.load @gamma : tensor<8xf32>
  %g2 = tg.load @gamma2 : tensor<8xf32>
  %n = tg.rms_norm %x, %g eps 1.0e-06 : tensor<2x3x8xf32>, tensor<8xf32>
  %y, %rstd, %h = tg.residual_layer_norm rms %n, %sub, %g2, %key rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x3x8xf32>, tensor<8xf32> sum tensor<2x3x8xf32>
  %p = tg.mul %y, %h : tensor<2x3x8xf32>
  %l = tg.reduce_sum %p dims [0, 1, 2] : tensor<2x3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[SUB:[a-z0-9]+]]: tensor<2x3x8xf32>, %[[KEY:[a-z0-9]+]]: tensor<2xi32>)
// CHECK-SAME: -> (tensor<f32>, tensor<2x3x8xf32> {tg.gradient_of = @x}, tensor<8xf32> {tg.gradient_of = @gamma}, tensor<8xf32> {tg.gradient_of = @gamma2})
// CHECK: %[[X:.*]] = tg.load @x
// CHECK-NEXT: %[[G:.*]] = tg.load @gamma
// CHECK-NEXT: %[[G2:.*]] = tg.load @gamma2
// CHECK-NEXT: %[[N:.*]] = tg.rms_norm %[[X]], %[[G]]
// CHECK-NEXT: %[[Y:.*]], %[[RSTD:.*]], %[[H:.*]] = tg.residual_layer_norm rms %[[N]], %[[SUB]], %[[G2]], %[[KEY]] rate 1.000000e-01 op_id 4
// CHECK: %[[ONES:.*]] = tg.broadcast
// CHECK-NEXT: %[[DY:.*]] = tg.mul %[[ONES]], %[[H]]
// CHECK-NEXT: %[[DH:.*]] = tg.mul %[[ONES]], %[[Y]]
// CHECK-NEXT: %[[DN:.*]], %{{.*}}, %[[DG2:.*]] = tg.residual_layer_norm_grad rms %[[DY]], %[[Y]], %[[G2]], %[[RSTD]], %[[KEY]] sum_grad %[[DH]] rate 1.000000e-01 op_id 4
// CHECK-NEXT: %[[DX:.*]], %[[DG:.*]] = tg.rms_norm_grad %[[DN]], %[[X]], %[[G]] eps
// CHECK-NEXT: return %{{.*}}, %[[DX]], %[[DG]], %[[DG2]] :

// -----

// Elementwise and shape rules in one chain, checked op by op:
// -log(sum(sqrt(max_0(r))) / sum(rsqrt(mean_1(r)))) with r a reshaped
// transpose of @x.
tg.variable @x trainable init(normal, 0.02) : tensor<2x3x4xf32>
func.func @loss() -> tensor<f32> {
  %x = tg.load @x : tensor<2x3x4xf32>
  %t = tg.transpose %x permutation [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %r = tg.reshape %t : tensor<4x2x3xf32> -> tensor<8x3xf32>
  %m = tg.reduce_mean %r dims [1] keep_dims : tensor<8x3xf32> -> tensor<8x1xf32>
  %mx = tg.reduce_max %r dims [0] : tensor<8x3xf32> -> tensor<3xf32>
  %s = tg.sqrt %mx : tensor<3xf32>
  %rs = tg.rsqrt %m : tensor<8x1xf32>
  %l1 = tg.reduce_sum %s dims [0] : tensor<3xf32> -> tensor<f32>
  %l2 = tg.reduce_sum %rs dims [0, 1] : tensor<8x1xf32> -> tensor<f32>
  %d = tg.div %l1, %l2 : tensor<f32>
  %lg = tg.log %d : tensor<f32>
  %n = tg.neg %lg : tensor<f32>
  return %n : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x3x4xf32> {tg.gradient_of = @x})
// CHECK: %[[R:.*]] = tg.reshape
// CHECK-NEXT: %[[M:.*]] = tg.reduce_mean %[[R]]
// CHECK-NEXT: %[[MX:.*]] = tg.reduce_max %[[R]]
// CHECK-NEXT: %[[S:.*]] = tg.sqrt %[[MX]]
// CHECK-NEXT: %[[RS:.*]] = tg.rsqrt %[[M]]
// CHECK-NEXT: %[[L1:.*]] = tg.reduce_sum %[[S]]
// CHECK-NEXT: %[[L2:.*]] = tg.reduce_sum %[[RS]]
// CHECK-NEXT: %[[D:.*]] = tg.div %[[L1]], %[[L2]]
// CHECK-NEXT: %[[LG:.*]] = tg.log %[[D]]
// CHECK-NEXT: %[[N:.*]] = tg.neg %[[LG]]
// neg, log: dd = -1 / d
// CHECK-NEXT: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DLG:.*]] = tg.neg %[[ONE]] : tensor<f32>
// CHECK-NEXT: %[[DD:.*]] = tg.div %[[DLG]], %[[D]] : tensor<f32>
// div: dl1 = dd / l2, dl2 = -(dd / l2) * d
// CHECK-NEXT: %[[DL1:.*]] = tg.div %[[DD]], %[[L2]] : tensor<f32>
// CHECK-NEXT: %[[T0:.*]] = tg.mul %[[DL1]], %[[D]] : tensor<f32>
// CHECK-NEXT: %[[DL2:.*]] = tg.neg %[[T0]] : tensor<f32>
// CHECK-NEXT: %[[DRS:.*]] = tg.broadcast %[[DL2]] dims [] : tensor<f32> -> tensor<8x1xf32>
// CHECK-NEXT: %[[DS:.*]] = tg.broadcast %[[DL1]] dims [] : tensor<f32> -> tensor<3xf32>
// rsqrt: dm = drs * rs^3 * -0.5
// CHECK-NEXT: %[[RS2:.*]] = tg.mul %[[RS]], %[[RS]]
// CHECK-NEXT: %[[RS3:.*]] = tg.mul %[[RS2]], %[[RS]]
// CHECK-NEXT: %[[T1:.*]] = tg.mul %[[DRS]], %[[RS3]]
// CHECK-NEXT: %[[DM:.*]] = tg.scale %[[T1]] by -5.000000e-01
// sqrt: dmx = ds / s * 0.5
// CHECK-NEXT: %[[T2:.*]] = tg.div %[[DS]], %[[S]]
// CHECK-NEXT: %[[DMX:.*]] = tg.scale %[[T2]] by 5.000000e-01
// reduce_max: g at the maxima, shared by tied ones: g * at / sum(at), with
// at = (r == max) (1 at a maximum); g and max spread over dim 0
// CHECK-NEXT: %[[G:.*]] = tg.broadcast %[[DMX]] dims [1] : tensor<3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[MXB:.*]] = tg.broadcast %[[MX]] dims [1] : tensor<3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[AT:.*]] = tg.equal %[[R]], %[[MXB]]
// CHECK-NEXT: %[[TIES:.*]] = tg.reduce_sum %[[AT]] dims [0] : tensor<8x3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[TIESB:.*]] = tg.broadcast %[[TIES]] dims [1] : tensor<3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[GAT:.*]] = tg.mul %[[G]], %[[AT]]
// CHECK-NEXT: %[[DR1:.*]] = tg.div %[[GAT]], %[[TIESB]]
// reduce_mean (keep_dims): spread over the size-1 dim, scaled by 1/3
// CHECK-NEXT: %[[T3:.*]] = tg.broadcast %[[DM]] dims [0, 1] : tensor<8x1xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[DR2:.*]] = tg.scale %[[T3]] by 0.333333343
// CHECK-NEXT: %[[DR:.*]] = tg.add %[[DR1]], %[[DR2]]
// reshape back, inverse permutation
// CHECK-NEXT: %[[DT:.*]] = tg.reshape %[[DR]] : tensor<8x3xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: %[[DX:.*]] = tg.transpose %[[DT]] permutation [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: return %[[N]], %[[DX]] : tensor<f32>, tensor<2x3x4xf32>

// -----

// A broadcast that expands a size-1 dimension: the gradient sums over it and
// reshapes back to the variable's shape.
tg.variable @b trainable init(zeros) : tensor<2x1xf32>
func.func @loss() -> tensor<f32> {
  %b = tg.load @b : tensor<2x1xf32>
  %bb = tg.broadcast %b dims [0, 1] : tensor<2x1xf32> -> tensor<2x5xf32>
  %l = tg.reduce_sum %bb dims [0, 1] : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x1xf32> {tg.gradient_of = @b})
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DY:.*]] = tg.broadcast %[[ONE]] dims [] : tensor<f32> -> tensor<2x5xf32>
// CHECK-NEXT: %[[S:.*]] = tg.reduce_sum %[[DY]] dims [1] : tensor<2x5xf32> -> tensor<2xf32>
// CHECK-NEXT: %[[DB:.*]] = tg.reshape %[[S]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK-NEXT: return %{{.*}}, %[[DB]]

// -----

// tg.stop_gradient passes no gradient to its input: of x * stop_gradient(x),
// only the factor x is differentiated (dy times the stopped value), and no
// second contribution is summed.
tg.variable @x trainable init(zeros) : tensor<2x3xf32>
func.func @loss() -> tensor<f32> {
  %x = tg.load @x : tensor<2x3xf32>
  %s = tg.stop_gradient %x : tensor<2x3xf32>
  %p = tg.mul %x, %s : tensor<2x3xf32>
  %l = tg.reduce_sum %p dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss()
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {tg.gradient_of = @x})
// CHECK: %[[S:.*]] = tg.stop_gradient %[[X:.*]] : tensor<2x3xf32>
// CHECK: %[[DY:.*]] = tg.broadcast %{{.*}} dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DX:.*]] = tg.mul %[[DY]], %[[S]] : tensor<2x3xf32>
// CHECK-NEXT: return %{{.*}}, %[[DX]]

// -----

// tg.slice: slice_grad puts dy in zeros of the input's shape; tg.concat:
// each input gets its stretch of dy, a tg.slice; tg.gather: gather_grad
// scatter-adds dy into zeros of the table (the indices get nothing).
tg.variable @x trainable init(zeros) : tensor<2x6xf32>
tg.variable @t trainable init(zeros) : tensor<4x3xf32>
func.func @loss(%rows: tensor<2xi32>) -> tensor<f32> {
  %x = tg.load @x : tensor<2x6xf32>
  %s = tg.slice %x dim 1 start 2 : tensor<2x6xf32> -> tensor<2x3xf32>
  %t = tg.load @t : tensor<4x3xf32>
  %g = tg.gather %t[%rows] dim 0 : tensor<4x3xf32>, tensor<2xi32> -> tensor<2x3xf32>
  %c = tg.concat %s, %g dim 0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %l = tg.reduce_sum %c dims [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[ROWS:.*]]: tensor<2xi32>) -> (tensor<f32>, tensor<2x6xf32> {tg.gradient_of = @x}, tensor<4x3xf32> {tg.gradient_of = @t})
// CHECK: %[[DY:.*]] = tg.broadcast %{{.*}} dims [] : tensor<f32> -> tensor<4x3xf32>
// CHECK-DAG: %[[DS:.*]] = tg.slice %[[DY]] dim 0 start 0 : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-DAG: %[[DG:.*]] = tg.slice %[[DY]] dim 0 start 2 : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-DAG: %[[DT:.*]] = tg.gather_grad %[[DG]][%[[ROWS]]] dim 0 : tensor<2x3xf32>, tensor<2xi32> -> tensor<4x3xf32>
// CHECK-DAG: %[[DX:.*]] = tg.slice_grad %[[DS]] dim 1 start 2 : tensor<2x3xf32> -> tensor<2x6xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DT]]
