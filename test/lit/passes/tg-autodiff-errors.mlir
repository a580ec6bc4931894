// tg-autodiff's diagnostics: one case per error (and the warning), each at
// the location of the op, function or module it is about. Module-level
// errors use an explicit `module` so that they have a source line to match
// (the implicit module of a split is at line 0).
// RUN: tgc-opt --tg-autodiff --split-input-file --verify-diagnostics %s

// An op without a gradient rule on the active path is an error, never a
// silent zero: here a relu_grad used as a forward op.
tg.variable @w trainable init(normal, 0.02) : tensor<2x4xf32>
func.func @loss(%dy: tensor<2x4xf32>) -> tensor<f32> {
  %w = tg.load @w : tensor<2x4xf32>
  // expected-error @+1 {{no gradient rule for 'tg.relu_grad', which lies on a path from a trainable variable to the loss}}
  %y = tg.relu_grad %dy, %w : tensor<2x4xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Same for softmax_grad, even when the trainable value is only its second
// operand.
tg.variable @w trainable init(normal, 0.02) : tensor<2x4xf32>
func.func @loss(%p: tensor<2x4xf32>) -> tensor<f32> {
  %w = tg.load @w : tensor<2x4xf32>
  // expected-error @+1 {{no gradient rule for 'tg.softmax_grad'}}
  %y = tg.softmax_grad %p, %w axis 1 : tensor<2x4xf32>
  %l = tg.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The first result must be the scalar f32 loss: a tensor<2xf32> is not.
tg.variable @w trainable init(normal, 0.02) : tensor<2xf32>
// expected-error @+1 {{the first result of @loss must be the loss, a tensor<f32> scalar}}
func.func @loss() -> tensor<2xf32> {
  %w = tg.load @w : tensor<2xf32>
  return %w : tensor<2xf32>
}

// -----

// ... nor is an i32 scalar (e.g. the token count returned first).
tg.variable @w trainable init(normal, 0.02) : tensor<2xf32>
// expected-error @+1 {{the first result of @loss must be the loss, a tensor<f32> scalar}}
func.func @loss(%n: tensor<i32>) -> (tensor<i32>, tensor<f32>) {
  %w = tg.load @w : tensor<2xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<2xf32> -> tensor<f32>
  return %n, %l : tensor<i32>, tensor<f32>
}

// -----

// ... and a function without results has no loss at all.
tg.variable @w trainable init(normal, 0.02) : tensor<2xf32>
// expected-error @+1 {{the first result of @loss must be the loss, a tensor<f32> scalar}}
func.func @loss() {
  return
}

// -----

// No function to differentiate: the default is @loss.
// expected-error @+1 {{tg-autodiff: no function @loss to differentiate}}
module {
  tg.variable @w trainable init(normal, 0.02) : tensor<2xf32>
  func.func @other() -> tensor<f32> {
    %w = tg.load @w : tensor<2xf32>
    %l = tg.reduce_sum %w dims [0] : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A module without any trainable variable has nothing to differentiate
// (the error is at the function, a model file's line).
module {
  tg.variable @w init(normal, 0.02) : tensor<2xf32>
  // expected-error @+1 {{tg-autodiff: @loss has no trainable variable to train (every parameter is frozen, or there is none)}}
  func.func @loss() -> tensor<f32> {
    %w = tg.load @w : tensor<2xf32>
    %l = tg.reduce_sum %w dims [0] : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A function that already returns gradients (tg.gradient_of) is not
// differentiated twice.
tg.variable @w trainable init(normal, 0.02) : tensor<2xf32>
// expected-error @+1 {{@loss is already differentiated}}
func.func @loss() -> (tensor<f32>, tensor<2xf32> {tg.gradient_of = @w}) {
  %w = tg.load @w : tensor<2xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<2xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<2xf32>
}

// -----

// tg.attention's log-sum-exp has no gradient rule: a loss through it fails at
// the attention.
tg.variable @q trainable init(normal, 0.02) : tensor<1x2x3x4xf32>
func.func @loss(%k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<f32> {
  %q = tg.load @q : tensor<1x2x3x4xf32>
  // expected-error @+1 {{cannot differentiate through result #1 of this op; only the main result has a gradient rule}}
  %o, %lse = tg.attention %q, %k, %v scale 0.5 dropout 0.0 op_id 1 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
  %l = tg.reduce_sum %lse dims [0, 1, 2] : tensor<1x2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Same for tg.residual_layer_norm's saved statistics (result #1, the mean).
tg.variable @x trainable init(normal, 0.02) : tensor<2x8xf32>
func.func @loss(%sub: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %key: tensor<2xi32>) -> tensor<f32> {
  %x = tg.load @x : tensor<2x8xf32>
  // expected-error @+1 {{cannot differentiate through result #1 of this op}}
  %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %g, %b, %key rate 0.0 op_id 2 eps 1.0e-06 : tensor<2x8xf32>, tensor<8xf32>
  %l = tg.reduce_sum %mean dims [0] : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The attention mask must not depend on a trainable variable.
tg.variable @bias trainable init(zeros) : tensor<1x3xf32>
func.func @loss(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<f32> {
  %m = tg.load @bias : tensor<1x3xf32>
  // expected-error @+1 {{cannot differentiate w.r.t. the attention mask: it must not depend on a trainable variable}}
  %o, %lse = tg.attention %q, %k, %v mask %m scale 0.5 dropout 0.0 op_id 1 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
  %l = tg.reduce_sum %o dims [0, 1, 2, 3] : tensor<1x2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A trainable variable that does not reach the loss: a warning at its
// declaration (its gradient is a zero constant; see tg-autodiff.mlir).
tg.variable @used trainable init(normal, 0.02) : tensor<4xf32>
// expected-warning @+1 {{trainable variable @unused does not reach the loss of @loss; its gradient is zero}}
tg.variable @unused trainable init(normal, 0.02) : tensor<2x2xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @used : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Loaded but off the loss's path (only the token count depends on it) is the
// same: a warning, not an error.
tg.variable @w trainable init(normal, 0.02) : tensor<4xf32>
// expected-warning @+1 {{trainable variable @v does not reach the loss of @loss; its gradient is zero}}
tg.variable @v trainable init(normal, 0.02) : tensor<4xf32>
func.func @loss() -> (tensor<f32>, tensor<f32>) {
  %w = tg.load @w : tensor<4xf32>
  %v = tg.load @v : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  %other = tg.reduce_sum %v dims [0] : tensor<4xf32> -> tensor<f32>
  return %l, %other : tensor<f32>, tensor<f32>
}

// -----

// An attention at a cache position (a decoder step's) is refused: the
// gradient op recomputes causal scores from position 0 (the gradients were
// wrong, and with fewer queries than keys the op did not verify).
tg.variable @q trainable init(normal, 1.0) : tensor<1x1x3x4xf32>
func.func @loss(%k: tensor<1x1x3x4xf32>, %v: tensor<1x1x3x2xf32>) -> tensor<f32> {
  %pos = tg.constant dense<1> : tensor<i32>
  %q = tg.load @q : tensor<1x1x3x4xf32>
  // expected-error @+1 {{cannot differentiate an attention with a position (one step of an incremental decoder): train the whole sequence}}
  %o, %lse = tg.attention %q, %k, %v causal position %pos scale 0.5 dropout 0.0 op_id 0 : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x2xf32>, tensor<i32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3xf32>)
  %l = tg.reduce_sum %o dims [0, 1, 2, 3] : tensor<1x1x3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The function to differentiate may not be called, even off the active
// path: appending the gradients to its results left the call mismatched
// (the verifier then refused IR the user never wrote).
tg.variable @w trainable init(normal, 1.0) : tensor<4xf32>
func.func @loss() -> tensor<f32> {
  // expected-error @+1 {{tg-autodiff: @loss is called here: the function to differentiate cannot be called or referenced (by itself or another function)}}
  %unused = func.call @loss() : () -> tensor<f32>
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

tg.variable @w trainable init(normal, 1.0) : tensor<4xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @caller() -> tensor<f32> {
  // expected-error @+1 {{tg-autodiff: @loss is called here}}
  %l = func.call @loss() : () -> tensor<f32>
  return %l : tensor<f32>
}

// -----

tg.variable @w trainable init(normal, 1.0) : tensor<4xf32>
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @refers() -> (() -> tensor<f32>) {
  // expected-error @+1 {{tg-autodiff: @loss is referenced here}}
  %f = func.constant @loss : () -> tensor<f32>
  return %f : () -> tensor<f32>
}

// -----

// A bf16 value on the active path (a forward written after
// tg-mixed-precision): its gradient is refused at the op that reads it (it
// was dropped, the parameter's gradient zeros, with a warning that it did
// not reach the loss).
tg.variable @w trainable init(normal, 1.0) : tensor<2x3xf32>
func.func @loss(%x: tensor<3x2xbf16>) -> tensor<f32> {
  %w = tg.load @w : tensor<2x3xf32>
  %wb = tg.to_bf16 %w : tensor<2x3xf32>
  // expected-error @+1 {{tg-autodiff: the gradient of @loss reaches operand #0 here, of type 'tensor<2x3xbf16>': gradients are taken in f32}}
  %p = tg.matmul %wb, %x : tensor<2x3xbf16>, tensor<3x2xbf16> -> tensor<2x2xf32>
  %l = tg.reduce_sum %p dims [0, 1] : tensor<2x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A load after a tg.store_slice wrote part of the variable, with a value of
// the parameter: the gradient would have to be split between the slice and
// the rest.
tg.variable @w trainable init(normal, 1.0) : tensor<2x3xf32>
tg.variable @c init(zeros) : tensor<2x4x3xf32>
func.func @loss(%i: tensor<i32>) -> tensor<f32> {
  %w = tg.load @w : tensor<2x3xf32>
  %row = tg.reshape %w : tensor<2x3xf32> -> tensor<2x1x3xf32>
  // expected-note @+1 {{the partial write}}
  tg.store_slice %row, @c [%i] axis 1 : tensor<2x1x3xf32>
  // expected-error @+1 {{tg-autodiff: @loss loads @c after a tg.store_slice wrote part of it}}
  %c = tg.load @c : tensor<2x4x3xf32>
  %l = tg.reduce_sum %c dims [0, 1, 2] : tensor<2x4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
