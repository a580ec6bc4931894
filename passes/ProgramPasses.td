//===- ProgramPasses.td - the passes before the emitters --*- tablegen -*-===//
//
// Precision, pairing and memory: what the emitters read. Included by
// Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_PROGRAM_PASSES_TD
#define TGC_PASSES_PROGRAM_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    reduction's result: only the GEMMs' inputs (and the sums below) lose
    mantissa bits (8 of 24), which is what lets the CPU's bf16 dot
    products (vdpbf16ps: twice the f32 FMA rate on Zen 4) and a GPU's
    tensor cores run them.

    One copy per value: a weight is rounded once per step, right after its
    `tg.load`, however many GEMMs (forward and backward) read it; an
    activation right after the op that makes it, so the backward's
    weight-gradient GEMM reads the same bf16 copy and the f32 original dies
    as soon as nothing else needs it (the memory planner then keeps half the
    bytes for the backward). A `tg.reshape` between a value and its GEMM is
    moved to the bf16 side, so a value seen in two shapes is still rounded
    once. A `tg.relu_grad` whose relu output has a copy reads the copy (the
    signs are the same), so the f32 output is not kept for the backward.
    A bias gradient, a `tg.reduce_sum` over every dimension but the last of
    a value that has a copy, reads the copy (it is the product of ones with
    what the weight gradient's GEMM reads; PyTorch's autocast sums the same
    bf16 gradient); its sum stays f32, accumulated in double. A
    `tg.linear` whose result is read only through its copy (a feed-forward
    layer's first linear) reads a bf16 copy of its bias too, as autocast's
    linear does: its result is rounded anyway, and a GPU's GEMM can then
    add the bias in its epilogue as it writes the bf16 result (cuBLASLt's
    bias has the result's type). The widened bias is added to the f32 sums.
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
    Last, a GEMM result that an elementwise loop only masks with a
    `tg.relu_grad` whose result it only rounds (a feed-forward layer's
    gradient before its ReLU) is written rounded and widened as the loop
    loads it: the mask picks each value or 0, so rounding before it gives
    the same bits as after, and the largest gradient of the backward is
    never stored in f32.
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
    Statistic<"numMasked", "masked-gemm-results",
              "GEMM results written rounded for a ReLU gradient's mask">,
  ];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit the statistics as a remark">,
  ];
}

def TgRecomputeWeightCopies : Pass<"tg-recompute-weight-copies", "::mlir::ModuleOp"> {
  let summary = "the backward rounds a weight again instead of keeping its forward bf16 copy";
  let description = [{
    After `tg-mixed-precision` a weight is rounded once a step, right after
    its `tg.load`, and its bf16 copy is read by the forward's GEMM and by
    the backward's (`dX = dY W^T`): the copy lives from the start of the
    forward to the end of the backward, a saved activation as large as half
    the weights. For each `tg.to_bf16` of a `tg.load` read both up to the
    op that computes the function's first result (the loss: the forward)
    and after it (the backward), this pass makes a second copy right before
    the first backward reader and gives it the backward's reads. The first
    copy dies after the forward, and each second one lives from its rounding
    to its last GEMM. The bytes the weights' copies keep through the
    backward go, for one more pass over the f32 weights a step. GPT-2 small
    at 4 x 256 tokens (AMD EPYC Zen 4, 2 threads): the planned peak 2874 ->
    2712 MiB, the measured peak RSS 2924 -> 2765 MiB (-5.5%), the step
    2223 -> 2265 ms (+1.9%). The values are the same: the weights do not
    change within a step, and the losses are equal to the last digit.

    Off by default (speed first): `tgc --recompute-weight-copies` (the
    compile pipeline's `recompute-weight-copies`) for a run that is short
    of memory. Last before memory planning: CSE would merge the copies
    again.
  }];
  let statistics = [
    Statistic<"numRecomputed", "copies-recomputed",
              "weights' bf16 copies made again for the backward">,
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

    For each `tg.matmul` or `tg.matmul_add` on f32 values whose next
    computing op (skipping `tg.reshape`, `tg.load`, `tg.constant`) is
    another of either kind that does not read its result, both with between `min-macs` and `max-macs` multiply-adds and
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

#endif // TGC_PASSES_PROGRAM_PASSES_TD
