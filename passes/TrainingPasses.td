//===- TrainingPasses.td - the training step's passes ------*- tablegen -*-===//
//
// The training step: gradients, the optimizer, the data-parallel sum of
// the gradients. Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_TRAINING_PASSES_TD
#define TGC_PASSES_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TgSoftmaxLastAxis : Pass<"tg-softmax-last-axis", "::mlir::ModuleOp"> {
  let summary = "writes a softmax over another axis as one over the last";
  let description = [{
    The kernels of both targets normalize rows (the last axis). A
    `tg.softmax` or `tg.softmax_grad` over another axis becomes the same op
    over the last axis between two `tg.transpose`s that swap that axis with
    the last. The
    values are the interpreter's, bit for bit (transposes only move them).
    In the training pipeline right after tg-adam (which tells attention's
    dropout, of a softmax's result, from the others), on every function.

    ```mlir
    // before
    %p = tg.softmax %x axis 1 : tensor<2x7x16xf32>
    // after
    %t = tg.transpose %x permutation [0, 2, 1] : tensor<2x7x16xf32> -> tensor<2x16x7xf32>
    %r = tg.softmax %t axis 2 : tensor<2x16x7xf32>
    %p = tg.transpose %r permutation [0, 2, 1] : tensor<2x16x7xf32> -> tensor<2x7x16xf32>
    ```
  }];
}

def TgSplitLoss : Pass<"tg-split-loss", "::mlir::ModuleOp"> {
  let summary = "also returns the cross-entropy of a loss with extra terms";
  let description = [{
    When the first result of the function named by `function` is a
    `tg.cross_entropy`'s loss with extra terms (an L2 penalty, an auxiliary
    loss: `ce + aux`, scaled or not), appends that cross-entropy's loss as a
    result named `tg.name = "cross_entropy"`. tg-autodiff and tg-adam keep
    it, so the training step returns (loss, tokens, cross_entropy,
    grad_norm), and the log tells the cross-entropy (whose exponential is
    the perplexity) from the other terms. A loss that is the cross-entropy
    alone, a function that already returns it, and a module without the
    function (tg-autodiff reports that) are left as they are.

    ```mlir
    // before: return %total, %tokens : tensor<f32>, tensor<i32>
    func.func @loss(...) -> (tensor<f32>, tensor<i32>,
                             tensor<f32> {tg.name = "cross_entropy"}) {
      %ce, %tokens = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 ignore 0 ...
      %total = tg.add %ce, %l2 : tensor<f32>
      return %total, %tokens, %ce : tensor<f32>, tensor<i32>, tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"loss\"",
           "the loss function">,
  ];
}

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
  let summary = "appends the optimizer step (Adam on every parameter): the training step";
  let description = [{
    Turns the differentiated loss function into the training step. For each
    result tagged `tg.gradient_of = @p` it declares the moments
    `@adam.m.p` and `@adam.v.p` (zero-initialized module state) and drops
    the gradient from the results; one `tg.multi_adam_update` over every
    parameter (bias-corrected Adam, in place) is the optimizer step, and its
    result, the global gradient norm (`tg.name = "grad_norm"`), becomes the
    last result. New last arguments, all fed by the runtime each step: the
    learning rate (`tensor<f32>`, `tg.name = "lr"`) and the step
    (`tensor<i32>`, `"step"`, counting from 1), so the warmup schedule lives
    in the runtime (`common/Schedule.h`) and never needs a
    recompile; then the optimizer step's controls, `"grad_weight"` (f32),
    `"update_phase"` (i32), `"clip_norm"` (f32) and `"weight_decay"` (f32),
    which give gradient accumulation (`--update-freq`), global-norm clipping
    (`--clip-norm`) and AdamW's decoupled weight decay (`--weight-decay`)
    without a recompile (`tg.multi_adam_update` says what each does); then
    Adam's `"adam_beta1"`, `"adam_beta2"` and `"adam_eps"` (f32, the
    update's `run_time` operands, `--adam-betas` and `--adam-eps`); where the
    step has dropout, `"dropout"` (f32: the rate of every `tg.dropout`,
    `tg.dropout_grad` and fused residual norm, `--dropout`) and
    `"attention_dropout"` (f32: `tg.attention`'s and its gradient's,
    `--attention-dropout`), each when its sites share one compiled rate
    above 0 (a site compiled at rate 0 does not exist, so a model without
    dropout gets neither); and, when
    the step has cross-entropies that share one compiled smoothing,
    `"label_smoothing"` (f32, their and their gradients' `run_time`
    operand, `--label-smoothing`). The compiled values stay on the ops as
    the defaults the program passes. The function is renamed to the
    `step-function` option (`@train_step`).

    One op rather than one per parameter: clipping needs the norm of the
    whole gradient, and accumulation one accumulator for all of it.

    The hyperparameters come from the module's `tg.optimizer` attribute
    (declared in the DSL); the options are the defaults when it is absent.
    Which parameters decay is fixed here, in the op's `decays` flags: a
    variable's `weight_decay(true|false)` if it has one, else no decay for
    rank-0 and rank-1 parameters (scalars, biases, norms' gains) and tables read by
    `tg.embedding` or `tg.gather`, decay for the rest. A frozen parameter
    (not `trainable`) has no gradient, so it gets no moments and no entry.

    ```mlir
    // before: func.func @loss(...) -> (tensor<f32>, tensor<i32>, tensor<4x3xf32> {tg.gradient_of = @w})
    tg.variable @adam.m.w init(zeros) : tensor<4x3xf32>
    tg.variable @adam.v.w init(zeros) : tensor<4x3xf32>
    func.func @train_step(..., %lr: tensor<f32> {tg.name = "lr"},
                          %step: tensor<i32> {tg.name = "step"},
                          %weight: tensor<f32> {tg.name = "grad_weight"},
                          %phase: tensor<i32> {tg.name = "update_phase"},
                          %clip: tensor<f32> {tg.name = "clip_norm"},
                          %wd: tensor<f32> {tg.name = "weight_decay"},
                          %b1: tensor<f32> {tg.name = "adam_beta1"},
                          %b2: tensor<f32> {tg.name = "adam_beta2"},
                          %eps: tensor<f32> {tg.name = "adam_eps"},
                          %ls: tensor<f32> {tg.name = "label_smoothing"})
        -> (tensor<f32>, tensor<i32>, tensor<f32> {tg.name = "grad_norm"}) {
      ...
      %norm = tg.multi_adam_update [@w], [@adam.m.w], [@adam.v.w] grads(%dw)
          lr %lr step %step weight %weight phase %phase clip %clip
          decay %wd on [true] beta1 9.0e-01 run_time %b1 beta2 9.8e-01 run_time %b2
          eps 1.0e-09 run_time %eps : tensor<4x3xf32> -> tensor<f32>
      return %loss, %tokens, %norm : tensor<f32>, tensor<i32>, tensor<f32>
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

def TgFuseAdam : Pass<"tg-fuse-adam", "::mlir::ModuleOp"> {
  let summary = "merges per-parameter tg.adam_update ops into one tg.multi_adam_update";
  let description = [{
    For modules written with separate `tg.adam_update`s (tg-adam itself
    makes one `tg.multi_adam_update`, so the training pipeline does not run
    this pass). The `tg.adam_update`s of a function that share `lr`, `step`
    and hyperparameters become one `tg.multi_adam_update` at the place of
    the last of them, so the optimizer is one kernel (one launch on a GPU, one
    parallel loop on a CPU) instead of one per parameter tensor. Gradients
    already live until the step's end, so moving the updates later costs no
    memory.

    Before:
    ```mlir
    tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %t beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971e-10 : tensor<16x16xf32>
    tg.adam_update @b, @adam.m.b, @adam.v.b grad %db lr %lr step %t beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971e-10 : tensor<16xf32>
    ```
    After:
    ```mlir
    tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
        grads(%dw, %db) lr %lr step %t beta1 0.899999976 beta2 9.800000e-01
        eps 9.99999971e-10 : tensor<16x16xf32>, tensor<16xf32>
    ```
  }];
  let statistics = [
    Statistic<"numMerged", "adam-updates-merged", "tg.adam_update ops merged">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgAllReduceGradients : Pass<"tg-all-reduce-gradients", "::mlir::ModuleOp"> {
  let summary = "sums the optimizer step's gradients over data-parallel processes";
  let description = [{
    Data-parallel training runs the same step in N processes, each on its
    share of a global batch; before the optimizer step every process needs
    the sum of the N gradients. This pass puts one `tg.all_reduce` over the
    gradients of each `tg.multi_adam_update`, just before it, so the emitted
    step is: forward and backward, the all-reduce, then the update (whose
    `weight` operand carries the 1 / global-token-count normalization: the
    runtime sets it from the token count summed over the processes). The
    memory plan keeps the gradients in one region of the arena and the
    all-reduce's results in its operands' bytes, so the emitters reduce
    the whole region with one in-place call. In a single process the call
    does nothing and the step is unchanged. Gradients that are constants
    (a parameter the loss does not depend on) are the same everywhere and
    are left out.

    Before:
    ```mlir
    %norm = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
        grads(%dw, %db) lr %lr step %t weight %wt phase %ph clip %c ...
    ```
    After:
    ```mlir
    %sums:2 = tg.all_reduce %dw, %db : tensor<16x16xf32>, tensor<16xf32>
    %norm = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
        grads(%sums#0, %sums#1) lr %lr step %t weight %wt phase %ph clip %c ...
    ```
  }];
  let statistics = [
    Statistic<"numReduced", "gradients-reduced", "gradients all-reduced">,
  ];
}

#endif // TGC_PASSES_TRAINING_PASSES_TD
