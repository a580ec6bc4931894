//===- TgBase.td - the tg dialect, its base op class and types -*- tablegen -*-===//
//
// What every tg op shares: the dialect, the tensor type constraints (f32
// activations, i32 token ids) and the base class `TG_Op`, whose trait checks
// that every operand and result has a static shape.
//
//===----------------------------------------------------------------------===//

#ifndef TG_BASE_TD
#define TG_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TG_Dialect : Dialect {
  let name = "tg";
  let cppNamespace = "::tgc::tg";
  let summary = "The Transformer training step: forward, loss, gradients and Adam";
  let description = [{
    `tg` describes one training step of the Transformer of "Attention Is All
    You Need" as a static graph on value-semantic tensors. Every tensor has a
    static shape; activations are `f32` and token ids are `i32`. Under
    `tg-mixed-precision`, GEMM operands are `bf16` copies (`tg.to_bf16`);
    GEMM results, parameters and everything else stay `f32`.

    Parameters and optimizer state are module-level symbols (`tg.variable`)
    that functions read with `tg.load` and update in place with `tg.store` or
    `tg.adam_update`, so a compiled step never copies them in or out.

    Dropout is counter-based: a `tensor<2xi32>` key (seed, step) plus the op's
    `op_id` and the element index select a Philox4x32-10 output, so the
    backward regenerates the mask instead of storing it.

    The dialect holds three layers of ops: the unfused forward ops a model is
    written in; their gradient ops (`*_grad`), which autodiff produces; and the
    fused ops (`tg.attention`, `tg.residual_layer_norm` and their gradients)
    that the fusion passes produce.
  }];
  // tg.optimizer and tg.schedule: numbers the generated code spells out;
  // tg.beside_next: two GEMMs that run at once (tg-pair-gemms).
  let hasOperationAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Tensor types
//===----------------------------------------------------------------------===//

// Element types are part of each operand's constraint; static shapes are
// checked once, for every operand and result, by TG_Op's TensorRules trait.
def TG_FloatTensor : RankedTensorOf<[F32]>;
def TG_IndexTensor : RankedTensorOf<[I32]>;
def TG_AnyTensor : RankedTensorOf<[F32, I32]>;
// GEMM operands: f32, or bf16 where tg-mixed-precision rounded them (the
// products still accumulate and return f32).
def TG_Bf16Tensor : RankedTensorOf<[BF16]>;
def TG_GemmOperand : RankedTensorOf<[F32, BF16]>;
// Scalars and the dropout key have one possible type each, so the assembly
// format need not spell it out (builderCall).
def TG_Scalar : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def TG_IntScalar : 0DTensorOf<[I32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI32Type())";
}
// (seed, step) of the Philox stream that keys every dropout.
def TG_RngKey : Type<And<[TG_IndexTensor.predicate,
                          CPred<"::llvm::cast<::mlir::ShapedType>($_self).getShape() == ::llvm::ArrayRef<int64_t>{2}">]>,
                     "tensor<2xi32> dropout key (seed, step)",
                     "::mlir::TensorType"> {
  let builderCall = "::mlir::RankedTensorType::get({2}, $_builder.getI32Type())";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def TG_InitKind : I32EnumAttr<"InitKind", "how a variable is initialized", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"normal", 2>,
    I32EnumAttrCase<"uniform", 3>,
    I32EnumAttrCase<"xavier_uniform", 4>,
  ]> {
  let cppNamespace = "::tgc::tg";
}

// The normalization of a fused residual block (tg.residual_layer_norm):
// tg.layer_norm's or tg.rms_norm's.
def TG_NormKind : I32EnumAttr<"NormKind", "which normalization a fused residual block applies", [
    I32EnumAttrCase<"layer", 0>,
    I32EnumAttrCase<"rms", 1>,
  ]> {
  let cppNamespace = "::tgc::tg";
}

// The activation tg.linear applies in its epilogue: each one the formula of
// the elementwise op of that name (silu: x * sigmoid(x)).
def TG_Activation : I32EnumAttr<"Activation", "the activation of a GEMM's epilogue", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"gelu_tanh", 3>,
    I32EnumAttrCase<"silu", 4>,
    I32EnumAttrCase<"sigmoid", 5>,
    I32EnumAttrCase<"tanh", 6>,
  ]> {
  let cppNamespace = "::tgc::tg";
}

//===----------------------------------------------------------------------===//
// Base op class
//===----------------------------------------------------------------------===//

// The shared rule of every tg op: all tensor operands and results have a
// static shape. Implemented in TgVerify.cpp.
def TG_TensorRules : NativeOpTrait<"TensorRules"> {
  let cppNamespace = "::tgc::tg";
}

// Kinds of ops that passes and emitters ask about, declared on the ops
// (classes in ir/TgOps.h, namespace tgc::tg::traits).

// Runs as one loop over its elements (the emitters' elementwise loop): it may
// join a tg.fused_elementwise group, and its result may take the bytes of an
// operand of its type that dies there (tg-plan-memory).
def TG_ElementwiseLoop : NativeOpTrait<"ElementwiseLoop"> {
  let cppNamespace = "::tgc::tg::traits";
}
// Its result is a view of its first operand's bytes: no code, no buffer.
def TG_ResultIsView : NativeOpTrait<"ResultIsView"> {
  let cppNamespace = "::tgc::tg::traits";
}
// Its result lives outside the arena (the state buffer, static data): no
// code, no buffer of the plan.
def TG_ResultOutsideArena : NativeOpTrait<"ResultOutsideArena"> {
  let cppNamespace = "::tgc::tg::traits";
}
// Result i is written in place over operand i (the same bytes).
def TG_ResultsOverwriteOperands : NativeOpTrait<"ResultsOverwriteOperands"> {
  let cppNamespace = "::tgc::tg::traits";
}
// Operands 0 and 1 are a GEMM's: tg-mixed-precision gives them bf16 copies.
def TG_GemmOperands : NativeOpTrait<"GemmOperands"> {
  let cppNamespace = "::tgc::tg::traits";
}
// Its result is a GEMM's output, which the GEMM can write rounded to bf16
// (tg-fold-bf16-roundings).
def TG_GemmResult : NativeOpTrait<"GemmResult"> {
  let cppNamespace = "::tgc::tg::traits";
}
// tg-autodiff differentiates nothing through it: its result is held fixed
// (tg.stop_gradient) or piecewise constant (the comparisons), so no gradient
// reaches its operands.
def TG_BlocksGradient : NativeOpTrait<"BlocksGradient"> {
  let cppNamespace = "::tgc::tg::traits";
}
// Updates the trained state (parameters and moments) in place.
def TG_OptimizerStep : NativeOpTrait<"OptimizerStep"> {
  let cppNamespace = "::tgc::tg::traits";
}

class TG_Op<string mnemonic, list<Trait> traits = []>
    : Op<TG_Dialect, mnemonic, !listconcat(traits, [TG_TensorRules])>;

// Pure ops whose single result has the type of their (first) operand.
class TG_UnaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : TG_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                           Elementwise, TG_ElementwiseLoop])> {
  let summary = "elementwise " # formula;
  let arguments = (ins TG_FloatTensor:$input);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

class TG_BinaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : TG_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType,
                                           Elementwise, TG_ElementwiseLoop])> {
  let summary = "elementwise " # formula # " of two tensors of one shape";
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

// An elementwise comparison: 1.0 where it holds, else 0.0 (a mask that
// tg.where, tg.mul and the additive masks read). Piecewise constant, so no
// gradient flows through it.
class TG_CompareOp<string mnemonic, string relation>
    : TG_Op<mnemonic, [Pure, SameOperandsAndResultType, Elementwise,
                       TG_ElementwiseLoop, TG_BlocksGradient]> {
  let summary = "elementwise comparison lhs " # relation # " rhs, as 1.0 or 0.0";
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs);
  let results = (outs TG_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let description = [{
    `result = lhs }] # relation # [{ rhs ? 1.0 : 0.0`; a NaN operand compares
    false (true for `not_equal`), as in IEEE 754.

    ```mlir
    %m = tg.}] # mnemonic # [{ %x, %y : tensor<2x7xf32>
    ```
  }];
}

#endif // TG_BASE_TD
