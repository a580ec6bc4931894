//===- TgFusedOps.td - ops the fusion passes produce -----------*- tablegen -*-===//
//
// Fused attention and residual + LayerNorm or RMSNorm with their fused
// backwards, then the post-autodiff groups: elementwise loops and GEMMs with
// epilogues or a summand.
// Verifiers live in TgFusedOps.cpp and TgGroupOps.cpp (tg.matmul_add's
// beside tg.matmul's, in TgOps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TG_FUSED_OPS_TD
#define TG_FUSED_OPS_TD

include "ir/TgBase.td"

//===----------------------------------------------------------------------===//
// Fused ops (produced by the fusion passes)
//===----------------------------------------------------------------------===//

def TG_AttentionOp : TG_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "fused scaled dot-product attention over all heads";
  let description = [{
    `out = dropout(softmax(scale * Q K^T + mask)) V` per (batch, head), with
    `q : [B, H, Sq, Dk]`, `k : [B, H, Sk, Dk]`, `v : [B, H, Sk, Dv]`.
    `mask`, if present, is an additive `[B, Sk]` key-padding mask (see
    `tg.padding_mask`); `causal` hides keys after the query (needs `Sq == Sk`).
    `bias`, if present, is an additive score bias `[B or 1, H or 1, Sq, Sk]`
    (relative positions, ALiBi, a user's own mask), head-major in both
    layouts and broadcast over a unit batch or head dimension:
    `s = scale * Q K^T + bias + mask`.
    A `dropout_rate > 0` needs a `key`. An optional `run_time` operand (f32,
    after the rate; the step's `attention_dropout` argument, which `tg-adam`
    adds) is the rate read when the op runs, the attribute then being the
    compiled default. With `position` (a runtime scalar;
    needs `causal` and `Sq <= Sk`) query `i` sits at position `position + i`
    of a key/value cache of `Sk` positions and sees keys `0 .. position + i`:
    one step of an incremental decoder.

    With `sequence_major` (what `tg-fold-head-transposes` makes) the
    operands keep the projections' layout, positions before heads:
    `q : [B, Sq, H, Dk]`, `k : [B, Sk, H, Dk]`, `v : [B, Sk, H, Dv]`,
    `out : [B, Sq, H, Dv]` and `lse : [B, Sq, H]`, so splitting and merging
    the heads needs no transposed copy; the dropout stream is the same in
    both layouts (indexed by batch, head, query and key).

    Besides `out : [B, H, Sq, Dv]` it returns `lse : [B, H, Sq]`, the
    log-sum-exp of each score row, which is all `tg.attention_grad` needs to
    recompute the probabilities: the `Sq x Sk` matrix is never stored.
    `query`, `key` and `value` are all `f32` or, after `tg-mixed-precision`,
    all `bf16` (the products then multiply the rounded values, in f32);
    `out` and `lse` are `f32`. With `bf16_products` (bf16 operands only) the
    value product is a bf16 one too: each unnormalized, dropped probability
    `exp(s_ij - max_i) f_ij` is rounded to bf16 before it multiplies `v_j`,
    and the sum is divided by the row's (f32) normalizer after; `out` may
    then be `bf16` (`tg-fold-bf16-roundings`: the `f32` output rounded once
    as it is written).

    ```mlir
    %o, %lse = tg.attention %q, %k, %v mask %pad key %key causal
        scale 0.353553385 dropout 1.000000e-01 op_id 7
        : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>,
           tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
    ```
  }];
  let arguments = (ins TG_GemmOperand:$query, TG_GemmOperand:$key_in,
                       TG_GemmOperand:$value,
                       Optional<TG_FloatTensor>:$mask, Optional<TG_FloatTensor>:$bias,
                       Optional<TG_RngKey>:$rng_key,
                       Optional<TG_IntScalar>:$position,
                       Optional<TG_Scalar>:$dropout_value,
                       UnitAttr:$causal, UnitAttr:$sequence_major,
                       UnitAttr:$bf16_products,
                       F32Attr:$scale, F32Attr:$dropout_rate, I64Attr:$op_id);
  let results = (outs TG_GemmOperand:$output, TG_FloatTensor:$lse);
  let builders = [
    // Result types follow from the operands: out [B, H, Sq, Dv], lse [B, H, Sq].
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::Value":$mask,
                   "::mlir::Value":$rngKey, "bool":$causal, "float":$scale,
                   "float":$dropoutRate, "int64_t":$opId,
                   CArg<"::mlir::Value", "{}">:$position,
                   CArg<"bool", "false">:$sequenceMajor,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"::mlir::Value", "{}">:$dropoutValue), [{
      auto q = ::llvm::cast<::mlir::RankedTensorType>(query.getType());
      auto v = ::llvm::cast<::mlir::RankedTensorType>(value.getType());
      ::llvm::SmallVector<int64_t> outShape(q.getShape());
      outShape.back() = v.getShape().back();
      auto f32 = ::llvm::cast<::mlir::RankedTensorType>(withF32Elements(q));
      build($_builder, $_state, f32.clone(outShape), rowStatisticsType(f32), query,
            key, value, mask, bias, rngKey, position, dropoutValue, causal,
            sequenceMajor,
            /*bf16_products=*/false, ::llvm::APFloat(scale), ::llvm::APFloat(dropoutRate),
            static_cast<uint64_t>(opId));
    }]>
  ];
  let assemblyFormat = [{
    $query `,` $key_in `,` $value (`mask` $mask^)? (`bias` $bias^)? (`key` $rng_key^)?
    (`causal` $causal^)? (`position` $position^)? (`sequence_major` $sequence_major^)?
    (`bf16_products` $bf16_products^)? `scale` $scale `dropout` $dropout_rate
    (`run_time` $dropout_value^)? `op_id` $op_id attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TG_AttentionGradOp : TG_Op<"attention_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "fused backward of tg.attention";
  let description = [{
    Given the gradient `grad` of `tg.attention`'s `out`, returns
    `(d_query, d_key, d_value)` and, when asked for (a `bias` that depends on
    a trainable variable), `d_bias`: the f32 gradient of the score bias, the
    scores' gradient summed over the dimensions the bias is broadcast along.
    It recomputes the probabilities tile by tile
    from `q`, `k` and the saved `lse` (and the dropout mask from `key` and
    `op_id`) instead of reading a stored `Sq x Sk` matrix. Attributes and
    optional operands (the `run_time` dropout rate too) must match the
    forward op's; `query`, `key` and
    `value` are the forward's (`bf16` after `tg-mixed-precision`), the
    gradients `f32`, every tensor in the forward's layout
    (`sequence_major` too). With `bf16_products` the four products of the
    backward are bf16 ones: `grad` is rounded to bf16 where it multiplies
    `v`, and so are the dropped probabilities `p_ij f_ij` (times `grad`, for
    `d_value`) and the score gradients `scale p_ij (dp_ij - D_i)` (times `k`
    and `q`, for `d_query` and `d_key`).
    Each gradient has its input's shape; it is `f32`, or with
    `bf16_products` all three may be `bf16` (`tg-fold-bf16-roundings`: the
    `f32` gradients rounded once as they are written). `output` has
    `grad`'s shape and is `f32`, or `bf16` with `bf16_products` (whose
    backward never reads it: its row term is `sum_j p_ij dp_ij`, from the
    rounded `grad`).

    ```mlir
    %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse mask %pad key %key causal
        scale 0.353553385 dropout 1.000000e-01 op_id 7
        : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
           tensor<2x4x7x8xf32>, tensor<2x4x7xf32>, tensor<2x7xf32>, tensor<2xi32>)
          -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_GemmOperand:$query,
                       TG_GemmOperand:$key_in, TG_GemmOperand:$value,
                       TG_GemmOperand:$output, TG_FloatTensor:$lse,
                       Optional<TG_FloatTensor>:$mask, Optional<TG_FloatTensor>:$bias,
                       Optional<TG_RngKey>:$rng_key,
                       Optional<TG_Scalar>:$dropout_value,
                       UnitAttr:$causal, UnitAttr:$sequence_major,
                       UnitAttr:$bf16_products, F32Attr:$scale, F32Attr:$dropout_rate, I64Attr:$op_id);
  let results = (outs TG_GemmOperand:$query_grad, TG_GemmOperand:$key_grad,
                      TG_GemmOperand:$value_grad, Optional<TG_FloatTensor>:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $query `,` $key_in `,` $value `,` $output `,` $lse
    (`mask` $mask^)? (`bias` $bias^)? (`key` $rng_key^)? (`causal` $causal^)?
    (`sequence_major` $sequence_major^)? (`bf16_products` $bf16_products^)?
    `scale` $scale `dropout` $dropout_rate (`run_time` $dropout_value^)?
    `op_id` $op_id attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TG_ResidualLayerNormOp : TG_Op<"residual_layer_norm", [Pure,
    AttrSizedOperandSegments, AttrSizedResultSegments,
    AllTypesMatch<["residual", "sublayer", "result"]>,
    OptionalTypesMatchWith<"gamma and beta have one type", "gamma", "beta", "$_self">,
    OptionalTypesMatchWith<"the sum has the residual's type", "residual", "sum", "$_self">,
    OptionalTypesMatchWith<"per-row statistics have the residual's shape without the last dimension",
                           "residual", "mean", "::tgc::tg::rowStatisticsType($_self)">,
    TypesMatchWith<"per-row statistics have the residual's shape without the last dimension",
                   "residual", "rstd", "::tgc::tg::rowStatisticsType($_self)">]> {
  let summary = "fused norm(residual + dropout(sublayer)), LayerNorm or RMSNorm";
  let description = [{
    The sublayer wrapper `Norm(x + Dropout(Sublayer(x)))` in one pass:
    `h = residual + dropout(sublayer)`, `out = norm(h)` over the last
    dimension, the norm being `kind`'s: `layer` (the default) is
    `tg.layer_norm`'s `gamma * (h - mean) * rstd + beta` with
    `rstd = 1/sqrt(var + eps)`; `rms` is `tg.rms_norm`'s
    `gamma * h * rstd` with `rstd = 1/sqrt(mean(h^2) + eps)`, which has no
    `beta` and no `mean`. It also returns the per-row `rstd` (and, for
    `layer`, the `mean`), shape `[...]` without the last dimension: with
    the result, what the backward needs; the normalized tensor is not
    saved. With `sum` (a pre-LN block, whose next residual adds to `h`) it
    also writes `h`. With `rounded` (`tg-fold-bf16-roundings`, in place of
    a `tg.to_bf16` copy of the result) it also writes the result rounded to
    bf16, for the GEMMs that read it. An optional `run_time` operand (f32,
    after the rate; the step's `dropout` argument) is the dropout rate read
    when the op runs, the attribute then being the compiled default.

    ```mlir
    %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key
        rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    %z, %rstd2, %h = tg.residual_layer_norm rms %x, %sub, %gamma, %key
        rate 1.000000e-01 op_id 5 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
        sum tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$residual, TG_FloatTensor:$sublayer,
                       TG_FloatTensor:$gamma, Optional<TG_FloatTensor>:$beta,
                       TG_RngKey:$key,
                       Optional<TG_Scalar>:$rate_value,
                       DefaultValuedAttr<TG_NormKind, "::tgc::tg::NormKind::layer">:$kind,
                       F32Attr:$rate, I64Attr:$op_id, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$result, Optional<TG_FloatTensor>:$mean,
                      TG_FloatTensor:$rstd, Optional<TG_FloatTensor>:$sum,
                      Optional<TG_Bf16Tensor>:$rounded);
  let assemblyFormat = [{
    ($kind^)? $residual `,` $sublayer `,` custom<NormParams>(ref($kind), $gamma, $beta)
    `,` $key `rate` $rate (`run_time` $rate_value^)? `op_id` $op_id
    `eps` $epsilon attr-dict `:` type($residual) `,`
    custom<GammaAndMean>(ref($kind), ref(type($residual)), type($gamma), type($mean))
    (`sum` type($sum)^)? (`rounded` type($rounded)^)?
  }];
  let hasVerifier = 1;
}

def TG_ResidualLayerNormGradOp : TG_Op<"residual_layer_norm_grad", [Pure,
    AttrSizedOperandSegments, AttrSizedResultSegments,
    AllTypesMatch<["grad", "result", "residual_grad", "sublayer_grad"]>,
    AllTypesMatch<["gamma", "gamma_grad"]>,
    OptionalTypesMatchWith<"gamma and beta have one type", "gamma", "beta", "$_self">,
    OptionalTypesMatchWith<"gamma and beta's gradient have one type", "gamma", "beta_grad", "$_self">,
    OptionalTypesMatchWith<"the sum's gradient has the result's type", "result", "sum_grad", "$_self">,
    TypesMatchWith<"per-row statistics have the result's shape without the last dimension",
                   "result", "rstd", "::tgc::tg::rowStatisticsType($_self)">]> {
  let summary = "fused backward of tg.residual_layer_norm";
  let description = [{
    Given the gradient of `tg.residual_layer_norm`'s result, returns
    `(d_residual, d_sublayer, d_gamma)` and, for `layer`, `d_beta`. It
    reads the forward's `result` (which the next sublayer keeps for its own
    gradients anyway) instead of its two inputs: the normalized row is
    `xhat = (result - beta) / gamma` (`rms`: `result / gamma`), and with
    the saved `rstd` that is all the norm's backward needs. So neither the
    residual nor the sublayer output stays alive into the backward (a
    tensor of the activations' size per sublayer). `sum_grad`, the gradient
    of the forward's `sum` where it has one, adds to `h`'s gradient, which
    is the residual's; the sublayer's goes through the dropout mask,
    regenerated from the key. Attributes (and the `run_time` rate) must
    match the forward op's. A
    `gamma` entry of exactly 0 makes its column's `xhat` unknowable (the
    gradients come out non-finite there), which is why
    `tg-fuse-residual-layernorm` leaves a gamma that starts at zero unfused.
    With `rounded` (`tg-fold-bf16-roundings`, in place of a `tg.to_bf16`
    copy of the sublayer's gradient) it also writes that gradient rounded to
    bf16, for the sublayer's gradient GEMMs; where then nothing reads the
    f32 `sublayer_grad` (a bf16 step), the kernels do not write it and
    `tg-plan-memory` gives it no bytes.

    ```mlir
    %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %dy, %y, %gamma, %beta, %rstd, %key
        rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    %dx2, %dsub2, %dg2 = tg.residual_layer_norm_grad rms %dz, %z, %gamma, %rstd2, %key
        sum_grad %dh rate 1.000000e-01 op_id 5 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$result,
                       TG_FloatTensor:$gamma, Optional<TG_FloatTensor>:$beta,
                       TG_FloatTensor:$rstd, TG_RngKey:$key,
                       Optional<TG_FloatTensor>:$sum_grad,
                       Optional<TG_Scalar>:$rate_value,
                       DefaultValuedAttr<TG_NormKind, "::tgc::tg::NormKind::layer">:$kind,
                       F32Attr:$rate, I64Attr:$op_id, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$residual_grad, TG_FloatTensor:$sublayer_grad,
                      TG_FloatTensor:$gamma_grad, Optional<TG_FloatTensor>:$beta_grad,
                      Optional<TG_Bf16Tensor>:$sublayer_grad_rounded);
  let assemblyFormat = [{
    ($kind^)? $grad `,` $result `,` custom<NormParams>(ref($kind), $gamma, $beta)
    `,` $rstd `,` $key (`sum_grad` $sum_grad^)?
    `rate` $rate (`run_time` $rate_value^)? `op_id` $op_id `eps` $epsilon
    attr-dict `:` type($result) `,`
    custom<GammaAndBetaGrad>(ref($kind), type($gamma), type($beta_grad))
    (`rounded` type($sublayer_grad_rounded)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Post-autodiff fusion: elementwise groups and GEMM epilogues
//===----------------------------------------------------------------------===//

def TG_FusedElementwiseOp : TG_Op<"fused_elementwise", [IsolatedFromAbove, TG_ElementwiseLoop,
    SingleBlock, RecursiveMemoryEffects, RecursivelySpeculatable]> {
  let summary = "a group of elementwise ops that runs as one loop";
  let description = [{
    The body holds elementwise tg ops (those with the `Elementwise` trait, plus
    `tg.dropout` and `tg.dropout_grad`, whose mask is a function of the
    element index) on tensors of one shape, the group's. The op means exactly
    what the body's ops mean one after another; a code generator emits it as a
    single loop that reads each input once and writes each result once, so the
    intermediates never reach memory. `tg-fuse-elementwise` builds it after
    autodiff. Inputs are tensors of the group's shape, a dropout key, or an
    f32 scalar that is a dropout's `run_time` rate; the
    body's block arguments stand for them in order; `tg.yield` names the
    results. After `tg-mixed-precision` a group may read bf16 copies and, with
    a `tg.to_bf16` in its body, write one (`tg-fold-bf16-roundings`): the
    loop stores that result rounded, so its f32 value never reaches memory.

    ```mlir
    %r = tg.fused_elementwise(%g, %key) : (tensor<4x8x32xf32>, tensor<2xi32>) -> tensor<4x8x32xf32> {
    ^bb0(%x: tensor<4x8x32xf32>, %k: tensor<2xi32>):
      %0 = tg.dropout_grad %x, %k rate 1.000000e-01 op_id 0 : tensor<4x8x32xf32>
      %1 = tg.scale %0 by 5.65685415 : tensor<4x8x32xf32>
      tg.yield %1 : tensor<4x8x32xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<RankedTensorOf<[F32, BF16, I32]>>:$inputs);
  let results = (outs Variadic<RankedTensorOf<[F32, BF16]>>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape every input (but dropout keys) and result has.
    ::mlir::RankedTensorType getGroupType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult(0).getType());
    }
    /// The body's terminator.
    YieldOp getYield();
  }];
}

def TG_YieldOp : TG_Op<"yield", [Pure, Terminator,
                                 HasParent<"FusedElementwiseOp">]> {
  let summary = "the results of a tg.fused_elementwise body";
  let description = [{
    ```mlir
    tg.yield %0, %1 : tensor<4x8x32xf32>, tensor<4x8x32xf32>
    ```
  }];
  let arguments = (ins Variadic<RankedTensorOf<[F32, BF16]>>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def TG_LinearOp : TG_Op<"linear", [Pure, TG_GemmOperands, TG_GemmResult]> {
  let summary = "GEMM with its bias and activation epilogue, act(x W + b)";
  let description = [{
    `result[..., n] = act(sum_k input[..., k] * weight[k, n] + bias[n])`, with
    `act` the identity (`none`, not printed) or the formula of the tg op of
    that name: `relu`, `gelu` (erf), `gelu_tanh`, `sigmoid`, `tanh`, or
    `silu` (`x * sigmoid(x)`). `input` has rank >= 2, `weight` is [K, N] and
    `bias` is [N]. The bias add and the activation run in the GEMM's
    epilogue while the output tile is still in registers or cache, instead
    of as more passes over memory.
    `tg-fuse-matmul-epilogue` builds it after autodiff from
    `act(add(matmul(x, W), broadcast(b)))`; it has no gradient rule. Where
    the backward reads the activation's input (`tg.gelu_grad`, SiLU's
    products), the optional `pre_activation` result is that input,
    `x W + b`, written by the same epilogue.
    `input` and `weight` are both `f32` or both `bf16`; each result `f32`
    or, with bf16 operands, `bf16`: the epilogue's f32 values (the
    activation computed from the unrounded sum) rounded once as they are
    written (`tg-fold-bf16-roundings`). The bias is `f32`, or `bf16` with
    bf16 operands and no `pre_activation` (`tg-mixed-precision`'s, for a
    result read only in bf16: the widened bias is added to the f32 sum, and
    a GPU's GEMM can add it in its epilogue).

    ```mlir
    %h = tg.linear %x, %w1, %b1 relu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>
    %g, %pre = tg.linear %x, %w1, %b1 gelu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>, tensor<4x8x64xf32>
    ```
  }];
  let arguments = (ins TG_GemmOperand:$input, TG_GemmOperand:$weight,
                       TG_GemmOperand:$bias,
                       DefaultValuedAttr<TG_Activation, "::tgc::tg::Activation::none">:$activation);
  let results = (outs TG_GemmOperand:$result,
                      Optional<TG_GemmOperand>:$pre_activation);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias ($activation^)? attr-dict `:` type($input)
    `,` type($weight) `,` type($bias) `->` type($result)
    (`,` type($pre_activation)^)?
  }];
  let hasVerifier = 1;
}

def TG_MatmulAddOp : TG_Op<"matmul_add", [Pure, TG_GemmOperands]> {
  let summary = "a product added to a summand in the GEMM: lhs rhs + addend";
  let description = [{
    `result = P + addend`, with `P` what `tg.matmul` of `lhs` and `rhs` (and
    its transposes) makes, added where the GEMM writes its result (BLAS's
    `beta = 1`) instead of in a pass of its own over three tensors. The
    backward's gradient sums are such adds: a value read by several GEMMs
    (the attention's input by its query, key and value projections, the
    encoder's output by every cross-attention) gets one input gradient
    product from each, summed with the residual path's.
    `tg-fuse-matmul-add` builds it after autodiff from `add(matmul, x)`
    where the product has no other reader; it has no gradient rule. The
    sum is the add's, in its order: the product's f32 values plus `addend`'s,
    each element rounded once. `addend` and the result have the product's
    shape and are `f32`; `lhs` and `rhs` are both `f32` or both `bf16`.
    Where `addend` dies at the op and the product does not read it, the GEMM
    adds into its bytes (the result takes them over, `tg-plan-memory`);
    elsewhere they are copied first.

    ```mlir
    %dx = tg.matmul_add %dy, %w, %residual transpose_rhs : tensor<4x8x64xf32>, tensor<32x64xf32>, tensor<4x8x32xf32> -> tensor<4x8x32xf32>
    ```
  }];
  let arguments = (ins TG_GemmOperand:$lhs, TG_GemmOperand:$rhs,
                       TG_FloatTensor:$addend,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $addend (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict `:` type($lhs) `,`
    type($rhs) `,` type($addend) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_WeightBiasGradOp : TG_Op<"weight_bias_grad", [Pure, TG_GemmOperands]> {
  let summary = "a linear layer's weight and bias gradients: x^T dy and 1^T dy";
  let description = [{
    `weight_grad = input^T grad` (what `tg.matmul %input, %grad
    transpose_lhs` makes) and `bias_grad[n] = sum_r grad[r, n]` (what
    `tg.reduce_sum` over the rows makes: double accumulators, row order,
    rounded once), from `input` [R, K] and `grad` [R, N]: the two reads of
    the output gradient in one op, so that a GPU's GEMM can add up the bias
    gradient as it reads `grad` (cuBLASLt's `BGRADA` epilogue) instead of a
    reduction reading it again. `tg-fuse-matmul-epilogue` builds it after
    autodiff from a weight gradient's GEMM and the bias gradient of the same
    `grad`; it has no gradient rule. `input` and `grad` are both `f32` or
    both `bf16` (`tg-mixed-precision`: the bias gradient then sums the bf16
    values the GEMM reads, as autocast's does); both results are `f32`.

    ```mlir
    %dw, %db = tg.weight_bias_grad %x, %dy : tensor<56x16xf32>, tensor<56x64xf32> -> tensor<16x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins TG_GemmOperand:$input, TG_GemmOperand:$grad);
  let results = (outs TG_FloatTensor:$weight_grad, TG_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $grad attr-dict `:` type($input) `,` type($grad) `->`
    type($weight_grad) `,` type($bias_grad)
  }];
  let hasVerifier = 1;
}

#endif // TG_FUSED_OPS_TD
