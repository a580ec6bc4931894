//===- StepFusionPasses.td - fusion of the training step ---*- tablegen -*-===//
//
// Fusion of the training step after autodiff: the output projection with
// its loss, GEMM epilogues, elementwise groups. Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_STEP_FUSION_PASSES_TD
#define TGC_PASSES_STEP_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    is. `chunk-rows=0` turns it off (the pipelines give 1024 rows a chunk
    on the CPU and 4096 on CUDA).

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
  let summary = "folds a bias add and its activation into the producing GEMM (tg.linear), a bias gradient into its weight gradient's (tg.weight_bias_grad)";
  let description = [{
    After autodiff, `add(matmul(x, W), broadcast(b))` with a rank-2 `W`
    and `b` broadcast along the last dimension becomes `tg.linear x, W, b`,
    and an activation reading the sum folds in as well: `tg.relu`,
    `tg.gelu`, `tg.gelu_tanh`, `tg.tanh`, `tg.sigmoid`, or SiLU's
    `x * sigmoid(x)`. The bias add and the activation then run in the
    GEMM's epilogue (oneDNN post-ops or a loop over cached row blocks on
    the CPU, cuBLASLt's epilogues or one kernel on the GPU) instead of as
    more passes over the [rows, N] activation. A matmul with another use
    stays as it is. Where the sum has other uses than the activation (the
    backward of GELU and SiLU reads it; ReLU's, tanh's and sigmoid's read
    the output), the fused op also writes it, as its `pre_activation`
    result. It runs after autodiff because `tg.linear` has no gradient rule.
    On the backward's side, a bias gradient (`tg.reduce_sum` over every
    dimension but the last) and the weight gradient's GEMM reading the same
    gradient (`tg.matmul %x, %dy transpose_lhs` on [R, K] and [R, N]
    operands, `%dy` the summed value or its reshape) become one
    `tg.weight_bias_grad`, so that a GPU's GEMM adds up the bias gradient as
    it reads `%dy` (cuBLASLt's BGRADA epilogue).

    Before:
    ```mlir
    %0 = tg.matmul %x, %w : tensor<4x8x32xf32>, tensor<32x64xf32> -> tensor<4x8x64xf32>
    %1 = tg.broadcast %b dims [2] : tensor<64xf32> -> tensor<4x8x64xf32>
    %2 = tg.add %0, %1 : tensor<4x8x64xf32>
    %3 = tg.gelu %2 : tensor<4x8x64xf32>
    %4 = tg.gelu_grad %dy, %2 : tensor<4x8x64xf32>
    ```
    After:
    ```mlir
    %3, %2 = tg.linear %x, %w, %b gelu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>, tensor<4x8x64xf32>
    %4 = tg.gelu_grad %dy, %2 : tensor<4x8x64xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "epilogues-fused", "bias adds folded into a GEMM">,
    Statistic<"numActivated", "activations-fused", "of which with an activation">,
    Statistic<"numKept", "pre-activations-kept", "of which also writing the activation's input">,
    Statistic<"numBiasGradients", "bias-gradients-fused", "bias gradients made by their weight gradient's GEMM">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgFuseMatmulAdd : Pass<"tg-fuse-matmul-add", "::mlir::ModuleOp"> {
  let summary = "adds a summand to a product in the GEMM that makes it (tg.matmul_add)";
  let description = [{
    After autodiff, `add(matmul(a, b), x)` (either order) where the product
    has no other reader becomes `tg.matmul_add a, b, x`: the GEMM adds its
    sums to `x` as it writes them (BLAS's `beta = 1`) instead of writing
    the product for an add to read back beside `x`. The backward's gradient
    sums are such adds: the input of the attention's three projections gets
    `dq Wq^T + dk Wk^T + dv Wv^T` plus the residual path's gradient, three
    adds a layer, and the encoder's output one product from every
    cross-attention's keys and values; in a pre-LN model the forward's
    residual adds after the output projections are too. Where both operands
    are such products the later one takes the other as its summand, so a
    chain of sums becomes a chain of GEMMs, each adding into the last one's
    bytes (`tg-plan-memory` puts a sum in its summand's bytes where the
    summand dies there). The fused op goes where the product was when the
    summand is ready by then, so `tg-pair-gemms` still finds the backward's
    pairs, and where the add was otherwise. Each element is rounded once
    more, as the add did: the same values, up to the summation order a BLAS
    library may choose for `beta = 1`. Runs after `tg-fuse-matmul-epilogue`
    (a bias add becomes `tg.linear`) and before `tg-fuse-elementwise`
    (which would put the adds in loops); `tg.matmul_add` has no gradient
    rule.

    Before:
    ```mlir
    %0 = tg.matmul %dy, %w transpose_rhs : tensor<4x8x64xf32>, tensor<32x64xf32> -> tensor<4x8x32xf32>
    %1 = tg.add %residual, %0 : tensor<4x8x32xf32>
    ```
    After:
    ```mlir
    %1 = tg.matmul_add %dy, %w, %residual transpose_rhs : tensor<4x8x64xf32>, tensor<32x64xf32>, tensor<4x8x32xf32> -> tensor<4x8x32xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "sums-fused", "adds folded into the GEMM of one summand">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgFuseEmbeddingGradAdd
    : Pass<"tg-fuse-embedding-grad-add", "::mlir::ModuleOp"> {
  let summary = "adds a sum's other term in the scatter of an embedding gradient";
  let description = [{
    After autodiff, `add(tg.embedding_grad(g, ids), x)` (either order)
    where the scatter has no other reader becomes `tg.embedding_grad g[ids]
    plus x`: the gradient rows are added into `x` instead of into a zeroed
    `[V, D]` table that the add then reads back beside `x`. A table shared
    by the embeddings and the output projection gets such a sum: its
    gradient is the output projection's (from the loss) plus one scatter
    per embedding. In GPT-2's 124M model that was a 154 MB zero fill and an
    add of two 154 MB tables each step; now the scatter touches only the
    rows the batch names (`tg-plan-memory` puts the sum in `x`'s bytes
    where `x` dies there). Of two scatters the later takes the earlier as
    its addend, so the Transformer's three terms become two scatters into
    the output projection's gradient. The fused op goes where the add was.
    The values: `x` plus each gradient row in order, where the add summed
    the rows first; the interpreter adds the summed rows to `x`. Runs
    before `tg-fuse-elementwise`, which would put the adds in loops.

    Before:
    ```mlir
    %e = tg.embedding_grad %dx[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
    %sum = tg.add %dout, %e : tensor<100x16xf32>
    ```
    After:
    ```mlir
    %sum = tg.embedding_grad %dx[%ids] plus %dout : tensor<2x7x16xf32>, tensor<2x7xi32>, tensor<100x16xf32> -> tensor<100x16xf32>
    ```
  }];
  let statistics = [
    Statistic<"numFused", "sums-fused", "adds folded into an embedding gradient's scatter">,
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

#endif // TGC_PASSES_STEP_FUSION_PASSES_TD
