//===- TgNNOps.td - softmax, norms, dropout, masks, loss -------*- tablegen -*-===//
//
// The neural-network layers of the Transformer that are not plain tensor
// algebra: softmax, layer norm and dropout with their gradients, attention
// masks, positional and rotary encodings and the cross-entropy loss.
// Verifiers live in TgOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TG_NN_OPS_TD
#define TG_NN_OPS_TD

include "ir/TgBase.td"

//===----------------------------------------------------------------------===//
// Softmax, LayerNorm, RMSNorm, dropout
//===----------------------------------------------------------------------===//

def TG_SoftmaxOp : TG_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one dimension";
  let description = [{
    `result = exp(x - max(x)) / sum(exp(x - max(x)))` along dimension `axis`
    (0 <= axis < rank).

    ```mlir
    %p = tg.softmax %s axis 3 : tensor<2x4x7x7xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, I64Attr:$axis);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TG_SoftmaxGradOp : TG_Op<"softmax_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of softmax from its output";
  let description = [{
    With `y` the softmax's output and `dy` the gradient of its result:
    `dx = y * (dy - sum(dy * y, axis))`.

    ```mlir
    %ds = tg.softmax_grad %p, %dp axis 3 : tensor<2x4x7x7xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$output, TG_FloatTensor:$grad, I64Attr:$axis);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$output `,` $grad `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TG_LayerNormOp : TG_Op<"layer_norm", [Pure, AllTypesMatch<["input", "result"]>,
                                           AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `result = gamma * (x - mean) / sqrt(var + epsilon) + beta`, with the
    (biased) mean and variance taken over the last dimension of `x`;
    `gamma` and `beta` are vectors of that dimension's size; `epsilon > 0`.

    ```mlir
    %y = tg.layer_norm %x, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$gamma,
                       TG_FloatTensor:$beta, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `eps` $epsilon attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$gamma,
                   "::mlir::Value":$beta, "float":$epsilon), [{
      build($_builder, $_state, input.getType(), input, gamma, beta,
            $_builder.getF32FloatAttr(epsilon));
    }]>
  ];
}

def TG_LayerNormGradOp : TG_Op<"layer_norm_grad", [Pure,
    AllTypesMatch<["grad", "input", "input_grad"]>,
    AllTypesMatch<["gamma", "gamma_grad", "beta_grad"]>]> {
  let summary = "gradients of layer_norm with respect to input, gamma and beta";
  let description = [{
    Recomputes the row statistics of `input` and returns `(d_input, d_gamma,
    d_beta)` for the gradient `grad` of `tg.layer_norm`'s result.

    ```mlir
    %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$input,
                       TG_FloatTensor:$gamma, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$input_grad, TG_FloatTensor:$gamma_grad,
                      TG_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $gamma `eps` $epsilon attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def TG_RmsNormOp : TG_Op<"rms_norm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "root-mean-square normalization over the last dimension";
  let description = [{
    `result = gamma * x / sqrt(mean(x^2) + epsilon)`, the mean of squares
    taken over the last dimension of `x`: LayerNorm without centring and
    without `beta`. `gamma` is a vector of that dimension's size;
    `epsilon > 0`.

    ```mlir
    %y = tg.rms_norm %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$gamma,
                       F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `eps` $epsilon attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$gamma,
                   "float":$epsilon), [{
      build($_builder, $_state, input.getType(), input, gamma,
            $_builder.getF32FloatAttr(epsilon));
    }]>
  ];
}

def TG_RmsNormGradOp : TG_Op<"rms_norm_grad", [Pure,
    AllTypesMatch<["grad", "input", "input_grad"]>,
    AllTypesMatch<["gamma", "gamma_grad"]>]> {
  let summary = "gradients of rms_norm with respect to input and gamma";
  let description = [{
    Recomputes the row statistics of `input` and returns `(d_input, d_gamma)`
    for the gradient `grad` of `tg.rms_norm`'s result: with
    `xhat = x / sqrt(mean(x^2) + epsilon)` and `g = grad * gamma`,
    `d_input = (g - xhat * mean(g * xhat)) / sqrt(mean(x^2) + epsilon)` and
    `d_gamma` the sum of `grad * xhat` over every row.

    ```mlir
    %dx, %dg = tg.rms_norm_grad %dy, %x, %gamma eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$input,
                       TG_FloatTensor:$gamma, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$input_grad, TG_FloatTensor:$gamma_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $gamma `eps` $epsilon attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def TG_DropoutOp : TG_Op<"dropout", [Pure, TG_ElementwiseLoop, AllTypesMatch<["input", "result"]>]> {
  let summary = "inverted dropout with a counter-based (Philox) mask";
  let description = [{
    Keeps element `i` with probability `1 - rate` and scales kept elements by
    `1 / (1 - rate)`. Whether element `i` is kept is a pure function of
    (`key` = (seed, step), `op_id`, `i`) through Philox4x32-10, so
    `tg.dropout_grad` with the same key and `op_id` regenerates the mask.
    `0 <= rate < 1`; `op_id >= 0` and distinct per dropout site.

    With the optional `run_time` operand (f32; the training step's
    `dropout` argument, which `tg-adam` adds) the rate is that value, read
    when the op runs; the attribute is then the model's compiled default
    (never 0: a site compiled at rate 0 does not exist).

    ```mlir
    %y = tg.dropout %x, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
    %z = tg.dropout %x, %key rate 1.000000e-01 run_time %p op_id 3 : tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_RngKey:$key,
                       Optional<TG_Scalar>:$rate_value, F32Attr:$rate,
                       I64Attr:$op_id);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $key `rate` $rate (`run_time` $rate_value^)? `op_id` $op_id
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def TG_DropoutGradOp : TG_Op<"dropout_grad", [Pure, TG_ElementwiseLoop, AllTypesMatch<["grad", "result"]>]> {
  let summary = "gradient of dropout: the regenerated mask times grad";
  let description = [{
    Applies to `grad` the same mask and scale that `tg.dropout` with this key,
    `rate` and `op_id` applied; no mask is stored. Same rules as `tg.dropout`,
    the optional `run_time` rate included (the forward's).

    ```mlir
    %dx = tg.dropout_grad %dy, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_RngKey:$key,
                       Optional<TG_Scalar>:$rate_value, F32Attr:$rate,
                       I64Attr:$op_id);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $key `rate` $rate (`run_time` $rate_value^)? `op_id` $op_id
    attr-dict `:` type($grad)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Masks and positions
//===----------------------------------------------------------------------===//

def TG_CausalMaskOp : TG_Op<"causal_mask", [Pure]> {
  let summary = "additive mask hiding later positions";
  let description = [{
    A square `[T, T]` tensor: `0` where key `j <= query i`, `-1e9` above the
    diagonal. Added to attention scores before softmax, it keeps decoder
    position `i` from seeing positions after it. `-1e9` rather than `-inf`
    keeps fully masked rows finite.

    ```mlir
    %causal = tg.causal_mask : tensor<7x7xf32>
    ```
  }];
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TG_PaddingMaskOp : TG_Op<"padding_mask", [Pure]> {
  let summary = "additive mask hiding padding tokens";
  let description = [{
    `result[i...] = ids[i...] == pad_id ? -1e9 : 0`, same shape as `ids`.
    Broadcast over heads and queries, it keeps attention off source padding.

    ```mlir
    %pad = tg.padding_mask %src pad_id 0 : tensor<2x7xi32> -> tensor<2x7xf32>
    ```
  }];
  let arguments = (ins TG_IndexTensor:$ids, I32Attr:$pad_id);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$ids `pad_id` $pad_id attr-dict `:` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def TG_PositionalEncodingOp : TG_Op<"positional_encoding", [Pure]> {
  let summary = "sinusoidal positional encoding table";
  let description = [{
    A `[T, D]` tensor with `PE[pos, 2i] = sin(pos / 10000^(2i/D))` and
    `PE[pos, 2i+1] = cos(pos / 10000^(2i/D))`; `D` is even. With `offset`
    (a runtime scalar, as in one decoding step) row `r` is position
    `offset + r`; without, position `r`.

    ```mlir
    %pe = tg.positional_encoding : tensor<7x16xf32>
    %row = tg.positional_encoding offset %position : tensor<1x16xf32>
    ```
  }];
  let arguments = (ins Optional<TG_IntScalar>:$offset);
  let results = (outs TG_FloatTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result), [{
      build($_builder, $_state, result, ::mlir::Value());
    }]>
  ];
  let assemblyFormat = [{
    (`offset` $offset^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def TG_RotaryOp : TG_Op<"rotary", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding (rotate-half convention)";
  let description = [{
    For `input` `[..., S, D]` (positions along `S`, `D` even), each position
    `s` turns the pairs `(x[i], x[i + D/2])`, `i < D/2`, by the angle
    `(offset + s) * base^(-2i/D)`:
    `out[i] = x[i] cos - x[i + D/2] sin`,
    `out[i + D/2] = x[i + D/2] cos + x[i] sin` (GPT-NeoX / LLaMA). With
    `inverse` the angle is negated: the rotation's transpose, its gradient.
    `offset` (a runtime scalar, as in one decoding step) is the first
    position; without it, 0.

    ```mlir
    %q2 = tg.rotary %q base 1.000000e+04 : tensor<2x4x7x16xf32>
    %dq = tg.rotary %g base 1.000000e+04 inverse : tensor<2x4x7x16xf32>
    %row = tg.rotary %q offset %position base 1.000000e+04
        : tensor<2x4x1x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, Optional<TG_IntScalar>:$offset,
                       F64Attr:$base, UnitAttr:$inverse);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`offset` $offset^)? `base` $base (`inverse` $inverse^)? attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

def TG_CrossEntropyOp : TG_Op<"cross_entropy", [Pure]> {
  let summary = "label-smoothed cross-entropy, averaged over non-ignored tokens";
  let description = [{
    For logits `[..., V]` and targets `[...]`, each position whose target is
    not `ignore_index` contributes `-sum_c q(c) log softmax(logits)(c)` with
    `q = (1 - smoothing) * onehot(target) + smoothing / V`. `loss` is the mean
    over the contributing positions (0 if there are none) and `tokens` their
    count. `0 <= smoothing < 1`.

    With the optional `run_time` operand (f32; the training step's
    `label_smoothing` argument, which `tg-adam` adds), the smoothing is that
    value, read when the op runs: the attribute is then the model's compiled
    default, the value the program passes unless told otherwise.

    ```mlir
    %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 ignore 0
        : tensor<2x7x100xf32>, tensor<2x7xi32>
    %loss2, %ntok2 = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 run_time %ls ignore 0
        : tensor<2x7x100xf32>, tensor<2x7xi32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$logits, TG_IndexTensor:$targets,
                       Optional<TG_Scalar>:$smoothing_value,
                       F32Attr:$smoothing, I32Attr:$ignore_index);
  let results = (outs TG_Scalar:$loss, TG_IntScalar:$tokens);
  let assemblyFormat = [{
    $logits `,` $targets `smoothing` $smoothing (`run_time` $smoothing_value^)?
    `ignore` $ignore_index attr-dict `:` type($logits) `,` type($targets)
  }];
  let hasVerifier = 1;
}

def TG_CrossEntropyGradOp : TG_Op<"cross_entropy_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "gradient of the label-smoothed cross-entropy";
  let description = [{
    `d_logits = loss_grad * (softmax(logits) - q) / tokens` at non-ignored
    positions and 0 at ignored ones, for `tg.cross_entropy`'s `loss`. Its
    optional `run_time` smoothing is the forward's (the attribute then is
    the compiled default).

    ```mlir
    %dlogits = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing 1.000000e-01 ignore 0
        : tensor<2x7x100xf32>, tensor<2x7xi32>
    ```
  }];
  let arguments = (ins TG_Scalar:$loss_grad, TG_FloatTensor:$logits,
                       TG_IndexTensor:$targets,
                       Optional<TG_Scalar>:$smoothing_value,
                       F32Attr:$smoothing, I32Attr:$ignore_index);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $loss_grad `,` $logits `,` $targets `smoothing` $smoothing
    (`run_time` $smoothing_value^)? `ignore` $ignore_index
    attr-dict `:` type($logits) `,` type($targets)
  }];
  let hasVerifier = 1;
}

def TG_OutputLossOp : TG_Op<"output_loss", [Pure, TG_GemmOperands,
    TypesMatchWith<"hidden_grad is hidden's shape in f32", "hidden",
                   "hidden_grad", "::tgc::tg::withF32Elements($_self)">,
    TypesMatchWith<"weight_grad is weight's shape in f32", "weight",
                   "weight_grad", "::tgc::tg::withF32Elements($_self)">]> {
  let summary = "vocabulary projection, cross-entropy and their gradients, in row chunks";
  let description = [{
    What `tg-fuse-output-loss` makes of a training step's end: with
    `logits = hidden W^T` (`hidden [..., d]`, `W [V, d]`),
    `loss, tokens` as `tg.cross_entropy logits, targets`,
    `dlogits = tg.cross_entropy_grad loss_grad, logits, targets`,
    `hidden_grad = dlogits W` and `weight_grad = dlogits^T hidden` (rows
    flattened). It computes them `chunk_rows` rows at a time, so that the
    `[rows, V]` logits and their gradient never exist whole: `workspace`
    (`[chunk_rows, V]`) holds one chunk's logits, then their gradient, and
    means nothing after the op. Its memory is planned like any value's.
    After `tg-mixed-precision`, `hidden` and `weight` are `bf16` and each
    chunk's logit gradient is rounded to bf16 before the two gradient GEMMs
    (the CPU kernel rounds it into the workspace itself, each row over the
    first half of its f32 row); the loss, the workspace and both gradients
    stay `f32`. An optional `run_time` smoothing (f32) is read when the op
    runs, as for `tg.cross_entropy`; the attribute then is the default.

    ```mlir
    %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %tgt, %dloss
        smoothing 1.000000e-01 ignore 0 chunk 4
        : tensor<2x7x16xf32>, tensor<100x16xf32>, tensor<2x7xi32>, tensor<4x100xf32>
    ```
  }];
  let arguments = (ins TG_GemmOperand:$hidden, TG_GemmOperand:$weight,
                       TG_IndexTensor:$targets, TG_Scalar:$loss_grad,
                       Optional<TG_Scalar>:$smoothing_value,
                       F32Attr:$smoothing, I32Attr:$ignore_index,
                       I64Attr:$chunk_rows);
  let results = (outs TG_Scalar:$loss, TG_IntScalar:$tokens,
                      TG_FloatTensor:$hidden_grad, TG_FloatTensor:$weight_grad,
                      TG_FloatTensor:$workspace);
  let assemblyFormat = [{
    $hidden `,` $weight `,` $targets `,` $loss_grad `smoothing` $smoothing
    (`run_time` $smoothing_value^)? `ignore` $ignore_index `chunk` $chunk_rows attr-dict `:` type($hidden) `,`
    type($weight) `,` type($targets) `,` type($workspace)
  }];
  let hasVerifier = 1;
}

#endif // TG_NN_OPS_TD
