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

def TgFuseAttention : Pass<"tg-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "rewrites scaled dot-product attention chains into tg.attention";
  let description = [{
    Matches, per head batch, the chain the DSL writes for attention
    ```
    s = Q K^T (tg.matmul transpose_rhs) ; s = scale(s)        [optional]
    s = s + broadcast(padding mask [B,Sk], dims [0,3])        [optional]
    s = s + broadcast(tg.causal_mask [S,S], dims [2,3])       [optional]
    p = softmax(s, last axis) ; p = dropout(p)                [dropout optional]
    out = p V (tg.matmul)
    ```
    and replaces it by one `tg.attention` that also returns each row's
    log-sum-exp. Its gradient, `tg.attention_grad`, recomputes the
    probabilities from that statistic instead of saving the `Sq x Sk`
    matrix. It covers encoder self-attention (padding mask), decoder
    self-attention (causal) and cross-attention (padding mask on the source).
    A chain whose intermediate has another use (e.g. the probabilities are
    also returned) is left alone, as is one whose shapes or masks do not fit.

    Before:
    ```mlir
    %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x7xf32>
    %t = tg.scale %s by 0.353553385 : tensor<2x4x7x7xf32>
    %m = tg.broadcast %pad dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
    %u = tg.add %t, %m : tensor<2x4x7x7xf32>
    %p = tg.softmax %u axis 3 : tensor<2x4x7x7xf32>
    %d = tg.dropout %p, %key rate 1.000000e-01 op_id 1 : tensor<2x4x7x7xf32>
    %o = tg.matmul %d, %v : tensor<2x4x7x7xf32>, tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
    ```
    After:
    ```mlir
    %o, %lse = tg.attention %q, %k, %v mask %pad key %key scale 0.353553385
        dropout 1.000000e-01 op_id 1 : (...) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
    ```
  }];
  let statistics = [
    Statistic<"numFused", "attentions-fused", "attention chains fused">,
    Statistic<"numCausal", "causal", "of which causal">,
    Statistic<"numMasked", "padding-masked", "of which with a padding mask">,
    Statistic<"numRejected", "rejected-extra-use",
              "chains left unfused because an intermediate has another use">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark (LLVM builds without statistics, "
           "such as Debian's, compile --mlir-pass-statistics out)">,
  ];
}

def TgFoldHeadTransposes : Pass<"tg-fold-head-transposes", "::mlir::ModuleOp"> {
  let summary = "lets tg.attention read and write the projections' layout";
  let description = [{
    The DSL splits heads as `transpose(reshape(x W), [0, 2, 1, 3])`, from
    `[B, S, H, D]` to `[B, H, S, D]`, and merges them back the same way: a
    copy of every query, key, value and output tensor in the forward, and of
    their gradients in the backward. A `tg.attention` whose query, key and
    value are each such a transpose and whose output is used only by such
    transposes becomes a `sequence_major` one on the transposes' inputs,
    its result replacing theirs; its strided kernels read each head's rows
    where the projections wrote them. Run before `tg-autodiff`, so the
    gradient is sequence-major too and the backward has no transposes
    either. A decoding step (`position`, its keys in a head-major cache) and
    any other use of the head-major tensors keep the transposes.

    Before:
    ```mlir
    %q = tg.transpose %qp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
    %k = tg.transpose %kp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
    %v = tg.transpose %vp permutation [0, 2, 1, 3] : tensor<2x7x4x8xf32> -> tensor<2x4x7x8xf32>
    %o, %lse = tg.attention %q, %k, %v scale 0.353553385 dropout 0.000000e+00 op_id 1 : (...)
    %m = tg.transpose %o permutation [0, 2, 1, 3] : tensor<2x4x7x8xf32> -> tensor<2x7x4x8xf32>
    ```
    After:
    ```mlir
    %m, %lse = tg.attention %qp, %kp, %vp sequence_major scale 0.353553385
        dropout 0.000000e+00 op_id 1 : (...) -> (tensor<2x7x4x8xf32>, tensor<2x7x4xf32>)
    ```
  }];
  let statistics = [
    Statistic<"numFolded", "attentions-folded",
              "attentions that read and write the sequence-major layout">,
    Statistic<"numKept", "kept-head-major",
              "attentions left head-major (an operand or a use is not a head "
              "transpose, or a decoding step)">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgFuseResidualLayerNorm : Pass<"tg-fuse-residual-layernorm", "::mlir::ModuleOp"> {
  let summary = "rewrites layer_norm(x + dropout(y)) into tg.residual_layer_norm";
  let description = [{
    The post-LN wrapper of every sublayer, `LayerNorm(x + Dropout(y))`,
    becomes one `tg.residual_layer_norm` that makes one pass over memory and
    saves only the per-row mean and rstd for its backward (not the sum or
    the normalized tensor); its backward rebuilds the normalized rows from
    the result, `(y - beta) / gamma`. Without a dropout (rate 0) the sum is
    fused with rate 0 and a constant key. The add or the dropout having
    another use keeps the chain unfused, and so does a gamma variable that
    starts at zero (`init(zeros)`): dividing by it would lose the rows.

    Before:
    ```mlir
    %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
    %h = tg.add %x, %d : tensor<2x7x16xf32>
    %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
    After:
    ```mlir
    %z, %mean, %rstd = tg.residual_layer_norm %x, %y, %gamma, %beta, %key
        rate 1.000000e-01 op_id 2 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "layer-norms-fused",
              "residual + dropout + layer_norm blocks fused">,
    Statistic<"numRejected", "rejected-extra-use",
              "blocks left unfused because the sum or dropout has another use">,
    Statistic<"numZeroGamma", "rejected-zero-gamma",
              "blocks left unfused because gamma starts at zero">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgDeriveDecoder : Pass<"tg-derive-decoder", "::mlir::ModuleOp"> {
  let summary = "derives an incremental decoder (@encode, @decode_step) from @predict";
  let description = [{
    @predict recomputes every target position for each new token; beam
    search and greedy decoding need only the newest one. This pass splits
    the fused @predict into

    - `@encode(source_ids)`: the ops that depend on the source only; it
      stores each of their values that the decoder reads (cross-attention
      keys and values, the source padding mask) in a `cache` variable;
    - `@decode_step(target_in_ids [B, 1], position) -> logits [B, 1, V]`:
      the ops that depend on the target, for one position. Each causal
      self-attention appends its key and value rows to `cache` variables
      with `tg.store_slice` and attends to the cache up to `position`;
      positional encodings are computed for that position only.

    Every cache has the batch as its first dimension, so a beam search can
    reorder them row by row. It runs after forward fusion (attention must be
    `tg.attention`) and before the step fusion passes, which then fuse the
    new functions too. Ops it has no rule for are reported.

    Before (decoder self-attention of @predict):
    ```mlir
    %o, %lse = tg.attention %q, %k, %v causal scale 0.35 dropout 0.0 op_id 0
        : (tensor<2x4x6x8xf32>, ...) -> (tensor<2x4x6x8xf32>, tensor<2x4x6xf32>)
    ```
    After (in @decode_step):
    ```mlir
    tg.store_slice %k1, @decode.decoder.layer0.self_attn.keys[%position] axis 2
        : tensor<2x4x1x8xf32>
    tg.store_slice %v1, @decode.decoder.layer0.self_attn.values[%position] axis 2
        : tensor<2x4x1x8xf32>
    %kc = tg.load @decode.decoder.layer0.self_attn.keys : tensor<2x4x6x8xf32>
    %vc = tg.load @decode.decoder.layer0.self_attn.values : tensor<2x4x6x8xf32>
    %o1, %lse1 = tg.attention %q1, %kc, %vc causal position %position
        scale 0.35 dropout 0.0 op_id 0
        : (tensor<2x4x1x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<i32>)
          -> (tensor<2x4x1x8xf32>, tensor<2x4x1xf32>)
    ```
  }];
  let options = [
    Option<"predictName", "predict-function", "std::string",
           /*default=*/"\"predict\"", "the inference function to split">,
    Option<"encodeName", "encode-function", "std::string",
           /*default=*/"\"encode\"", "the name of the derived encoder">,
    Option<"stepName", "step-function", "std::string",
           /*default=*/"\"decode_step\"", "the name of the derived one-position decoder">,
    Option<"required", "required", "bool", /*default=*/"true",
           "fail when @predict cannot be split; false: warn and leave the "
           "module unchanged (the training pipeline, whose programs then "
           "decode with @predict)">,
  ];
}

def TgDerivePredict : Pass<"tg-derive-predict", "::mlir::ModuleOp"> {
  let summary = "derives the inference function @predict from the loss function";
  let description = [{
    Translating needs the model's logits without dropout, for a batch of
    sources and target prefixes. This pass clones the loss function into
    `@predict`: every `tg.dropout` becomes the identity (inference), the
    `tg.cross_entropy` that the first result comes from is dropped and the
    logits it read are returned, and arguments nothing reads any more (the
    target-out ids, the dropout key) are removed. It runs before fusion, so
    `@predict` is fused and planned like the step.

    Before:
    ```mlir
    func.func @loss(%src: tensor<2x5xi32>, %tin: tensor<2x5xi32>,
                    %tout: tensor<2x5xi32>, %key: tensor<2xi32>)
        -> (tensor<f32>, tensor<i32>) {
      ...
      %h = tg.dropout %e, %key rate 1.0e-01 op_id 0 : tensor<2x5x8xf32>
      ...
      %loss, %tokens = tg.cross_entropy %logits, %tout smoothing 1.0e-01 ignore 0 : ...
      return %loss, %tokens : tensor<f32>, tensor<i32>
    }
    ```
    After (added):
    ```mlir
    func.func @predict(%src: tensor<2x5xi32>, %tin: tensor<2x5xi32>)
        -> tensor<2x5x12xf32> {
      ...
      return %logits : tensor<2x5x12xf32>
    }
    ```
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"loss\"",
           "the loss function to derive from">,
    Option<"predictName", "predict-function", "std::string",
           /*default=*/"\"predict\"", "the name of the derived function">,
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
    in the runtime (`runtime/program/Schedule.h`) and never needs a
    recompile; then the optimizer step's controls, `"grad_weight"` (f32),
    `"update_phase"` (i32) and `"clip_norm"` (f32), which give gradient
    accumulation (`--update-freq`) and global-norm clipping (`--clip-norm`)
    without a recompile (`tg.multi_adam_update` says what each does). The
    function is renamed to the `step-function` option (`@train_step`).

    One op rather than one per parameter: clipping needs the norm of the
    whole gradient, and accumulation one accumulator for all of it.

    The hyperparameters come from the module's `tg.optimizer` attribute
    (declared in the DSL); the options are the defaults when it is absent.

    ```mlir
    // before: func.func @loss(...) -> (tensor<f32>, tensor<i32>, tensor<4x3xf32> {tg.gradient_of = @w})
    tg.variable @adam.m.w init(zeros) : tensor<4x3xf32>
    tg.variable @adam.v.w init(zeros) : tensor<4x3xf32>
    func.func @train_step(..., %lr: tensor<f32> {tg.name = "lr"},
                          %step: tensor<i32> {tg.name = "step"},
                          %weight: tensor<f32> {tg.name = "grad_weight"},
                          %phase: tensor<i32> {tg.name = "update_phase"},
                          %clip: tensor<f32> {tg.name = "clip_norm"})
        -> (tensor<f32>, tensor<i32>, tensor<f32> {tg.name = "grad_norm"}) {
      ...
      %norm = tg.multi_adam_update [@w], [@adam.m.w], [@adam.v.w] grads(%dw)
          lr %lr step %step weight %weight phase %phase clip %clip
          beta1 9.0e-01 beta2 9.8e-01 eps 1.0e-09 : tensor<4x3xf32> -> tensor<f32>
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

def TgFuseOutputLoss : Pass<"tg-fuse-output-loss", "::mlir::ModuleOp"> {
  let summary = "runs the vocabulary projection, the loss and their gradients in row chunks (tg.output_loss)";
  let description = [{
    After autodiff, a step ends with the `[rows, V]` logits of the output
    projection, the label-smoothed cross-entropy, its gradient (another
    `[rows, V]` tensor) and the two GEMMs that gradient feeds: to the
    hidden states and to the projection's weight. With a vocabulary of
    37000 and 2048 rows, the two tensors are 600 MB and every pass over them
    goes to memory. This pass replaces the group with one `tg.output_loss`,
    which computes it `chunk-rows` rows at a time: a chunk's logits, then
    its loss and gradient in one pass over the row (in place), then its
    share of both gradient GEMMs, in a `[chunk-rows, V]` workspace. Each
    chunk reads the `[V, d]` weight twice and its gradient once and writes
    that gradient, so fewer, larger chunks move less memory: 1024 rows, not
    256, made the 6-layer, 37000-word bench step 10% shorter on a 2-core AMD
    EPYC, for 108 MiB more planned memory (6%: the workspace is 145 MiB).
    It matches `tg.matmul %h, %W transpose_rhs` whose only users
    are one `tg.cross_entropy` and one `tg.cross_entropy_grad`, whose
    gradient feeds only `tg.matmul %dl, %W` and, through a reshape,
    `tg.matmul %dl transpose_lhs, reshape(%h)`. Anything else is left as it
    is. `chunk-rows=0` turns it off (the CUDA target, which has no kernel
    for the op yet).

    Before:
    ```mlir
    %l = tg.matmul %h, %w transpose_rhs : tensor<2x8x16xf32>, tensor<100x16xf32> -> tensor<2x8x100xf32>
    %loss, %tokens = tg.cross_entropy %l, %t smoothing 1.000000e-01 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
    %dl = tg.cross_entropy_grad %one, %l, %t smoothing 1.000000e-01 ignore 0 : tensor<2x8x100xf32>, tensor<2x8xi32>
    %dh = tg.matmul %dl, %w : tensor<2x8x100xf32>, tensor<100x16xf32> -> tensor<2x8x16xf32>
    %dl2 = tg.reshape %dl : tensor<2x8x100xf32> -> tensor<16x100xf32>
    %h2 = tg.reshape %h : tensor<2x8x16xf32> -> tensor<16x16xf32>
    %dw = tg.matmul %dl2, %h2 transpose_lhs : tensor<16x100xf32>, tensor<16x16xf32> -> tensor<100x16xf32>
    ```
    After (`chunk-rows=8`):
    ```mlir
    %loss, %tokens, %dh, %dw, %ws = tg.output_loss %h, %w, %t, %one smoothing 1.000000e-01 ignore 0 chunk 8
        : tensor<2x8x16xf32>, tensor<100x16xf32>, tensor<2x8xi32>, tensor<8x100xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "losses-fused", "output projections and losses fused">,
  ];
  let options = [
    Option<"chunkRows", "chunk-rows", "int64_t", /*default=*/"1024",
           "rows per chunk (fewer when the batch has fewer); 0: off">,
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgFuseMatmulEpilogue : Pass<"tg-fuse-matmul-epilogue", "::mlir::ModuleOp"> {
  let summary = "folds a bias add and a ReLU into the producing GEMM (tg.linear)";
  let description = [{
    After autodiff, `add(matmul(x, W), broadcast(b))` with a rank-2 `W`
    and `b` broadcast along the last dimension becomes `tg.linear x, W, b`,
    and a following `tg.relu` folds in as well. The bias add and the
    activation then run in the GEMM's epilogue (a loop over the output tile
    on the CPU, cuBLASLt's bias+ReLU epilogue on the GPU) instead of as two
    more passes over the [rows, N] activation. A matmul or add with another
    use stays as it is; the relu only folds when it is the add's one use.
    It runs after autodiff because `tg.linear` has no gradient rule; the
    relu's gradient reads the relu's output, so the pre-activation is not
    needed by the backward.

    Before:
    ```mlir
    %0 = tg.matmul %x, %w : tensor<4x8x32xf32>, tensor<32x64xf32> -> tensor<4x8x64xf32>
    %1 = tg.broadcast %b dims [2] : tensor<64xf32> -> tensor<4x8x64xf32>
    %2 = tg.add %0, %1 : tensor<4x8x64xf32>
    %3 = tg.relu %2 : tensor<4x8x64xf32>
    ```
    After:
    ```mlir
    %3 = tg.linear %x, %w, %b relu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "epilogues-fused", "bias adds folded into a GEMM">,
    Statistic<"numRelu", "relu-fused", "of which with a ReLU">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgFuseElementwise : Pass<"tg-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "groups chains of elementwise ops into tg.fused_elementwise";
  let description = [{
    Walks each function in order and grows groups of elementwise tg ops
    (and dropouts) of one shape along producer -> consumer edges. A group
    closes as soon as an op outside it reads one of its values, which keeps
    the rewrite legal without any reordering: the fused op takes the place
    of the group's last op. Every group of two or more ops becomes one
    `tg.fused_elementwise` whose results are the group's values that are
    used outside it. A code generator runs it as one loop, so the
    intermediates never touch memory: in the training step these are the
    embedding path (scale, + positions, dropout), its backward (dropout
    gradient, scale) and the gradient sums where a value has several users.

    Before:
    ```mlir
    %0 = tg.dropout_grad %g, %key rate 1.000000e-01 op_id 0 : tensor<4x8x32xf32>
    %1 = tg.scale %0 by 5.65685415 : tensor<4x8x32xf32>
    ```
    After:
    ```mlir
    %1 = tg.fused_elementwise(%g, %key) : (tensor<4x8x32xf32>, tensor<2xi32>) -> tensor<4x8x32xf32> {
    ^bb0(%a: tensor<4x8x32xf32>, %k: tensor<2xi32>):
      %0 = tg.dropout_grad %a, %k rate 1.000000e-01 op_id 0 : tensor<4x8x32xf32>
      %s = tg.scale %0 by 5.65685415 : tensor<4x8x32xf32>
      tg.yield %s : tensor<4x8x32xf32>
    }
    ```
  }];
  let statistics = [
    Statistic<"numGroups", "elementwise-groups", "elementwise groups fused">,
    Statistic<"numOps", "elementwise-ops", "ops moved into those groups">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgMixedPrecision : Pass<"tg-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "bf16 GEMM operands with f32 accumulation (mixed precision)";
  let description = [{
    Gives every GEMM (`tg.matmul`, `tg.linear`, `tg.output_loss`) bf16
    operands: each f32 operand is replaced by its `tg.to_bf16` copy. With
    `attention` (the default), `tg.attention` and `tg.attention_grad` get
    bf16 queries, keys and values too, the same copies for both, except an
    incremental decoder's attention over a cache variable. The
    products accumulate in f32 and the results stay f32, as do the
    parameters, Adam's moments, LayerNorm, softmax, the loss and every
    reduction: only the GEMMs' inputs lose mantissa bits (8 of 24), which
    is what lets the CPU's bf16 dot products (vdpbf16ps: twice the f32 FMA
    rate on Zen 4) and a GPU's tensor cores run them.

    One copy per value: a weight is rounded once per step, right after its
    `tg.load`, however many GEMMs (forward and backward) read it; an
    activation right after the op that makes it, so the backward's
    weight-gradient GEMM reads the same bf16 copy and the f32 original dies
    as soon as nothing else needs it (the memory planner then keeps half the
    bytes for the backward). A `tg.reshape` between a value and its GEMM is
    moved to the bf16 side, so a value seen in two shapes is still rounded
    once. A `tg.relu_grad` whose relu output has a copy reads the copy (the
    signs are the same), so the f32 output is not kept for the backward.
    Run after step fusion, on every function (the step, `@predict` and the
    incremental decoder).

    Before:
    ```mlir
    %w = tg.load @w : tensor<16x64xf32>
    %h = tg.linear %x, %w, %b relu : tensor<4x16xf32>, tensor<16x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
    %dx = tg.matmul %dh, %w transpose_rhs : tensor<4x64xf32>, tensor<16x64xf32> -> tensor<4x16xf32>
    ```
    After:
    ```mlir
    %w = tg.load @w : tensor<16x64xf32>
    %wb = tg.to_bf16 %w : tensor<16x64xf32>
    %xb = tg.to_bf16 %x : tensor<4x16xf32>
    %h = tg.linear %xb, %wb, %b relu : tensor<4x16xbf16>, tensor<16x64xbf16>, tensor<64xf32> -> tensor<4x64xf32>
    %dhb = tg.to_bf16 %dh : tensor<4x64xf32>
    %dx = tg.matmul %dhb, %wb transpose_rhs : tensor<4x64xbf16>, tensor<16x64xbf16> -> tensor<4x16xf32>
    ```
  }];
  let statistics = [
    Statistic<"numGemms", "gemms-converted", "GEMMs given bf16 operands">,
    Statistic<"numCopies", "copies-made", "tg.to_bf16 copies made">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
    Option<"attention", "attention", "bool", /*default=*/"true",
           "also round attention's queries, keys and values">,
    Option<"attentionProducts", "attention-products", "bool",
           /*default=*/"true",
           "with attention, mark the attention ops bf16_products: their "
           "value and gradient products in bf16 too">,
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

def TgFoldBf16Roundings : Pass<"tg-fold-bf16-roundings", "::mlir::ModuleOp"> {
  let summary = "GEMMs, attention ops, transposes, elementwise loops and residual LayerNorms write the bf16 copies of their results";
  let description = [{
    After `tg-mixed-precision`, a GEMM's f32 result is often read by nothing
    but its `tg.to_bf16` copy: a query, key or value projection (read by
    attention and its gradient), a feed-forward layer's first linear (read
    by the second GEMM, the weight gradient and `tg.relu_grad`). For a
    `tg.matmul` or `tg.linear` on bf16 operands whose one use is such a
    copy, the GEMM's result becomes bf16 and the copy goes: the kernels
    round each tile as they write it (a oneDNN primitive's epilogue), so the
    f32 result is never stored nor read back. The values are the same: the
    f32 sums rounded once, as `tg.to_bf16` rounds them.
    Likewise a `tg.attention_grad` with `bf16_products` whose three
    gradients are each read only by their copies (for the projections'
    gradient GEMMs) gets bf16 gradients, and a `tg.attention` with
    `bf16_products` whose output only its copy (for the output projection)
    and its gradients read gets a bf16 output (its backward never reads
    it): the kernels round the f32 values once as they write them.
    An elementwise loop (a `tg.fused_elementwise` group, or a single
    elementwise op made a group of its own) whose result has a copy takes
    the copy into its body and yields the rounded value as one more bf16
    result, or instead of the f32 one where only the copy read it; a
    `tg.residual_layer_norm` whose result has a copy writes it as its
    `rounded` result, beside the f32 one.
    And a `tg.transpose` of f32 values whose result only its copy reads
    (a head split before attention's bf16 products, a head merge before the
    output projection) writes bf16: one pass over the values instead of two.
    Part of the compile pipeline, for both targets: the CPU kernels round
    as they write (oneDNN's epilogues, the attention tiles), and the CUDA
    ones let cuBLAS write the bf16 results or round in their row kernels.

    Before:
    ```mlir
    %q = tg.matmul %xb, %wb : tensor<4x8x32xbf16>, tensor<32x32xbf16> -> tensor<4x8x32xf32>
    %qb = tg.to_bf16 %q : tensor<4x8x32xf32>
    ```
    After:
    ```mlir
    %q = tg.matmul %xb, %wb : tensor<4x8x32xbf16>, tensor<32x32xbf16> -> tensor<4x8x32xbf16>
    ```
  }];
  let statistics = [
    Statistic<"numFolded", "roundings-folded",
              "tg.to_bf16 copies folded into their GEMM, attention op, "
              "transpose, elementwise loop or residual LayerNorm">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgPairGemms : Pass<"tg-pair-gemms", "::mlir::ModuleOp"> {
  let summary = "marks pairs of small independent f32 GEMMs that run at once, one thread each";
  let description = [{
    A small product split over two threads spends much of its time packing
    and waiting at the library's barriers; two independent ones, each on its
    own thread, do not. The backward of every projection is such a pair
    (`dX = dY W^T` and `dW = X^T dY` read the same `dY`), and the query and
    key projections of the forward are another. Measured with cold operands
    (AMD EPYC Zen 3, AVX2, 2 threads): a 1024x128 by 128x128 projection's two
    gradient products take 0.63 ms one after the other and 0.50 ms side by
    side; at 1024x128x512 12% less; from 2048x256x256 (2^27 multiply-adds)
    up there is no gain. In the 2-layer bench step (38 pairs) the gain is
    smaller: its GEMMs' time 2-7% less, the step about 2% (docs/passes.md).

    For each `tg.matmul` on f32 values whose next computing op (skipping
    `tg.reshape`, `tg.load`, `tg.constant`) is another that does not read
    its result, both with between `min-macs` and `max-macs` multiply-adds and
    the smaller at least half the larger, the first gets the unit attribute
    `tg.beside_next`. `tg-plan-memory` then gives the pair one instant:
    neither's result shares bytes with what the other reads or writes. The
    CPU program runs the pair in one OpenMP region of two threads when it
    has exactly two (the libraries run one thread each inside it), one after
    the other otherwise; the interpreter and the CUDA target ignore the
    attribute. Part of the CPU compile pipeline, after every transformation
    and before memory planning.

    ```mlir
    %dx = tg.matmul %dy, %w transpose_rhs {tg.beside_next} : tensor<32x32x128xf32>, tensor<128x128xf32> -> tensor<32x32x128xf32>
    %dw = tg.matmul %x2, %dy2 transpose_lhs : tensor<1024x128xf32>, tensor<1024x128xf32> -> tensor<128x128xf32>
    ```
  }];
  let statistics = [
    Statistic<"numPairs", "pairs", "pairs of GEMMs marked to run at once">,
  ];
  let options = [
    Option<"minMacs", "min-macs", "int64_t", /*default=*/"int64_t{1} << 20",
           "fewest multiply-adds of a paired product (smaller ones cost less "
           "than waking a second thread)">,
    Option<"maxMacs", "max-macs", "int64_t", /*default=*/"int64_t{1} << 26",
           "most multiply-adds of a paired product (larger ones run as fast "
           "on two threads)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgPlanMemory : Pass<"tg-plan-memory", "::mlir::ModuleOp"> {
  let summary = "gives every intermediate of the step a static arena offset";
  let description = [{
    Liveness over the step function's single block (a value lives from its
    definition to its last use, a use inside a fused group counting at the
    group), then placement in one arena: a reshape aliases its input; an
    elementwise op or group writes over an operand of its type that dies
    there; the gradients Adam reads get a region of their own at the end;
    everything else is placed greedily, largest first, at the lowest offset
    no overlapping lifetime occupies (64-byte aligned). The two ops of a
    `tg-pair-gemms` pair (`tg.beside_next`) count as one instant: what
    either reads lives until the second, what either makes from the first.
    Variables, arguments and constants stay outside the arena.

    Each op gets `tg.arena_offsets` (one per result, -1 outside the arena)
    and the function gets `tg.memory`: bytes of weights, optimizer state,
    gradients, saved activations, scratch, inputs, the arena, and the arena
    without reuse. `tgc --memory-report` prints them before anything runs;
    the C++ emitter reads the offsets.

    ```mlir
    %0 = tg.matmul %x, %w {tg.arena_offsets = array<i64: 0>} : ...
    %1 = tg.reshape %0 {tg.arena_offsets = array<i64: 0>} : ...
    func.func @train_step(...) attributes {tg.memory = {arena = 4096 : i64, ...}}
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"train_step\"",
           "the function to plan; empty: every function of the module">,
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the figures as a remark">,
  ];
}

#endif // TGC_PASSES_TD
