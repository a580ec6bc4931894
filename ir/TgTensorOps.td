//===- TgTensorOps.td - tensor ops the model is built from -----*- tablegen -*-===//
//
// Embeddings, matmul, elementwise ops, shape ops and reductions, slices,
// concatenation and gathers, with the gradient ops autodiff emits for them.
// Verifiers live in TgOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TG_TENSOR_OPS_TD
#define TG_TENSOR_OPS_TD

include "ir/TgBase.td"

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def TG_EmbeddingOp : TG_Op<"embedding", [Pure]> {
  let summary = "gathers rows of an embedding table by token id";
  let description = [{
    `result[i..., :] = table[ids[i...], :]`. The table is `[V, D]`; the result
    has the ids' shape followed by `D`. Ids outside `[0, V)` are a run-time
    error of the data loader, not of the graph: the loader checks the
    step's token ids against the loss's vocabulary, and tgc refuses a step
    whose token ids index a table of fewer rows.

    ```mlir
    %x = tg.embedding %table[%ids] : tensor<100x16xf32>, tensor<2x7xi32> -> tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$table, TG_IndexTensor:$ids);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` type($table) `,` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_EmbeddingGradOp : TG_Op<"embedding_grad", [Pure]> {
  let summary = "scatter-adds output gradients into the embedding table's gradient";
  let description = [{
    The gradient of `tg.embedding` with respect to its table: a zero `[V, D]`
    tensor, or with `plus` the `addend` (of the result's type), into which
    row `grad[i..., :]` is added at row `ids[i...]`. Repeated ids accumulate.
    `tg-fuse-embedding-grad-add` makes the `plus` form from the sum of a
    shared table's gradients, so that the scatter adds into the other terms'
    sum instead of a zeroed table that an add then reads back.

    ```mlir
    %dtable = tg.embedding_grad %dx[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
    %dshared = tg.embedding_grad %dx[%ids] plus %dout : tensor<2x7x16xf32>, tensor<2x7xi32>, tensor<100x16xf32> -> tensor<100x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_IndexTensor:$ids,
                       Optional<TG_FloatTensor>:$addend);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `[` $ids `]` (`plus` $addend^)? attr-dict `:` type($grad) `,`
    type($ids) (`,` type($addend)^)? `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$grad,
                   "::mlir::Value":$ids), [{
      build($_builder, $_state, result, grad, ids, ::mlir::Value());
    }]>,
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def TG_MatmulOp : TG_Op<"matmul", [Pure, TG_GemmOperands, TG_GemmResult]> {
  let summary = "(batched) matrix product with optional transposes";
  let description = [{
    `result[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n]`, where `A` is
    `lhs` or, with `transpose_lhs`, `lhs` with its last two dimensions
    swapped, and likewise `B`. Both operands have rank >= 2. `rhs` either has
    the same batch dimensions as `lhs` or is a plain matrix (rank 2) shared by
    every batch, as a projection weight is. The operands are both `f32` or,
    after `tg-mixed-precision`, both `bf16`; the result is `f32` (bf16
    products accumulate in f32) or, with bf16 operands, `bf16`: the f32 sums
    rounded as they are written (`tg-fold-bf16-roundings`).

    ```mlir
    // x W for x : [batch, seq, d] and W : [d, d_ff]
    %h = tg.matmul %x, %w1 : tensor<2x7x16xf32>, tensor<16x64xf32> -> tensor<2x7x64xf32>
    // Q K^T per head
    %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32> -> tensor<2x4x7x9xf32>
    ```
  }];
  let arguments = (ins TG_GemmOperand:$lhs, TG_GemmOperand:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs TG_GemmOperand:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_ToBf16Op : TG_Op<"to_bf16", [Pure,
    TypesMatchWith<"result is input with bf16 elements", "input", "result",
                   "::tgc::tg::withBf16Elements($_self)">]> {
  let summary = "rounds f32 to bf16 (nearest, ties to even)";
  let description = [{
    The bf16 copy of a GEMM operand that `tg-mixed-precision` makes: the
    upper 16 bits of each f32 after rounding to nearest, ties to even (NaN
    stays NaN). A weight is rounded once per step, right after its
    `tg.load`, however many GEMMs read it; an activation right after the op
    that makes it, so the backward's GEMMs read the same (half-size) copy.

    ```mlir
    %wb = tg.to_bf16 %w : tensor<16x64xf32>
    %h = tg.matmul %xb, %wb : tensor<2x7x16xbf16>, tensor<16x64xbf16> -> tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input);
  let results = (outs TG_Bf16Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def TG_AddOp : TG_BinaryOp<"add", "sum", [Commutative]> {
  let description = [{
    ```mlir
    %z = tg.add %x, %y : tensor<2x7x16xf32>
    ```
  }];
}
def TG_SubOp : TG_BinaryOp<"sub", "difference (lhs - rhs)"> {
  let description = [{
    ```mlir
    %z = tg.sub %x, %y : tensor<2x7x16xf32>
    ```
  }];
}
def TG_MulOp : TG_BinaryOp<"mul", "product", [Commutative]> {
  let description = [{
    ```mlir
    %z = tg.mul %x, %y : tensor<2x7x16xf32>
    ```
  }];
}
def TG_DivOp : TG_BinaryOp<"div", "quotient (lhs / rhs)"> {
  let description = [{
    ```mlir
    %z = tg.div %x, %y : tensor<2x7x16xf32>
    ```
  }];
}

def TG_MaximumOp : TG_BinaryOp<"maximum", "maximum", [Commutative]> {
  let description = [{
    `result = max(lhs, rhs)`; a NaN operand gives NaN. Tied elements share
    the gradient equally (as `torch.maximum`).

    ```mlir
    %z = tg.maximum %x, %y : tensor<2x7x16xf32>
    ```
  }];
}
def TG_MinimumOp : TG_BinaryOp<"minimum", "minimum", [Commutative]> {
  let description = [{
    `result = min(lhs, rhs)`; a NaN operand gives NaN. Tied elements share
    the gradient equally (as `torch.minimum`).

    ```mlir
    %z = tg.minimum %x, %y : tensor<2x7x16xf32>
    ```
  }];
}

def TG_LessOp : TG_CompareOp<"less", "<">;
def TG_LessEqualOp : TG_CompareOp<"less_equal", "<=">;
def TG_GreaterOp : TG_CompareOp<"greater", ">">;
def TG_GreaterEqualOp : TG_CompareOp<"greater_equal", ">=">;
def TG_EqualOp : TG_CompareOp<"equal", "==">;
def TG_NotEqualOp : TG_CompareOp<"not_equal", "!=">;

def TG_WhereOp : TG_Op<"where", [Pure, SameOperandsAndResultType, Elementwise,
                                 TG_ElementwiseLoop]> {
  let summary = "elementwise choice: on_true where the condition is non-zero";
  let description = [{
    `result = condition != 0 ? on_true : on_false`, the condition usually a
    comparison's 0/1 mask. The gradient flows to the chosen operand only;
    the condition gets none.

    ```mlir
    %m = tg.greater %x, %zero : tensor<2x7xf32>
    %y = tg.where %m, %x, %leak : tensor<2x7xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$condition, TG_FloatTensor:$on_true,
                       TG_FloatTensor:$on_false);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($result)
  }];
}

def TG_PowOp : TG_Op<"pow", [Pure, SameOperandsAndResultType, Elementwise,
                             TG_ElementwiseLoop]> {
  let summary = "raises every element to a constant power";
  let description = [{
    `result = input ^ exponent` (`std::pow`): a negative input with a
    non-integer exponent gives NaN, zero with a negative exponent gives
    infinity, as in PyTorch. The exponent must be finite.

    ```mlir
    %sq = tg.pow %x, 2.0 : tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, F32Attr:$exponent);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$input `,` $exponent attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TG_NegOp : TG_UnaryOp<"neg", "negation"> {
  let description = [{
    ```mlir
    %y = tg.neg %x : tensor<4xf32>
    ```
  }];
}
def TG_ExpOp : TG_UnaryOp<"exp", "exponential"> {
  let description = [{
    ```mlir
    %y = tg.exp %x : tensor<4xf32>
    ```
  }];
}
def TG_LogOp : TG_UnaryOp<"log", "natural logarithm"> {
  let description = [{
    ```mlir
    %y = tg.log %x : tensor<4xf32>
    ```
  }];
}
def TG_SqrtOp : TG_UnaryOp<"sqrt", "square root"> {
  let description = [{
    ```mlir
    %y = tg.sqrt %x : tensor<4xf32>
    ```
  }];
}
def TG_RsqrtOp : TG_UnaryOp<"rsqrt", "reciprocal square root"> {
  let description = [{
    ```mlir
    %y = tg.rsqrt %x : tensor<4xf32>
    ```
  }];
}
def TG_TanhOp : TG_UnaryOp<"tanh", "hyperbolic tangent"> {
  let description = [{
    `result = tanh(input)`, in (-1, 1): the gate of GELU's tanh form and of
    recurrent cells. Its gradient is `dy * (1 - y^2)`, written with the
    result `y`, so the input need not be kept for the backward.

    ```mlir
    %y = tg.tanh %x : tensor<4xf32>
    ```
  }];
}
def TG_SigmoidOp : TG_UnaryOp<"sigmoid", "logistic sigmoid 1 / (1 + exp(-x))"> {
  let description = [{
    In (0, 1), computed without overflow for either sign of `x`. Its
    gradient is `dy * y * (1 - y)`, from the result. `x * sigmoid(x)` is
    SiLU (the DSL's `silu`).

    ```mlir
    %y = tg.sigmoid %x : tensor<4xf32>
    ```
  }];
}
def TG_GeluOp : TG_UnaryOp<"gelu", "GELU, x * Phi(x), the exact (erf) form"> {
  let description = [{
    `result = 0.5 x (1 + erf(x / sqrt(2)))`: x times the standard normal
    distribution function, the FFN activation of BERT and GPT-2. Its
    gradient is `tg.gelu_grad` of the input.

    ```mlir
    %y = tg.gelu %x : tensor<2x7x64xf32>
    ```
  }];
}
def TG_GeluTanhOp : TG_UnaryOp<"gelu_tanh", "GELU, the tanh approximation"> {
  let description = [{
    `result = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`, GPT-2's
    original form (PyTorch's `gelu(approximate="tanh")`). Its gradient is
    `tg.gelu_tanh_grad` of the input.

    ```mlir
    %y = tg.gelu_tanh %x : tensor<2x7x64xf32>
    ```
  }];
}
def TG_AbsOp : TG_UnaryOp<"abs", "absolute value |x|"> {
  let description = [{
    Its gradient is `dy * sign(x)`, 0 at 0 (as PyTorch's).

    ```mlir
    %y = tg.abs %x : tensor<4xf32>
    ```
  }];
}
def TG_ReluOp : TG_UnaryOp<"relu", "max(0, x)"> {
  let description = [{
    The FFN's non-linearity. `relu(NaN)` is 0, as in oneDNN's ReLU (which
    `tg.linear` applies on a CPU).

    ```mlir
    %y = tg.relu %x : tensor<2x7x64xf32>
    ```
  }];
}

def TG_ScaleOp : TG_Op<"scale", [Pure, SameOperandsAndResultType, Elementwise,
                                 TG_ElementwiseLoop]> {
  let summary = "multiplies every element by a constant";
  let description = [{
    `result = factor * input`, e.g. the `1/sqrt(d_k)` of attention or the
    `sqrt(d_model)` of the embeddings. The factor must be finite.

    ```mlir
    %s = tg.scale %scores by 0.353553385 : tensor<2x4x7x7xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, F32Attr:$factor);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TG_ReluGradOp : TG_Op<"relu_grad", [Pure, Elementwise, TG_ElementwiseLoop,
    TypesMatchWith<"the result is grad's shape in f32", "grad", "result",
                   "::tgc::tg::withF32Elements($_self)">,
    AllShapesMatch<["grad", "input"]>]> {
  let summary = "gradient of relu: grad where input > 0, else 0";
  let description = [{
    `result = input > 0 ? grad : 0`, with `input` the relu's input or its
    output: both are positive at the same elements. Autodiff passes the
    output, so the pre-activation need not be kept for the backward and the
    bias add before the relu can fuse into the GEMM (`tg.linear`).
    `input` may be the output's bf16 copy (`tg-mixed-precision`): rounding
    to bf16 keeps every sign but of outputs below bf16's smallest subnormal
    (about 4.6e-41, which round to 0: their gradient, the interpreter's
    too, is dropped), so the result is the same elsewhere and the f32 output
    need not be kept for the backward. Its type is then spelled out.
    `grad` may be bf16 (`tg-fold-bf16-roundings`, where the result is only
    rounded: masking commutes with the rounding, so the GEMM that makes
    `grad` can write it rounded); the result is f32, its widened values.

    ```mlir
    %dx = tg.relu_grad %dy, %x : tensor<2x7x64xf32>
    %dx2 = tg.relu_grad %dy, %xb : tensor<2x7x64xf32>, tensor<2x7x64xbf16>
    %dx3 = tg.relu_grad %dyb, %xb : tensor<2x7x64xbf16>
    ```
  }];
  let arguments = (ins AnyTypeOf<[TG_FloatTensor, TG_Bf16Tensor]>:$grad,
                       AnyTypeOf<[TG_FloatTensor, TG_Bf16Tensor]>:$input);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` type($grad) ``
    custom<TypeUnlessSame>(type($input), ref(type($grad)))
  }];
}

// The gradient of an activation from its input: grad times the derivative
// at input, one formula (runtime/kernels/Elementwise.h).
class TG_ActivationGradOp<string mnemonic, string of>
    : TG_Op<mnemonic, [Pure, SameOperandsAndResultType, Elementwise,
                       TG_ElementwiseLoop]> {
  let summary = "gradient of " # of # ": grad times its derivative at input";
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$input);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}
def TG_GeluGradOp : TG_ActivationGradOp<"gelu_grad", "tg.gelu"> {
  let description = [{
    `result = grad * (Phi(input) + input * phi(input))`, Phi and phi the
    standard normal distribution and density: what tg-autodiff emits for
    `tg.gelu`, in one pass.

    ```mlir
    %dx = tg.gelu_grad %dy, %x : tensor<2x7x64xf32>
    ```
  }];
}
def TG_GeluTanhGradOp : TG_ActivationGradOp<"gelu_tanh_grad", "tg.gelu_tanh"> {
  let description = [{
    With `t = tanh(k (x + c x^3))`, `k = sqrt(2 / pi)`, `c = 0.044715`:
    `result = grad * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2))`.

    ```mlir
    %dx = tg.gelu_tanh_grad %dy, %x : tensor<2x7x64xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Shape ops and reductions
//===----------------------------------------------------------------------===//

def TG_BroadcastOp : TG_Op<"broadcast", [Pure]> {
  let summary = "replicates a tensor along new or size-1 dimensions";
  let description = [{
    `dims[i]` names the result dimension that operand dimension `i` maps to;
    `dims` is strictly increasing and every operand dimension is 1 or equal to
    its result dimension. Result dimensions not named are replicated.

    ```mlir
    // bias [d] over [batch, seq, d]
    %b3 = tg.broadcast %b dims [2] : tensor<16xf32> -> tensor<2x7x16xf32>
    // padding mask [batch, key] over scores [batch, head, query, key]
    %m4 = tg.broadcast %m dims [0, 3] : tensor<2x7xf32> -> tensor<2x4x7x7xf32>
    ```
  }];
  let arguments = (ins TG_AnyTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs TG_AnyTensor:$result);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TG_StopGradientOp : TG_Op<"stop_gradient", [Pure, SameOperandsAndResultType,
                                                 TG_ResultIsView, TG_BlocksGradient]> {
  let summary = "the input, through which no gradient flows";
  let description = [{
    `result = input`; tg-autodiff passes no gradient to `input` (a target
    held fixed, a straight-through estimator). The result is a view of the
    input's bytes: no code runs.

    ```mlir
    %y = tg.stop_gradient %x : tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def TG_ReshapeOp : TG_Op<"reshape", [Pure, TG_ResultIsView]> {
  let summary = "reinterprets a tensor with another shape of the same size";
  let description = [{
    Row-major reinterpretation; the element count and type are unchanged.

    ```mlir
    %heads = tg.reshape %x : tensor<2x7x16xf32> -> tensor<2x7x4x4xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[TG_AnyTensor, TG_Bf16Tensor]>:$input);
  let results = (outs AnyTypeOf<[TG_AnyTensor, TG_Bf16Tensor]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TG_TransposeOp : TG_Op<"transpose", [Pure]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    `result` dimension `i` is `input` dimension `permutation[i]`. The
    element type is the input's, or bf16 from f32: each value rounded as it
    is written (`tg-fold-bf16-roundings` makes such transposes of the ones
    whose result only a `tg.to_bf16` copy read).

    ```mlir
    // [batch, seq, head, d_k] -> [batch, head, seq, d_k]
    %t = tg.transpose %x permutation [0, 2, 1, 3] : tensor<2x7x4x4xf32> -> tensor<2x4x7x4xf32>
    ```
  }];
  let arguments = (ins TG_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs RankedTensorOf<[F32, I32, BF16]>:$result);
  let assemblyFormat = [{
    $input `permutation` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

class TG_ReduceOp<string mnemonic, string what,
                  Type inputType = TG_FloatTensor>
    : TG_Op<mnemonic, [Pure]> {
  let summary = what # " over the given dimensions";
  let arguments = (ins inputType:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keep_dims);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keep_dims` $keep_dims^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_ReduceSumOp : TG_ReduceOp<"reduce_sum", "sum", TG_GemmOperand> {
  let description = [{
    `dims` is non-empty and strictly increasing. The reduced dimensions are
    dropped from the result, or kept with size 1 under `keep_dims`. The
    input may be bf16 (`tg-mixed-precision` makes a bias gradient read the
    bf16 copy its weight gradient's GEMM reads); the sum is f32 either way,
    accumulated in double by every backend.

    ```mlir
    %db = tg.reduce_sum %dy dims [0, 1] : tensor<2x7x16xf32> -> tensor<16xf32>
    %db2 = tg.reduce_sum %dy2 dims [0, 1] : tensor<2x7x16xbf16> -> tensor<16xf32>
    ```
  }];
}
def TG_ReduceMaxOp : TG_ReduceOp<"reduce_max", "maximum"> {
  let description = [{
    Same dimension rules as `tg.reduce_sum`. A NaN element makes its
    maximum NaN (as `tg.maximum`).

    ```mlir
    %m = tg.reduce_max %s dims [3] keep_dims : tensor<2x4x7x7xf32> -> tensor<2x4x7x1xf32>
    ```
  }];
}
def TG_ReduceMeanOp : TG_ReduceOp<"reduce_mean", "arithmetic mean"> {
  let description = [{
    Same dimension rules as `tg.reduce_sum`.

    ```mlir
    %mu = tg.reduce_mean %x dims [2] : tensor<2x7x16xf32> -> tensor<2x7xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Slices, concatenation and gathers along one dimension
//===----------------------------------------------------------------------===//

def TG_SliceOp : TG_Op<"slice", [Pure]> {
  let summary = "the elements [start, start + size) along one dimension";
  let description = [{
    `result` is `input` restricted to `start .. start + size - 1` along
    dimension `dim`, `size` being the result's size there; every other
    dimension is the input's. The range lies inside the input.

    ```mlir
    // positions 2, 3, 4 of [batch, seq, d]
    %y = tg.slice %x dim 1 start 2 : tensor<2x7x16xf32> -> tensor<2x3x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, I64Attr:$dim, I64Attr:$start);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `start` $start attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_SliceGradOp : TG_Op<"slice_grad", [Pure]> {
  let summary = "the gradient of tg.slice: grad placed in zeros";
  let description = [{
    The gradient of `tg.slice` with respect to its input: zeros of the
    input's shape (the result's) except `start .. start + size - 1` along
    `dim`, which holds `grad`. The same rules as `tg.slice` with the roles
    of the two shapes swapped.

    ```mlir
    %dx = tg.slice_grad %dy dim 1 start 2 : tensor<2x3x16xf32> -> tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, I64Attr:$dim, I64Attr:$start);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `dim` $dim `start` $start attr-dict `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_ConcatOp : TG_Op<"concat", [Pure]> {
  let summary = "joins tensors along one dimension";
  let description = [{
    The operands, in order, one after the other along dimension `dim`:
    they have one rank and the same sizes in every other dimension, and the
    result's size along `dim` is the sum of theirs.

    ```mlir
    %y = tg.concat %a, %b dim 2 : tensor<2x7x16xf32>, tensor<2x7x8xf32> -> tensor<2x7x24xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_FloatTensor>:$inputs, I64Attr:$dim);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_GatherOp : TG_Op<"gather", [Pure]> {
  let summary = "takes entries along one dimension by index (numpy take)";
  let description = [{
    `result[a..., i..., b...] = input[a..., indices[i...], b...]` with `a`
    the dimensions before `dim` and `b` those after: the result's shape is
    `input.shape[:dim] ++ indices.shape ++ input.shape[dim+1:]` (numpy's
    `take`, `tf.gather`). Indices repeat freely. An index outside
    `[0, input.shape[dim])` is a run-time error of the interpreter; the
    compiled kernels write zeros for it and never read outside the input.
    `tg.embedding` is the gather along dimension 0 of a `[V, D]` table.

    ```mlir
    // rows 2 and 0 of a [3, 2] matrix
    %y = tg.gather %x[%rows] dim 0 : tensor<3x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
    // features picked along the last dimension of [batch, seq, d]
    %z = tg.gather %h[%cols] dim 2 : tensor<2x7x16xf32>, tensor<4xi32> -> tensor<2x7x4xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_IndexTensor:$indices,
                       I64Attr:$dim);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` `dim` $dim attr-dict `:` type($input) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_GatherGradOp : TG_Op<"gather_grad", [Pure]> {
  let summary = "scatter-adds a gather's output gradient into zeros";
  let description = [{
    The gradient of `tg.gather` with respect to its input: zeros of the
    input's shape (the result's) into which `grad[a..., i..., b...]` is
    added at `[a..., indices[i...], b...]`. Repeated indices accumulate; an
    index outside the dimension is the interpreter's error and adds nothing
    in the compiled kernels.

    ```mlir
    %dx = tg.gather_grad %dy[%rows] dim 0 : tensor<2x2xf32>, tensor<2xi32> -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_IndexTensor:$indices,
                       I64Attr:$dim);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `[` $indices `]` `dim` $dim attr-dict `:` type($grad) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TG_TENSOR_OPS_TD
