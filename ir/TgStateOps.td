//===- TgStateOps.td - state ops of the tg dialect -------------*- tablegen -*-===//
//
// Variables (parameters, optimizer and decoding state), the loads and stores
// that read and write them, and constants. Verifiers live in TgStateOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TG_STATE_OPS_TD
#define TG_STATE_OPS_TD

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
    trained and never checkpointed. A parameter without `trainable` is
    frozen: loaded and checkpointed, never differentiated nor updated.
    `weight_decay(true|false)` says whether AdamW decays the parameter;
    without it `tg-adam`'s rule decides (no decay on rank-0 and rank-1 parameters and
    embedding tables).

    ```mlir
    tg.variable @encoder.layer0.self_attn.w_q trainable init(xavier_uniform) : tensor<512x512xf32>
    tg.variable @embedding trainable init(normal, 0.0441941738) : tensor<37000x512xf32>
    tg.variable @head.w trainable weight_decay(false) init(xavier_uniform) : tensor<512x8xf32>
    tg.variable @adam.m.embedding init(zeros) : tensor<37000x512xf32>
    tg.variable @decode.decoder.layer0.self_attn.keys cache init(zeros) : tensor<8x8x64x64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyType>:$type,
                       TG_InitKind:$init,
                       OptionalAttr<F64Attr>:$init_scale,
                       UnitAttr:$trainable,
                       UnitAttr:$cache,
                       OptionalAttr<BoolAttr>:$weight_decay);
  let assemblyFormat = [{
    $sym_name (`trainable` $trainable^)? (`cache` $cache^)?
    (`weight_decay` `(` $weight_decay^ `)`)? `init` `(` $init (`,` $init_scale^)? `)`
    attr-dict `:` $type
  }];
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::RankedTensorType":$type,
                   "InitKind":$init, "std::optional<double>":$scale,
                   "bool":$trainable,
                   CArg<"std::optional<bool>", "std::nullopt">:$weightDecay), [{
      build($_builder, $_state, $_builder.getStringAttr(name),
            ::mlir::TypeAttr::get(type),
            InitKindAttr::get($_builder.getContext(), init),
            scale ? $_builder.getF64FloatAttr(*scale) : ::mlir::FloatAttr(),
            trainable ? $_builder.getUnitAttr() : ::mlir::UnitAttr(),
            ::mlir::UnitAttr(),
            weightDecay ? $_builder.getBoolAttr(*weightDecay) : ::mlir::BoolAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
  let hasVerifier = 1;
}

def TG_LoadOp : TG_Op<"load", [TG_ResultOutsideArena, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
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
    type must equal the variable's type. The variable is not `trainable`: a
    parameter's one writer is the optimizer (`tg.store_slice` likewise).

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

def TG_ConstantOp : TG_Op<"constant", [ConstantLike, Pure, TG_ResultOutsideArena,
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

#endif // TG_STATE_OPS_TD
