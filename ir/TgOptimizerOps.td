//===- TgOptimizerOps.td - the Adam update ops -----------------*- tablegen -*-===//
//
// In-place Adam steps on variables, one parameter at a time or many at
// once. Verifiers live in TgStateOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TG_OPTIMIZER_OPS_TD
#define TG_OPTIMIZER_OPS_TD

include "ir/TgBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def TG_AdamUpdateOp : TG_Op<"adam_update", [TG_OptimizerStep, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                                           MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "one Adam step on a parameter, in place";
  let description = [{
    With `t = step` (>= 1) and `g = grad`:
    `m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`,
    `param -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)`.
    `param`, `m` and `v` are `tg.variable`s of `grad`'s type, updated in
    place; `lr` and `step` are run-time scalars so the schedule can change
    without recompiling. `0 <= beta1, beta2 < 1`, `epsilon > 0`.

    ```mlir
    tg.adam_update @w, @adam.m.w, @adam.v.w grad %dw lr %lr step %step
        beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971e-10 : tensor<16x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, FlatSymbolRefAttr:$moment1,
                       FlatSymbolRefAttr:$moment2, TG_FloatTensor:$grad,
                       TG_Scalar:$lr, TG_IntScalar:$step,
                       F32Attr:$beta1, F32Attr:$beta2, F32Attr:$epsilon);
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$param, "::llvm::StringRef":$moment1,
                   "::llvm::StringRef":$moment2, "::mlir::Value":$grad,
                   "::mlir::Value":$lr, "::mlir::Value":$step, "float":$beta1,
                   "float":$beta2, "float":$epsilon), [{
      build($_builder, $_state, param, moment1, moment2, grad, lr, step,
            ::llvm::APFloat(beta1), ::llvm::APFloat(beta2),
            ::llvm::APFloat(epsilon));
    }]>
  ];
  let assemblyFormat = [{
    $param `,` $moment1 `,` $moment2 `grad` $grad `lr` $lr `step` $step
    `beta1` $beta1 `beta2` $beta2 `eps` $epsilon attr-dict `:` type($grad)
  }];
  let hasVerifier = 1;
}

def TG_MultiAdamUpdateOp : TG_Op<"multi_adam_update", [TG_OptimizerStep,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, AttrSizedOperandSegments,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "tg.adam_update on many parameters at once: the optimizer step";
  let description = [{
    Means one `tg.adam_update` per entry of `params` (with the moments and
    gradient at the same position), all with one `lr`, `step` and set of
    hyperparameters. A code generator runs it as one kernel over every
    parameter (one launch on a GPU, one parallel loop on a CPU) instead of
    one per tensor. `tg-adam` builds it over every parameter of the model;
    `tg-fuse-adam` builds it from separate `tg.adam_update`s.

    With the optional control operands it is the whole optimizer step, and
    its result is the global gradient norm:
    - `weight` (f32) scales the gradients: `g = weight * grads`.
    - `phase` (i32) accumulates gradients over several batches (the
      runtime's `--update-freq`) in a gradient accumulator of one float per
      gradient element, in entry order, that the runtime provides:
      0 updates with `g`; 1 sets the accumulator to `g` and 2 adds `g` to
      it, without an update; 3 updates with the accumulator plus `g`.
    - `clip` (f32): when `clip > 0` and the norm of the update's gradient is
      above it, the gradient is scaled to norm `clip` (global-norm
      clipping). `clip <= 0` turns it off.
    - The result is the L2 norm over every entry of the update's gradient
      (phases 0 and 3) or of the accumulator (1 and 2), before clipping.
      When it is NaN or infinite, or above 1.8e19 after clipping (its
      square would overflow an f32 in the moments), nothing is updated.
    - `decay` (f32, with the controls) is AdamW's decoupled weight decay
      `wd` (Loshchilov & Hutter), applied to the entries whose flag in
      `decays` is true: `param -= lr * (m_hat / (sqrt(v_hat) + epsilon) +
      wd * param)`, with `param` before the step. The others, and every
      entry when `wd = 0`, take the plain Adam step.
    - `beta1`, `beta2` and `eps` may each be followed by a `run_time` f32
      operand (all three or none, with the controls): the step's
      `adam_beta1`, `adam_beta2` and `adam_eps` arguments that `tg-adam`
      adds. Their values are read when the op runs; the attributes are then
      the model's compiled defaults.

    ```mlir
    %norm = tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
        grads(%dw, %db) lr %lr step %step weight %weight phase %phase clip %clip
        decay %wd on [true, false] beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971e-10
        : tensor<16x16xf32>, tensor<16xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins SymbolRefArrayAttr:$params,
                       SymbolRefArrayAttr:$moments1,
                       SymbolRefArrayAttr:$moments2,
                       Variadic<TG_FloatTensor>:$grads,
                       TG_Scalar:$lr, TG_IntScalar:$step,
                       Optional<TG_Scalar>:$weight,
                       Optional<TG_IntScalar>:$phase,
                       Optional<TG_Scalar>:$clip,
                       Optional<TG_Scalar>:$weight_decay,
                       Optional<TG_Scalar>:$beta1_value,
                       Optional<TG_Scalar>:$beta2_value,
                       Optional<TG_Scalar>:$epsilon_value,
                       F32Attr:$beta1, F32Attr:$beta2, F32Attr:$epsilon,
                       OptionalAttr<DenseBoolArrayAttr>:$decays);
  let results = (outs Optional<TG_Scalar>:$grad_norm);
  let assemblyFormat = [{
    $params `,` $moments1 `,` $moments2 `grads` `(` $grads `)` `lr` $lr
    `step` $step (`weight` $weight^ `phase` $phase `clip` $clip)?
    (`decay` $weight_decay^ `on` $decays)?
    `beta1` $beta1 (`run_time` $beta1_value^)?
    `beta2` $beta2 (`run_time` $beta2_value^)?
    `eps` $epsilon (`run_time` $epsilon_value^)? attr-dict `:`
    type($grads) (`->` type($grad_norm)^)?
  }];
  let hasVerifier = 1;
}

def TG_AllReduceOp : TG_Op<"all_reduce", [TG_ResultsOverwriteOperands,
    MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "sums tensors over the data-parallel processes, in place";
  let description = [{
    Each result is the sum, over every process of a data-parallel run, of
    the operand at the same position; every process gets the same sums.
    The results share their operands' bytes (memory planning places them
    together), so a code generator reduces them in place, with one call
    per contiguous run of bytes (`tg-all-reduce-gradients` puts it on the
    gradients the optimizer step reads, which the memory plan keeps in one
    region of the arena). In a single process it is the identity and
    costs nothing. It is an effect (the other processes take part), so it
    is neither moved, merged nor removed while its results are used.

    ```mlir
    %dw_sum, %db_sum = tg.all_reduce %dw, %db : tensor<16x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_FloatTensor>:$inputs);
  let results = (outs Variadic<TG_FloatTensor>:$sums);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs)
  }];
  let hasVerifier = 1;
}

#endif // TG_OPTIMIZER_OPS_TD
