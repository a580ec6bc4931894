// tg-plan-memory's diagnostics: no step function to plan, and values the
// arena cannot hold (a dynamic or unranked shape, an element type other than
// f32 and i32, checked on arguments and op results alike), and a step that
// is not one block. Module-level errors use an explicit `module` so that
// they have a source line to match; the multi-block case needs an
// unregistered terminator (the tools register no control-flow dialect).
// RUN: tgc-opt --tg-plan-memory --split-input-file --verify-diagnostics --allow-unregistered-dialect %s

// No @train_step (the pass's default function) in the module.
// expected-error @+1 {{tg-plan-memory: no function @train_step to plan}}
module {
  func.func @loss(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A symbol @train_step that is not a function does not count.
// expected-error @+1 {{tg-plan-memory: no function @train_step to plan}}
module {
  tg.variable @train_step trainable init(ones) : tensor<4xf32>
}

// -----

// expected-error @+1 {{memory planning needs statically shaped tensors but found 'tensor<?x4xf32>'}}
func.func @train_step(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{memory planning needs statically shaped tensors but found 'tensor<*xf32>'}}
func.func @train_step(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

// expected-error @+1 {{memory planning handles f32, bf16 and i32 tensors but found 'tensor<4xf16>'}}
func.func @train_step(%x: tensor<4xf16>) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}

// -----

// An op result is checked too (at the op).
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{memory planning handles f32, bf16 and i32 tensors but found 'tensor<4xi64>'}}
  %y = "test.widen"(%x) : (tensor<4xf32>) -> tensor<4xi64>
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{memory planning needs a function with one block}}
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"()[^bb1] : () -> ()
^bb1:
  return %x : tensor<4xf32>
}

// -----

// A declaration has no block at all.
// expected-error @+1 {{memory planning needs a function body, but @train_step is a declaration}}
func.func private @train_step(tensor<4xf32>) -> tensor<4xf32>

// -----

// A loaded value read after a tg.store to its variable: a compiled step
// reads the variable's bytes in place, so it would see the stored value
// (it did: the losses differed from the interpreter's).
tg.variable @c init(ones) : tensor<4xf32>
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tg.load @c : tensor<4xf32>
  // expected-note @+1 {{the write}}
  tg.store %x, @c : tensor<4xf32>
  // expected-error @+1 {{reads the value of @c loaded at}}
  %y = tg.mul %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// ... through a view made before the store, too.
tg.variable @c init(ones) : tensor<4xf32>
func.func @train_step(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %c = tg.load @c : tensor<4xf32>
  %v = tg.stop_gradient %c : tensor<4xf32>
  // expected-note @+1 {{the write}}
  tg.store %x, @c : tensor<4xf32>
  // expected-error @+1 {{reads the value of @c loaded at}}
  %r = tg.reshape %v : tensor<4xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// An all-reduce's operand read after the sum overwrote it.
func.func @train_step(%g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %d = tg.neg %g : tensor<4xf32>
  // expected-note @+1 {{the overwrite}}
  %s = tg.all_reduce %d : tensor<4xf32>
  // expected-error @+1 {{reads a value that tg.all_reduce overwrote in place (its result); read the result instead}}
  %n = tg.neg %d : tensor<4xf32>
  return %s, %n : tensor<4xf32>, tensor<4xf32>
}
