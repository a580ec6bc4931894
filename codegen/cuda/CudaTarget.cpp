//===- CudaTarget.cpp - the CUDA program's frame, transfers and preamble -===//
//
// The kernels read device memory only: the ids, lr and step are uploaded
// (through pinned staging buffers) before a function's first op, the loss
// and the logits downloaded after its last, and only constants and the
// dropout key have a host copy. The GPU runs its stream's kernels in order,
// so an entry calls its op functions one after another; the training
// step's go through cuda::runStepOps, which can replay them as one CUDA
// graph (--cuda-graphs).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTarget.h"
#include "codegen/cuda/CudaEmitter.h"
#include "codegen/lowering/EmitContext.h"
#include "codegen/lowering/FiniteChecks.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace tgc {
namespace cpp {

std::string CudaTarget::inputArgument(StringRef role) const {
  // The device copies in `g`.
  return llvm::StringSwitch<std::string>(role)
      .Case("source_ids", "g.sourceIds")
      .Case("target_in_ids", "g.targetInIds")
      .Case("target_out_ids", "g.targetOutIds")
      .Case("lr", "g.lr")
      .Case("step", "g.step")
      .Default("");
}

FailureOr<std::string> CudaTarget::hostRead(Value value,
                                            EmitContext &context) const {
  return emitError(value.getLoc())
         << "is read on the host (a dropout key or a loss gradient) but "
            "lives on the GPU; only constants and the dropout key can be";
}

std::string CudaTarget::copy(const std::string &target,
                             const std::string &source, int64_t bytes) const {
  return "  TGC_CUDA_CHECK(cudaMemcpyAsync(" + target + ", " + source + ", " +
         std::to_string(bytes) +
         ", cudaMemcpyDeviceToDevice, kernels::stream()));";
}

std::string CudaTarget::optimizerStep(const std::string &head,
                                      const std::string &lr,
                                      const std::string &step,
                                      const std::string &norm,
                                      const std::string &hyper,
                                      const std::string &loss) const {
  // The gradient's weight changes every step: the kernels read the device
  // copy uploaded with the inputs (the control's host value is not read).
  // The loss too is read on the device: a captured step cannot ask the
  // host whether it is finite.
  return "  kernels::optimizerStep(" + head + ", " + lr + ", " + step +
         ", g.gradWeight, " + norm + ", " + hyper + ", " + loss + ");\n";
}

std::optional<std::string> CudaTarget::inputUpload(int64_t sourceIds,
                                                   int64_t targetIds) const {
  return "  cuda::uploadInputs(f, " + std::to_string(sourceIds) + ", " +
         std::to_string(targetIds) + ");\n";
}

std::string CudaTarget::readLoss(const std::string &loss,
                                 const std::string &tokens,
                                 const std::string &crossEntropy,
                                 const std::string &norm) const {
  return "  cuda::downloadLoss(" + loss + ", " + tokens + ", " + crossEntropy +
         ", " + norm + ", f);\n";
}

LogitsRead CudaTarget::readLogits(const std::string &logits,
                                  int64_t elements) const {
  return {"  f.logits = cuda::downloadLogits(" + logits + ", " +
              std::to_string(elements) + ");\n",
          "the logits, copied to the host"};
}

LogicalResult CudaTarget::writeEntry(const EntryFunction &entry,
                                     EmitContext &context,
                                     raw_ostream &os) const {
  if (entry.kind != FunctionKind::Step) {
    os << "void " << entry.name << "(StepFrame &f) {\n";
    for (const OpCall &call : entry.calls)
      os << "  " << call.function << "(f);\n";
    os << "}\n\n";
    return success();
  }
  // The training step's ops, between the upload and the finish (the calls
  // without an op), in a function of their own: what --cuda-graphs
  // captures and replays (runtime/program/cuda/StepGraphs.h).
  ArrayRef<OpCall> calls = entry.calls;
  size_t first = 0, last = calls.size();
  while (first < last && !calls[first].op)
    ++first;
  while (last > first && !calls[last - 1].op)
    --last;
  os << "static void " << entry.name << "Ops(StepFrame &f) {\n";
  for (const OpCall &call : calls.slice(first, last - first))
    os << "  " << call.function << "(f);\n";
  os << "}\n\nvoid " << entry.name << "(StepFrame &f) {\n";
  for (const OpCall &call : calls.take_front(first))
    os << "  " << call.function << "(f);\n";
  os << "  cuda::runStepOps(f, &" << entry.name << "Ops);\n";
  for (const OpCall &call : calls.drop_front(last))
    os << "  " << call.function << "(f);\n";
  os << "}\n\n";
  FailureOr<llvm::StringMap<FiniteCheck>> checks =
      noteFiniteChecks(entry, context, "kernels::allFinite");
  if (failed(checks))
    return failure();
  // --profile: the same calls, the ops one by one (no CUDA graph), each
  // marked, so that the device's records give each op its kernels' time.
  ArrayRef<OpCall> ops = calls.slice(first, last - first);
  os << "// " << entry.name << "'s ops in order, for --profile: kind, what, "
        "bytes, flops.\n"
     << "const StepOp kTrainStepOps[] = {\n";
  for (const OpCall &call : ops) {
    auto check = checks->find(call.function);
    os << "    " << (check == checks->end() ? kStepResultsRow : check->second.row)
       << ",\n";
  }
  os << "};\n\n"
     << "// " << entry.name
     << ", adding the time of the device's work of each op to seconds[i]\n"
     << "// (kTrainStepOps[i]).\n"
     << "void profileTrainStep(StepFrame &f, double *seconds) {\n"
     << "  cuda::beginProfiledStep(seconds);\n";
  for (const OpCall &call : calls.take_front(first))
    os << "  " << call.function << "(f);\n";
  for (size_t i = 0; i < ops.size(); ++i)
    os << "  cuda::profileOp(" << i << ");\n  " << ops[i].function << "(f);\n";
  os << "  cuda::profileOp(-1);\n";
  for (const OpCall &call : calls.drop_front(last))
    os << "  " << call.function << "(f);\n";
  os << "  cuda::endProfiledStep();\n}\n\n";
  // After a non-finite loss: the ops again, each one's results checked on
  // the device (the optimizer, which left the state as it was, skipped).
  writeCheckingStep(entry, *checks, os);
  return success();
}

void CudaTarget::writeIncludes(raw_ostream &os) const {
  os << "// Everything lives on the GPU (runtime/program/cuda/DeviceStep.h: "
        "g); elementwise ops\n// and groups are kernels of their own "
        "(four elements a thread: ElementQuads.cuh),\n// the rest calls "
        "runtime/kernels/cuda/Kernels.h.\n"
     << "#include \"runtime/program/cuda/DeviceStep.h\"\n"
     << "#include \"runtime/program/cuda/KernelProfile.h\"\n"
     << "#include \"runtime/program/cuda/StepGraphs.h\"\n"
     << "#include \"runtime/kernels/cuda/Kernels.h\"\n"
     << "#include \"runtime/kernels/cuda/ElementQuads.cuh\"\n";
}

void CudaTarget::writeArenaAccessors(raw_ostream &os) const {
  os << "cuda::DeviceFrame &g = cuda::deviceFrame();\n\n"
     << "inline float *F(StepFrame &, int64_t offset) {\n"
     << "  return reinterpret_cast<float *>(g.arena + offset);\n}\n"
     << "inline int32_t *I(StepFrame &, int64_t offset) {\n"
     << "  return reinterpret_cast<int32_t *>(g.arena + offset);\n}\n"
     // maybe_unused: an f32 step has no bf16 buffers, and nvcc warns
     // about unreferenced functions.
     << "[[maybe_unused]] inline Bf16 *H(StepFrame &, int64_t offset) {\n"
     << "  return reinterpret_cast<Bf16 *>(g.arena + offset);\n}\n\n";
}

} // namespace cpp

LogicalResult emitCuda(ArrayRef<ModuleOp> buckets,
                       const CompiledModelInfo &info, raw_ostream &os) {
  cpp::CudaTarget target;
  return cpp::emitProgram(buckets, info, target, os);
}

} // namespace tgc
