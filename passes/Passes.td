//===- Passes.td - tgc's passes ---------------------------*- tablegen -*-===//
//
// Every pass of the training pipeline. Flags start with `tg-`; options are
// ODS Options, never global cl::opts. `tg-training-pipeline` (Pipelines.cpp)
// chains them in the order docs/passes.md gives.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_TD
#define TGC_PASSES_TD

include "mlir/Pass/PassBase.td"

def TgAutodiff : Pass<"tg-autodiff", "::mlir::ModuleOp"> {
  let summary = "reverse-mode gradients of a loss w.r.t. every trainable variable";
  let description = [{
    Differentiates the function named by `function`, whose first result is
    the scalar `f32` loss, with respect to every `trainable` `tg.variable` it
    loads. The backward ops are appended before the `return`, in reverse
    order of the forward ops, each at the location of the forward op it
    differentiates; the gradients of a value used several times are summed.
    Each gradient becomes an extra result of the function, tagged with the
    variable it belongs to (`tg.gradient_of`), in declaration order.

    Only ops on a path from a trainable variable to the loss are
    differentiated. Such an op without a gradient rule is an error at its
    location, never a silent zero. Dropout's backward regenerates its mask
    from the same Philox key and op id; fused ops get their fused backward.

    Before:
    ```mlir
    tg.variable @w trainable init(xavier_uniform) : tensor<4x3xf32>
    func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
      %w = tg.load @w : tensor<4x3xf32>
      %y = tg.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
      %l = tg.reduce_sum %y dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
    After:
    ```mlir
    func.func @loss(%x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32> {tg.gradient_of = @w}) {
      ...
      %one = tg.constant dense<1.0> : tensor<f32>
      %dy = tg.broadcast %one dims [] : tensor<f32> -> tensor<2x3xf32>
      %dw = tg.matmul %x, %dy transpose_lhs : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
      return %l, %dw : tensor<f32>, tensor<4x3xf32>
    }
    ```
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"loss\"",
           "the function to differentiate (its first result is the loss)">,
  ];
}

def TgAdam : Pass<"tg-adam", "::mlir::ModuleOp"> {
  let summary = "appends the Adam update of every parameter: the training step";
  let description = [{
    Turns the differentiated loss function into the training step. For each
    result tagged `tg.gradient_of = @p` it declares the moments
    `@adam.m.p` and `@adam.v.p` (zero-initialized module state), appends one
    `tg.adam_update` (bias-corrected, in place) and drops the gradient from
    the results. The learning rate (`tensor<f32>`, `tg.name = "lr"`) and the
    step (`tensor<i32>`, `tg.name = "step"`, counting from 1) become the last
    two arguments: the warmup schedule lives in the runtime
    (`runtime/Schedule.h`), so changing it never needs a recompile. The
    function is renamed `step-function`.

    The hyperparameters come from the module's `tg.optimizer` attribute
    (declared in the DSL); the options are the defaults when it is absent.

    ```mlir
    // before: func.func @loss(...) -> (tensor<f32>, tensor<i32>, tensor<4x3xf32> {tg.gradient_of = @w})
    tg.variable @adam.m.w init(zeros) : tensor<4x3xf32>
    tg.variable @adam.v.w init(zeros) : tensor<4x3xf32>
    func.func @train_step(..., %lr: tensor<f32> {tg.name = "lr"},
                          %step: tensor<i32> {tg.name = "step"}) -> (tensor<f32>, tensor<i32>) {
      ...
      tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step
          beta1 9.0e-01 beta2 9.8e-01 eps 1.0e-09 : tensor<4x3xf32>
      return %loss, %tokens : tensor<f32>, tensor<i32>
    }
    ```
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"loss\"",
           "the differentiated loss function">,
    Option<"stepFunctionName", "step-function", "std::string",
           /*default=*/"\"train_step\"", "the name of the training step">,
    Option<"beta1", "beta1", "float", /*default=*/"0.9f",
           "first-moment decay when the module declares no optimizer">,
    Option<"beta2", "beta2", "float", /*default=*/"0.98f",
           "second-moment decay when the module declares no optimizer">,
    Option<"epsilon", "epsilon", "float", /*default=*/"1e-9f",
           "denominator term when the module declares no optimizer">,
  ];
}

#endif // TGC_PASSES_TD
