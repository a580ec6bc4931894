//===- CppTarget.h - how the CPU program differs ----------------*- C++ -*-===//
//
// The CPU program keeps everything in the StepFrame `f` (state, caches,
// arena, inputs), so the kernels read host memory; elementwise passes are
// OpenMP loops (OpenMpLoops.cpp); the step's entry runs side-by-side GEMM
// pairs together and comes with a checking and a profiling step
// (CheckedStep.cpp); the rest is in CppTarget.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CPP_CPPTARGET_H
#define TGC_CODEGEN_CPP_CPPTARGET_H

#include "codegen/lowering/ProgramTarget.h"

namespace tgc::cpp {

class CppTarget final : public ProgramTarget {
public:
  // CppTarget.cpp: where values live, the functions' inputs and results,
  // the file.
  std::string inputArgument(llvm::StringRef role) const override;
  std::string stateFrame() const override { return "f"; }
  mlir::FailureOr<std::string> hostRead(mlir::Value value,
                                        EmitContext &context) const override;
  std::string scalarArgument(const std::string &pointer) const override {
    return "*" + pointer;
  }
  std::string copy(const std::string &target, const std::string &source,
                   int64_t bytes) const override;
  std::string optimizerStep(const std::string &head, const std::string &lr,
                            const std::string &step, const std::string &norm,
                            const std::string &hyper,
                            const std::string &loss) const override;
  std::string placeConstant(const Bucket &bucket, llvm::StringRef name,
                            llvm::StringRef type,
                            llvm::raw_ostream &os) override {
    return name.str(); // the kernels read the static array itself
  }
  std::optional<std::string> inputUpload(int64_t sourceIds,
                                         int64_t targetIds) const override {
    return std::nullopt; // the kernels read the frame's inputs
  }
  std::string readLoss(const std::string &loss, const std::string &tokens,
                       const std::string &crossEntropy,
                       const std::string &norm) const override;
  LogitsRead readLogits(const std::string &logits,
                        int64_t elements) const override;
  llvm::StringRef generatedFor() const override { return ""; }
  void writeIncludes(llvm::raw_ostream &os) const override;
  llvm::StringRef kernelNamespace() const override { return "cpu"; }
  void writeArenaAccessors(llvm::raw_ostream &os) const override;
  void writeDeviceHooks(const ProgramSizes &sizes,
                        llvm::ArrayRef<Bucket> buckets,
                        llvm::raw_ostream &os) const override {}
  llvm::StringRef deviceHooks() const override { return "nullptr"; }

  // OpenMpLoops.cpp: elementwise passes.
  std::string dropoutKeyOnDevice() const override { return ""; }
  std::string dropoutFactor(const std::string &site) const override;
  void writeElementwise(const ElementwiseLoop &loop, llvm::StringRef name,
                        llvm::raw_ostream &os,
                        llvm::raw_ostream &kernels) const override;

  // CheckedStep.cpp: the entries, trainStep's checks and profile.
  mlir::LogicalResult writeEntry(const EntryFunction &entry,
                                 EmitContext &context,
                                 llvm::raw_ostream &os) const override;
};

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CPP_CPPTARGET_H
