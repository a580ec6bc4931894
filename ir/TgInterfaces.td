//===- TgInterfaces.td - what each concern asks of a tg op -*- tablegen -*-===//
//
// The concerns that used to be tables keyed by op class are op interfaces:
// each op says how it is differentiated, executed by the reference
// interpreter, written as a kernel call and run one decoding position at a
// time. The ops do not implement them in ODS: each concern attaches its
// implementations as external models from the library that owns it (the
// way MLIR attaches BufferizableOpInterface), one file per op family:
//
//   GradientOpInterface      passes/gradients/<Family>.cpp
//   ReferenceOpInterface     codegen/interpreter/ops/<Family>.cpp
//   KernelCallOpInterface    codegen/calls/<Family>.cpp
//   DecoderAxesOpInterface   passes/decoder/<Family>.cpp
//
// Aliasing and in-place writing are static per op class, so they are traits
// (TgBase.td). ir/OpConcerns.h says which op needs which concern;
// test/unit/OpCompletenessTest.cpp names every op that lacks one.
//
//===----------------------------------------------------------------------===//

#ifndef TG_INTERFACES_TD
#define TG_INTERFACES_TD

include "mlir/IR/OpBase.td"

def TG_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    The backward of an op: given the gradients reaching its results, emit tg
    ops computing the gradients of its operands (tg-autodiff walks the
    forward in reverse and asks each op). Every tg op implements it: an op
    with no gradient rule says why (getNoGradientReason), and asking it for
    gradients is an error at the op that gives that reason.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, the gradients of the wanted
        operands (GradientBuilder::set); fails with a diagnostic at the op.
      }], "::mlir::LogicalResult", "buildGradients",
      (ins "::tgc::GradientBuilder &":$builder)>,
    StaticInterfaceMethod<[{
        Why ops of this class have no gradient rule; nullopt when they have
        one.
      }], "::std::optional<::llvm::StringRef>", "getNoGradientReason", (ins)>,
  ];
}

def TG_ReferenceOpInterface : OpInterface<"ReferenceOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    How the reference interpreter (codegen/interpreter/) runs the op: read
    the operands from the executor, check what the verifier cannot see (ids
    in range, steps), call the op's reference kernel
    (runtime/kernels/reference/) and bind the results.
  }];
  let methods = [
    InterfaceMethod<[{
        Runs the op on the executor's values; a failure has a diagnostic at
        the op and binds nothing the caller keeps.
      }], "::mlir::LogicalResult", "executeReference",
      (ins "::tgc::interp::Executor &":$executor)>,
  ];
}

def TG_KernelCallOpInterface : OpInterface<"KernelCallOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    How the emitters write an op that calls a kernel of
    runtime/kernels/{cpu,cuda}/Kernels.h (both declare one list,
    KernelDeclarations.inc): the body of the op's function in the generated
    program. The emit context says the target and where each value lives.
    Ops written as elementwise loops (the ElementwiseLoop trait), views
    (ResultIsView) and data outside the arena (ResultOutsideArena) have no
    call.
  }];
  let methods = [
    InterfaceMethod<[{
        The C++ statements of the call; failure with a diagnostic at the op.
      }], "::mlir::FailureOr<std::string>", "writeKernelCall",
      (ins "::tgc::cpp::KernelArgs &":$args,
           "::tgc::cpp::EmitContext &":$context)>,
  ];
}

def TG_DecoderAxesOpInterface : OpInterface<"DecoderAxesOpInterface"> {
  let cppNamespace = "::tgc::tg";
  let description = [{
    How an op runs one target position at a time (tg-derive-decoder): how the
    time axis (the dimension that indexes target positions) passes through
    it. Ops with the Elementwise trait keep the axis without a model.
  }];
  let methods = [
    InterfaceMethod<[{
        An op that reads the target: from the time axis of its first target
        operand to those of all its operands and results. Fails with a
        diagnostic (AxisRequest::unsupported) when it cannot.
      }], "::mlir::FailureOr<::tgc::OpAxes>", "getTimeAxes",
      (ins "const ::tgc::AxisRequest &":$request)>,
    InterfaceMethod<[{
        An op that depends on neither input (positions, constants, shape ops
        over them): how @decode_step recomputes one position of its result.
      }], "::mlir::FailureOr<::tgc::PositionRecipe>", "recomputePosition",
      (ins "const ::tgc::PositionRequest &":$request)>,
  ];
}

#endif // TG_INTERFACES_TD
