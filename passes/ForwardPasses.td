//===- ForwardPasses.td - tgc's passes on the forward module -*- tablegen -*-===//
//
// Fusion of the forward module before autodiff (so each fused op gets its
// fused backward), @predict and its incremental decoder. Included by
// Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_FORWARD_PASSES_TD
#define TGC_PASSES_FORWARD_PASSES_TD

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
    The match is by meaning: a mask written `broadcast(m, dims [0, 3])` or
    reshaped to `[B, 1, 1, Sk]` and broadcast implicitly, a causal mask
    likewise over dims 2 and 3, and a scale written as `tg.scale`, a
    multiplication or a division by a constant, on the scores or on q and k,
    all fuse. One more additive term that is `[B, H, Sq, Sk]` broadcast from
    at most `[B or 1, H or 1, Sq, Sk]` (a relative-position or ALiBi bias, a
    user's own `[S, S]` mask) becomes the fused op's `bias`, read
    unbroadcast. A chain whose intermediate has another use (e.g. the
    probabilities are also returned) is left alone, as is one with a second
    bias, a term of another shape or shapes that do not fit; when the chain is
    recognizably attention (a softmax over the last axis feeding `P V`), a
    remark at that line says why (`remarks=false` silences them).

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
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "a remark at each recognizable attention left unfused, saying why">,
  ];
}

def TgFuseResidualLayerNorm : Pass<"tg-fuse-residual-layernorm", "::mlir::ModuleOp"> {
  let summary = "rewrites layer_norm or rms_norm of x + dropout(y) into tg.residual_layer_norm";
  let description = [{
    The wrapper of every sublayer, `Norm(x + Dropout(y))` with `Norm` a
    `tg.layer_norm` or a `tg.rms_norm`, becomes one `tg.residual_layer_norm`
    of that kind (`layer` or `rms`) that makes one pass over memory and
    saves only the per-row statistics for its backward (not the sum or the
    normalized tensor); its backward rebuilds the normalized rows from the
    result, `(y - beta) / gamma` (RMSNorm: `y / gamma`). Without a dropout
    (rate 0) the sum is fused with rate 0 and a constant key. A sum that is
    also used after the norm (pre-LN: the next residual adds to it) is
    written by the fused op too (`sum`), and its gradient joins the
    backward's (`sum_grad`). The dropout having another use, or the sum one
    before the norm, keeps the chain unfused, and so does a gamma variable
    that starts at zero (`init(zeros)`): dividing by it would lose the rows.
    Each such block gets a remark at the norm's line saying why
    (`remarks=false` silences them).

    Before:
    ```mlir
    %d = tg.dropout %y, %key rate 1.000000e-01 op_id 2 : tensor<2x7x16xf32>
    %h = tg.add %x, %d : tensor<2x7x16xf32>
    %z = tg.layer_norm %h, %gamma, %beta eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    %d2 = tg.dropout %y2, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
    %h2 = tg.add %z, %d2 : tensor<2x7x16xf32>
    %n = tg.rms_norm %h2, %g2 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    %o = tg.add %h2, %n : tensor<2x7x16xf32>
    ```
    After:
    ```mlir
    %z, %mean, %rstd = tg.residual_layer_norm %x, %y, %gamma, %beta, %key
        rate 1.000000e-01 op_id 2 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    %n, %rstd2, %h2 = tg.residual_layer_norm rms %z, %y2, %g2, %key
        rate 1.000000e-01 op_id 3 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
        sum tensor<2x7x16xf32>
    %o = tg.add %h2, %n : tensor<2x7x16xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "norms-fused",
              "residual + dropout + norm blocks fused">,
    Statistic<"numRms", "rms-norms", "of which RMSNorm">,
    Statistic<"numKeptSum", "kept-sum",
              "of which keeping the sum for a later use (pre-LN)">,
    Statistic<"numRejected", "rejected-extra-use",
              "blocks left unfused because the dropout has another use or "
              "the sum is used before the norm">,
    Statistic<"numZeroGamma", "rejected-zero-gamma",
              "blocks left unfused because gamma starts at zero">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "a remark at each residual + norm block left unfused, saying why">,
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

#endif // TGC_PASSES_FORWARD_PASSES_TD
