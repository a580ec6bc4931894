//===- CppTarget.cpp - the CPU program's frame, inputs and preamble ------===//
//
// Everything the CPU program's kernels read is in the StepFrame `f` the
// runtime passes to each function: the inputs, the state and the arena.
// So the host reads any value where the kernels do, results are read in
// place, and copies are memcpy.
//
//===----------------------------------------------------------------------===//
#include "codegen/cpp/CppTarget.h"
#include "codegen/cpp/CppEmitter.h"
#include "codegen/lowering/EmitContext.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace tgc {
namespace cpp {

std::string CppTarget::inputArgument(StringRef role) const {
  // The ids are arrays in the frame; lr and step are read by pointer.
  return llvm::StringSwitch<std::string>(role)
      .Case("source_ids", "f.sourceIds")
      .Case("target_in_ids", "f.targetInIds")
      .Case("target_out_ids", "f.targetOutIds")
      .Case("lr", "&f.lr")
      .Case("step", "&f.step")
      .Default("");
}

FailureOr<std::string> CppTarget::hostRead(Value value,
                                           EmitContext &context) const {
  return context.pointer(value);
}

std::string CppTarget::copy(const std::string &target,
                            const std::string &source, int64_t bytes) const {
  return "  std::memcpy(" + target + ", " + source + ", " +
         std::to_string(bytes) + ");";
}

std::string CppTarget::optimizerStep(const std::string &head,
                                     const std::string &lr,
                                     const std::string &step,
                                     const std::string &norm,
                                     const std::string &hyper,
                                     const std::string &) const {
  // A data-parallel run's sharded optimizer takes the step over (and is
  // given the kernel, for its share). The loss gates the call itself
  // (mayUpdateState, CheckedStep.cpp).
  std::string arguments = head + ", " + lr + ", " + step + ", " + hyper;
  return "  *" + norm + " = f.optimizerStep ? f.optimizerStep(" +
         "&kernels::optimizerStep, " + arguments + ")\n" +
         "                   : kernels::optimizerStep(" + arguments + ");\n";
}

std::string CppTarget::readLoss(const std::string &loss,
                                const std::string &tokens,
                                const std::string &crossEntropy,
                                const std::string &norm) const {
  return "  f.loss = *" + loss + ";\n" +
         (tokens == "nullptr" ? "" : "  f.tokens = *" + tokens + ";\n") +
         (crossEntropy == "nullptr"
              ? ""
              : "  f.crossEntropy = *" + crossEntropy +
                    ";\n  f.hasCrossEntropy = true;\n") +
         (norm == "nullptr" ? "" : "  f.gradNorm = *" + norm + ";\n");
}

LogitsRead CppTarget::readLogits(const std::string &logits,
                                 int64_t elements) const {
  return {"  f.logits = " + logits + ";\n",
          "where the logits are, in the arena"};
}

void CppTarget::writeIncludes(raw_ostream &os) const {
  os << "#include \"runtime/kernels/cpu/Kernels.h\"\n"
     << "#include \"runtime/kernels/cpu/VectorMath.h\" // SIMD erf, exp, ...\n";
}

void CppTarget::writeArenaAccessors(raw_ostream &os) const {
  os << "inline float *F(StepFrame &f, int64_t offset) {\n"
     << "  return reinterpret_cast<float *>(f.arena + offset);\n}\n"
     << "inline int32_t *I(StepFrame &f, int64_t offset) {\n"
     << "  return reinterpret_cast<int32_t *>(f.arena + offset);\n}\n"
     << "[[maybe_unused]] inline Bf16 *H(StepFrame &f, int64_t offset) {\n"
     << "  return reinterpret_cast<Bf16 *>(f.arena + offset);\n}\n\n";
}

} // namespace cpp

LogicalResult emitCpp(ArrayRef<ModuleOp> buckets, const CompiledModelInfo &info,
                      raw_ostream &os) {
  cpp::CppTarget target;
  return cpp::emitProgram(buckets, info, target, os);
}

} // namespace tgc
