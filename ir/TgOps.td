//===- TgOps.td - the tg dialect's ops -------------------------*- tablegen -*-===//
//
// Sections: state (variables, loads, stores, constants); tensor ops the model
// is written in; their gradients; masks and positions; loss; fused ops;
// post-autodiff fusion; optimizer. Verifiers live in TgStateOps.cpp, TgOps.cpp,
// TgFusedOps.cpp and TgGroupOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TG_OPS_TD
#define TG_OPS_TD

include "ir/TgBase.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// State: variables, constants
//===----------------------------------------------------------------------===//

def TG_VariableOp : TG_Op<"variable", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a module-level tensor: a parameter or optimizer state";
  let description = [{
    Declares a named tensor that lives as long as the program: a trainable
    parameter, an Adam moment or other state. Functions read it with `tg.load`
    and write it with `tg.store` or `tg.adam_update`; the runtime initializes
    it once, as `init` says:

    - `zeros`, `ones`: constant fill (no scale);
    - `normal(s)`: Normal(0, s^2), e.g. s = d_model^-0.5 for the embedding;
    - `uniform(a)`: Uniform(-a, a);
    - `xavier_uniform`: Uniform(-a, a) with a = sqrt(6 / (fan_in + fan_out)),
      fans taken from the last two dimensions (rank >= 2).

    `trainable` marks the parameters that autodiff differentiates. `cache`
    marks decoding state that `tg-derive-decoder` adds (encoder outputs,
    self-attention keys and values): it belongs to one shape, is never
    trained and never checkpointed.

    ```mlir
    tg.variable @encoder.layer0.self_attn.w_q trainable init(xavier_uniform) : tensor<512x512xf32>
    tg.variable @embedding trainable init(normal, 0.0441941738) : tensor<37000x512xf32>
    tg.variable @adam.m.embedding init(zeros) : tensor<37000x512xf32>
    tg.variable @decode.decoder.layer0.self_attn.keys cache init(zeros) : tensor<8x8x64x64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyType>:$type,
                       TG_InitKind:$init,
                       OptionalAttr<F64Attr>:$init_scale,
                       UnitAttr:$trainable,
                       UnitAttr:$cache);
  let assemblyFormat = [{
    $sym_name (`trainable` $trainable^)? (`cache` $cache^)? `init` `(` $init (`,` $init_scale^)? `)`
    attr-dict `:` $type
  }];
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::RankedTensorType":$type,
                   "InitKind":$init, "std::optional<double>":$scale,
                   "bool":$trainable), [{
      build($_builder, $_state, $_builder.getStringAttr(name),
            ::mlir::TypeAttr::get(type),
            InitKindAttr::get($_builder.getContext(), init),
            scale ? $_builder.getF64FloatAttr(*scale) : ::mlir::FloatAttr(),
            trainable ? $_builder.getUnitAttr() : ::mlir::UnitAttr(),
            ::mlir::UnitAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
  let hasVerifier = 1;
}

def TG_LoadOp : TG_Op<"load", [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                               MemoryEffects<[MemRead]>]> {
  let summary = "reads the current value of a variable";
  let description = [{
    Yields the value a `tg.variable` holds at this point of the function. The
    result type must equal the variable's type.

    ```mlir
    %w = tg.load @encoder.layer0.self_attn.w_q : tensor<512x512xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable);
  let results = (outs TG_AnyTensor:$result);
  let assemblyFormat = "$variable attr-dict `:` type($result)";
}

def TG_StoreOp : TG_Op<"store", [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                                 MemoryEffects<[MemWrite]>]> {
  let summary = "overwrites a variable in place";
  let description = [{
    Replaces the value of a `tg.variable`; later `tg.load`s see it. The value's
    type must equal the variable's type.

    ```mlir
    tg.store %new_step, @step : tensor<i32>
    ```
  }];
  let arguments = (ins TG_AnyTensor:$value, FlatSymbolRefAttr:$variable);
  let assemblyFormat = "$value `,` $variable attr-dict `:` type($value)";
}

def TG_StoreSliceOp : TG_Op<"store_slice", [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
                                           MemoryEffects<[MemWrite]>]> {
  let summary = "overwrites positions [index, index + L) of a variable along one axis";
  let description = [{
    Writes `value`, whose shape is the variable's with `L` at `axis`, into
    the variable at positions `index .. index + L - 1` of that axis, in place;
    the rest of the variable keeps its value. `index` is a runtime scalar and
    must leave the slice inside the variable. An incremental decoder appends
    each step's keys and values to its caches with it.

    ```mlir
    tg.store_slice %k, @decode.decoder.layer0.self_attn.keys[%position] axis 2
        : tensor<8x8x1x64xf32>
    ```
  }];
  let arguments = (ins TG_AnyTensor:$value, FlatSymbolRefAttr:$variable,
                       TG_IntScalar:$index, I64Attr:$axis);
  let assemblyFormat = [{
    $value `,` $variable `[` $index `]` `axis` $axis attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

def TG_ConstantOp : TG_Op<"constant", [ConstantLike, Pure,
                                       AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    A tensor whose elements are known at compile time.

    ```mlir
    %one = tg.constant dense<1.0> : tensor<2x3xf32>
    %ids = tg.constant dense<[[5, 6, 0]]> : tensor<1x3xi32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TG_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def TG_EmbeddingOp : TG_Op<"embedding", [Pure]> {
  let summary = "gathers rows of an embedding table by token id";
  let description = [{
    `result[i..., :] = table[ids[i...], :]`. The table is `[V, D]`; the result
    has the ids' shape followed by `D`. Ids outside `[0, V)` are a run-time
    error of the data loader, not of the graph.

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
    tensor into which row `grad[i..., :]` is added at row `ids[i...]`.
    Repeated ids accumulate.

    ```mlir
    %dtable = tg.embedding_grad %dx[%ids] : tensor<2x7x16xf32>, tensor<2x7xi32> -> tensor<100x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_IndexTensor:$ids);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `[` $ids `]` attr-dict `:` type($grad) `,` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def TG_MatmulOp : TG_Op<"matmul", [Pure]> {
  let summary = "(batched) matrix product with optional transposes";
  let description = [{
    `result[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n]`, where `A` is
    `lhs` or, with `transpose_lhs`, `lhs` with its last two dimensions
    swapped, and likewise `B`. Both operands have rank >= 2. `rhs` either has
    the same batch dimensions as `lhs` or is a plain matrix (rank 2) shared by
    every batch, as a projection weight is.

    ```mlir
    // x W for x : [batch, seq, d] and W : [d, d_ff]
    %h = tg.matmul %x, %w1 : tensor<2x7x16xf32>, tensor<16x64xf32> -> tensor<2x7x64xf32>
    // Q K^T per head
    %s = tg.matmul %q, %k transpose_rhs : tensor<2x4x7x8xf32>, tensor<2x4x9x8xf32> -> tensor<2x4x7x9xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
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
def TG_ReluOp : TG_UnaryOp<"relu", "max(0, x)"> {
  let description = [{
    The FFN's non-linearity.

    ```mlir
    %y = tg.relu %x : tensor<2x7x64xf32>
    ```
  }];
}

def TG_ScaleOp : TG_Op<"scale", [Pure, SameOperandsAndResultType, Elementwise]> {
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

def TG_ReluGradOp : TG_Op<"relu_grad", [Pure, SameOperandsAndResultType, Elementwise]> {
  let summary = "gradient of relu: grad where input > 0, else 0";
  let description = [{
    `result = input > 0 ? grad : 0`, with `input` the relu's input or its
    output: both are positive at the same elements. Autodiff passes the
    output, so the pre-activation need not be kept for the backward and the
    bias add before the relu can fuse into the GEMM (`tg.linear`).

    ```mlir
    %dx = tg.relu_grad %dy, %x : tensor<2x7x64xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$input);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
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

def TG_ReshapeOp : TG_Op<"reshape", [Pure]> {
  let summary = "reinterprets a tensor with another shape of the same size";
  let description = [{
    Row-major reinterpretation; the element count and type are unchanged.

    ```mlir
    %heads = tg.reshape %x : tensor<2x7x16xf32> -> tensor<2x7x4x4xf32>
    ```
  }];
  let arguments = (ins TG_AnyTensor:$input);
  let results = (outs TG_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TG_TransposeOp : TG_Op<"transpose", [Pure]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    `result` dimension `i` is `input` dimension `permutation[i]`.

    ```mlir
    // [batch, seq, head, d_k] -> [batch, head, seq, d_k]
    %t = tg.transpose %x permutation [0, 2, 1, 3] : tensor<2x7x4x4xf32> -> tensor<2x4x7x4xf32>
    ```
  }];
  let arguments = (ins TG_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs TG_AnyTensor:$result);
  let assemblyFormat = [{
    $input `permutation` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

class TG_ReduceOp<string mnemonic, string what>
    : TG_Op<mnemonic, [Pure]> {
  let summary = what # " over the given dimensions";
  let arguments = (ins TG_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keep_dims);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keep_dims` $keep_dims^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TG_ReduceSumOp : TG_ReduceOp<"reduce_sum", "sum"> {
  let description = [{
    `dims` is non-empty and strictly increasing. The reduced dimensions are
    dropped from the result, or kept with size 1 under `keep_dims`.

    ```mlir
    %db = tg.reduce_sum %dy dims [0, 1] : tensor<2x7x16xf32> -> tensor<16xf32>
    ```
  }];
}
def TG_ReduceMaxOp : TG_ReduceOp<"reduce_max", "maximum"> {
  let description = [{
    Same dimension rules as `tg.reduce_sum`.

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
// Softmax, LayerNorm, dropout
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

def TG_DropoutOp : TG_Op<"dropout", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "inverted dropout with a counter-based (Philox) mask";
  let description = [{
    Keeps element `i` with probability `1 - rate` and scales kept elements by
    `1 / (1 - rate)`. Whether element `i` is kept is a pure function of
    (`key` = (seed, step), `op_id`, `i`) through Philox4x32-10, so
    `tg.dropout_grad` with the same key and `op_id` regenerates the mask.
    `0 <= rate < 1`; `op_id >= 0` and distinct per dropout site.

    ```mlir
    %y = tg.dropout %x, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_RngKey:$key, F32Attr:$rate,
                       I64Attr:$op_id);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $key `rate` $rate `op_id` $op_id attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def TG_DropoutGradOp : TG_Op<"dropout_grad", [Pure, AllTypesMatch<["grad", "result"]>]> {
  let summary = "gradient of dropout: the regenerated mask times grad";
  let description = [{
    Applies to `grad` the same mask and scale that `tg.dropout` with this key,
    `rate` and `op_id` applied; no mask is stored. Same rules as `tg.dropout`.

    ```mlir
    %dx = tg.dropout_grad %dy, %key rate 1.000000e-01 op_id 3 : tensor<2x7x16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_RngKey:$key, F32Attr:$rate,
                       I64Attr:$op_id);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $key `rate` $rate `op_id` $op_id attr-dict `:` type($grad)
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

    ```mlir
    %loss, %ntok = tg.cross_entropy %logits, %tgt smoothing 1.000000e-01 ignore 0
        : tensor<2x7x100xf32>, tensor<2x7xi32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$logits, TG_IndexTensor:$targets,
                       F32Attr:$smoothing, I32Attr:$ignore_index);
  let results = (outs TG_Scalar:$loss, TG_IntScalar:$tokens);
  let assemblyFormat = [{
    $logits `,` $targets `smoothing` $smoothing `ignore` $ignore_index attr-dict
    `:` type($logits) `,` type($targets)
  }];
  let hasVerifier = 1;
}

def TG_CrossEntropyGradOp : TG_Op<"cross_entropy_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "gradient of the label-smoothed cross-entropy";
  let description = [{
    `d_logits = loss_grad * (softmax(logits) - q) / tokens` at non-ignored
    positions and 0 at ignored ones, for `tg.cross_entropy`'s `loss`.

    ```mlir
    %dlogits = tg.cross_entropy_grad %dloss, %logits, %tgt smoothing 1.000000e-01 ignore 0
        : tensor<2x7x100xf32>, tensor<2x7xi32>
    ```
  }];
  let arguments = (ins TG_Scalar:$loss_grad, TG_FloatTensor:$logits,
                       TG_IndexTensor:$targets, F32Attr:$smoothing,
                       I32Attr:$ignore_index);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $loss_grad `,` $logits `,` $targets `smoothing` $smoothing `ignore` $ignore_index
    attr-dict `:` type($logits) `,` type($targets)
  }];
  let hasVerifier = 1;
}

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
    A `dropout_rate > 0` needs a `key`. With `position` (a runtime scalar;
    needs `causal` and `Sq <= Sk`) query `i` sits at position `position + i`
    of a key/value cache of `Sk` positions and sees keys `0 .. position + i`:
    one step of an incremental decoder.

    Besides `out : [B, H, Sq, Dv]` it returns `lse : [B, H, Sq]`, the
    log-sum-exp of each score row, which is all `tg.attention_grad` needs to
    recompute the probabilities: the `Sq x Sk` matrix is never stored.

    ```mlir
    %o, %lse = tg.attention %q, %k, %v mask %pad key %key causal
        scale 0.353553385 dropout 1.000000e-01 op_id 7
        : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x7xf32>,
           tensor<2xi32>) -> (tensor<2x4x7x8xf32>, tensor<2x4x7xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$query, TG_FloatTensor:$key_in,
                       TG_FloatTensor:$value,
                       Optional<TG_FloatTensor>:$mask, Optional<TG_RngKey>:$rng_key,
                       Optional<TG_IntScalar>:$position,
                       UnitAttr:$causal, F32Attr:$scale, F32Attr:$dropout_rate,
                       I64Attr:$op_id);
  let results = (outs TG_FloatTensor:$output, TG_FloatTensor:$lse);
  let builders = [
    // Result types follow from the operands: out [B, H, Sq, Dv], lse [B, H, Sq].
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::Value":$mask,
                   "::mlir::Value":$rngKey, "bool":$causal, "float":$scale,
                   "float":$dropoutRate, "int64_t":$opId,
                   CArg<"::mlir::Value", "{}">:$position), [{
      auto q = ::llvm::cast<::mlir::RankedTensorType>(query.getType());
      auto v = ::llvm::cast<::mlir::RankedTensorType>(value.getType());
      ::llvm::SmallVector<int64_t> outShape(q.getShape());
      outShape.back() = v.getShape().back();
      build($_builder, $_state, q.clone(outShape), rowStatisticsType(q), query,
            key, value, mask, rngKey, position, causal, ::llvm::APFloat(scale),
            ::llvm::APFloat(dropoutRate), static_cast<uint64_t>(opId));
    }]>
  ];
  let assemblyFormat = [{
    $query `,` $key_in `,` $value (`mask` $mask^)? (`key` $rng_key^)? (`causal` $causal^)?
    (`position` $position^)?
    `scale` $scale `dropout` $dropout_rate `op_id` $op_id attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TG_AttentionGradOp : TG_Op<"attention_grad", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["grad", "output"]>, AllTypesMatch<["query", "query_grad"]>,
    AllTypesMatch<["key_in", "key_grad"]>, AllTypesMatch<["value", "value_grad"]>]> {
  let summary = "fused backward of tg.attention";
  let description = [{
    Given the gradient `grad` of `tg.attention`'s `out`, returns
    `(d_query, d_key, d_value)`. It recomputes the probabilities tile by tile
    from `q`, `k` and the saved `lse` (and the dropout mask from `key` and
    `op_id`) instead of reading a stored `Sq x Sk` matrix. Attributes and
    optional operands must match the forward op's.

    ```mlir
    %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse mask %pad key %key causal
        scale 0.353553385 dropout 1.000000e-01 op_id 7
        : (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>,
           tensor<2x4x7x8xf32>, tensor<2x4x7xf32>, tensor<2x7xf32>, tensor<2xi32>)
          -> (tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x8xf32>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$query,
                       TG_FloatTensor:$key_in, TG_FloatTensor:$value,
                       TG_FloatTensor:$output, TG_FloatTensor:$lse,
                       Optional<TG_FloatTensor>:$mask, Optional<TG_RngKey>:$rng_key,
                       UnitAttr:$causal, F32Attr:$scale, F32Attr:$dropout_rate,
                       I64Attr:$op_id);
  let results = (outs TG_FloatTensor:$query_grad, TG_FloatTensor:$key_grad,
                      TG_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $grad `,` $query `,` $key_in `,` $value `,` $output `,` $lse
    (`mask` $mask^)? (`key` $rng_key^)? (`causal` $causal^)?
    `scale` $scale `dropout` $dropout_rate `op_id` $op_id attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TG_ResidualLayerNormOp : TG_Op<"residual_layer_norm", [Pure,
    AllTypesMatch<["residual", "sublayer", "result"]>, AllTypesMatch<["gamma", "beta"]>,
    TypesMatchWith<"per-row statistics have the residual's shape without the last dimension",
                   "residual", "mean", "::tgc::tg::rowStatisticsType($_self)">,
    TypesMatchWith<"per-row statistics have the residual's shape without the last dimension",
                   "residual", "rstd", "::tgc::tg::rowStatisticsType($_self)">]> {
  let summary = "fused layer_norm(residual + dropout(sublayer))";
  let description = [{
    The post-LN sublayer wrapper `LayerNorm(x + Dropout(Sublayer(x)))` in one
    pass: `h = residual + dropout(sublayer)`, `out = layer_norm(h)` over the
    last dimension. It also returns the per-row `mean` and `rstd`
    (`1/sqrt(var + eps)`), shape `[...]` without the last dimension, which is
    what the backward needs; the normalized tensor is not saved.

    ```mlir
    %y, %mean, %rstd = tg.residual_layer_norm %x, %sub, %gamma, %beta, %key
        rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$residual, TG_FloatTensor:$sublayer,
                       TG_FloatTensor:$gamma, TG_FloatTensor:$beta, TG_RngKey:$key,
                       F32Attr:$rate, I64Attr:$op_id, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$result, TG_FloatTensor:$mean,
                      TG_FloatTensor:$rstd);
  let assemblyFormat = [{
    $residual `,` $sublayer `,` $gamma `,` $beta `,` $key `rate` $rate `op_id` $op_id
    `eps` $epsilon attr-dict `:` type($residual) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def TG_ResidualLayerNormGradOp : TG_Op<"residual_layer_norm_grad", [Pure,
    AllTypesMatch<["grad", "residual", "sublayer", "residual_grad", "sublayer_grad"]>,
    AllTypesMatch<["gamma", "gamma_grad", "beta_grad"]>,
    TypesMatchWith<"per-row statistics have the residual's shape without the last dimension",
                   "residual", "mean", "::tgc::tg::rowStatisticsType($_self)">,
    TypesMatchWith<"per-row statistics have the residual's shape without the last dimension",
                   "residual", "rstd", "::tgc::tg::rowStatisticsType($_self)">]> {
  let summary = "fused backward of tg.residual_layer_norm";
  let description = [{
    Given the gradient of `tg.residual_layer_norm`'s result, returns
    `(d_residual, d_sublayer, d_gamma, d_beta)`. It rebuilds `h` from the
    residual, the sublayer output and the regenerated dropout mask, and uses
    the saved `mean`/`rstd`. Attributes must match the forward op's.

    ```mlir
    %dx, %dsub, %dg, %db = tg.residual_layer_norm_grad %dy, %x, %sub, %gamma, %mean, %rstd, %key
        rate 1.000000e-01 op_id 4 eps 1.0e-06 : tensor<2x7x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$grad, TG_FloatTensor:$residual,
                       TG_FloatTensor:$sublayer, TG_FloatTensor:$gamma,
                       TG_FloatTensor:$mean, TG_FloatTensor:$rstd, TG_RngKey:$key,
                       F32Attr:$rate, I64Attr:$op_id, F32Attr:$epsilon);
  let results = (outs TG_FloatTensor:$residual_grad, TG_FloatTensor:$sublayer_grad,
                      TG_FloatTensor:$gamma_grad, TG_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $grad `,` $residual `,` $sublayer `,` $gamma `,` $mean `,` $rstd `,` $key
    `rate` $rate `op_id` $op_id `eps` $epsilon attr-dict `:` type($residual) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Post-autodiff fusion: elementwise groups and GEMM epilogues
//===----------------------------------------------------------------------===//

def TG_FusedElementwiseOp : TG_Op<"fused_elementwise", [IsolatedFromAbove,
    SingleBlock, RecursiveMemoryEffects, RecursivelySpeculatable]> {
  let summary = "a group of elementwise ops that runs as one loop";
  let description = [{
    The body holds elementwise tg ops (those with the `Elementwise` trait, plus
    `tg.dropout` and `tg.dropout_grad`, whose mask is a function of the
    element index) on tensors of one shape, the group's. The op means exactly
    what the body's ops mean one after another; a code generator emits it as a
    single loop that reads each input once and writes each result once, so the
    intermediates never reach memory. `tg-fuse-elementwise` builds it after
    autodiff. Inputs are tensors of the group's shape, or a dropout key; the
    body's block arguments stand for them in order; `tg.yield` names the
    results.

    ```mlir
    %r = tg.fused_elementwise(%g, %key) : (tensor<4x8x32xf32>, tensor<2xi32>) -> tensor<4x8x32xf32> {
    ^bb0(%x: tensor<4x8x32xf32>, %k: tensor<2xi32>):
      %0 = tg.dropout_grad %x, %k rate 1.000000e-01 op_id 0 : tensor<4x8x32xf32>
      %1 = tg.scale %0 by 5.65685415 : tensor<4x8x32xf32>
      tg.yield %1 : tensor<4x8x32xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<TG_AnyTensor>:$inputs);
  let results = (outs Variadic<TG_FloatTensor>:$results);
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
  let arguments = (ins Variadic<TG_FloatTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def TG_LinearOp : TG_Op<"linear", [Pure]> {
  let summary = "x W + b with an optional ReLU: a GEMM with its epilogue";
  let description = [{
    `result[..., n] = act(sum_k input[..., k] * weight[k, n] + bias[n])`, with
    `act` the identity or, with `relu`, max(0, .). `input` has rank >= 2,
    `weight` is [K, N] and `bias` is [N]. The bias add and the activation run
    in the GEMM's epilogue while the output tile is still in registers or
    cache, instead of as two more passes over memory.
    `tg-fuse-matmul-epilogue` builds it after autodiff from
    `relu(add(matmul(x, W), broadcast(b)))`; it has no gradient rule.

    ```mlir
    %h = tg.linear %x, %w1, %b1 relu : tensor<4x8x32xf32>, tensor<32x64xf32>, tensor<64xf32> -> tensor<4x8x64xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$weight,
                       TG_FloatTensor:$bias, UnitAttr:$relu);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias (`relu` $relu^)? attr-dict `:` type($input)
    `,` type($weight) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

def TG_AdamUpdateOp : TG_Op<"adam_update", [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
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

def TG_MultiAdamUpdateOp : TG_Op<"multi_adam_update", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "tg.adam_update on many parameters at once";
  let description = [{
    Means one `tg.adam_update` per entry of `params` (with the moments and
    gradient at the same position), all with one `lr`, `step` and set of
    hyperparameters. A code generator runs it as one kernel over every
    parameter (one launch on a GPU, one parallel loop on a CPU) instead of
    one per tensor. `tg-fuse-adam` builds it after `tg-adam`.

    ```mlir
    tg.multi_adam_update [@w, @b], [@adam.m.w, @adam.m.b], [@adam.v.w, @adam.v.b]
        grads(%dw, %db) lr %lr step %step beta1 0.899999976 beta2 9.800000e-01
        eps 9.99999971e-10 : tensor<16x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins SymbolRefArrayAttr:$params,
                       SymbolRefArrayAttr:$moments1,
                       SymbolRefArrayAttr:$moments2,
                       Variadic<TG_FloatTensor>:$grads,
                       TG_Scalar:$lr, TG_IntScalar:$step,
                       F32Attr:$beta1, F32Attr:$beta2, F32Attr:$epsilon);
  let assemblyFormat = [{
    $params `,` $moments1 `,` $moments2 `grads` `(` $grads `)` `lr` $lr
    `step` $step `beta1` $beta1 `beta2` $beta2 `eps` $epsilon attr-dict `:`
    type($grads)
  }];
  let hasVerifier = 1;
}

#endif // TG_OPS_TD
