// tg-adam's diagnostics. tg-adam runs alone here: the inputs are written as
// tg-autodiff leaves them (gradient results tagged tg.gradient_of) or, in the
// first case, not differentiated at all. Module-level errors use an explicit
// `module` so that they have a source line to match.
// RUN: tgc-opt --tg-adam --split-input-file --verify-diagnostics %s

// Without tg-autodiff first there is no gradient to apply.
tg.variable @w trainable init(zeros) : tensor<4xf32>
// expected-error @+1 {{tg-adam: @loss returns no gradients; run tg-autodiff first}}
func.func @loss() -> tensor<f32> {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Only Adam is supported: another optimizer name is rejected (the message
// repeats the declared dictionary, keys sorted).
// expected-error @+1 {{tg-adam: the module declares optimizer {lr = 1.000000e-01 : f32, name = "sgd"}; only {name = "adam", ...} is supported}}
module attributes {tg.optimizer = {name = "sgd", lr = 0.1 : f32}} {
  tg.variable @w trainable init(zeros) : tensor<4xf32>
  func.func @loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w}) {
    %w = tg.load @w : tensor<4xf32>
    %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// ... and so is a tg.optimizer without a name.
// expected-error @+1 {{tg-adam: the module declares optimizer {beta1 = 1.000000e-01 : f32}; only {name = "adam", ...} is supported}}
module attributes {tg.optimizer = {beta1 = 0.1 : f32}} {
  tg.variable @w trainable init(zeros) : tensor<4xf32>
  func.func @loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w}) {
    %w = tg.load @w : tensor<4xf32>
    %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// No function @loss (the default of `function`).
// expected-error @+1 {{tg-adam: no function @loss}}
module {
  tg.variable @w trainable init(zeros) : tensor<4xf32>
  func.func @f() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w}) {
    %w = tg.load @w : tensor<4xf32>
    %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// The step function's name is taken.
// expected-error @+1 {{tg-adam: symbol @train_step already exists}}
module {
  tg.variable @w trainable init(zeros) : tensor<4xf32>
  func.func @loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w}) {
    %w = tg.load @w : tensor<4xf32>
    %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// A gradient result tagged with a variable that is not trainable.
tg.variable @c init(zeros) : tensor<4xf32>
// expected-error @+1 {{tg-adam: result #1 is the gradient of @c, which is not a trainable variable}}
func.func @loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @c}) {
  %c = tg.load @c : tensor<4xf32>
  %l = tg.reduce_sum %c dims [0] : tensor<4xf32> -> tensor<f32>
  return %l, %c : tensor<f32>, tensor<4xf32>
}

// -----

// ... or with no variable at all.
tg.variable @w trainable init(zeros) : tensor<4xf32>
// expected-error @+1 {{tg-adam: result #1 is the gradient of @missing, which is not a trainable variable}}
func.func @loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @missing}) {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// A moment's name is already taken: the error is at the variable that
// took it.
tg.variable @w trainable init(zeros) : tensor<4xf32>
// expected-error @+1 {{tg-adam: @adam.m.w is the name of @w's Adam moment, and it exists already: names beginning with 'adam.' are the optimizer's (or tg-adam ran twice)}}
tg.variable @adam.m.w init(zeros) : tensor<4xf32>
func.func @loss() -> (tensor<f32>, tensor<4xf32> {tg.gradient_of = @w}) {
  %w = tg.load @w : tensor<4xf32>
  %l = tg.reduce_sum %w dims [0] : tensor<4xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}
