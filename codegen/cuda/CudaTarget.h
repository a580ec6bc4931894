//===- CudaTarget.h - how the CUDA program differs --------------*- C++ -*-===//
//
// The CUDA program keeps the state, the caches, the arena and the inputs
// on the device, in runtime/program/cuda/DeviceStep.h's DeviceFrame `g`:
// each function first uploads its inputs and finishes by downloading what
// the host reads (CudaTarget.cpp); elementwise passes are kernels of their
// own (ElementwiseKernels.cpp); constants get device copies, made when the
// device hooks open the GPU (DeviceHooks.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CUDA_CUDATARGET_H
#define TGC_CODEGEN_CUDA_CUDATARGET_H

#include "codegen/lowering/ProgramTarget.h"

#include "llvm/ADT/SmallVector.h"

namespace tgc::cpp {

class CudaTarget final : public ProgramTarget {
public:
  // CudaTarget.cpp: where values live, the functions' inputs, results and
  // entries, the file.
  std::string inputArgument(llvm::StringRef role) const override;
  std::string stateFrame() const override { return "g"; }
  mlir::FailureOr<std::string> hostRead(mlir::Value value,
                                        EmitContext &context) const override;
  std::string scalarArgument(const std::string &pointer) const override {
    return pointer; // the kernels read lr and step on the device
  }
  std::string copy(const std::string &target, const std::string &source,
                   int64_t bytes) const override;
  std::string optimizerStep(const std::string &head, const std::string &lr,
                            const std::string &step, const std::string &norm,
                            const std::string &hyper,
                            const std::string &loss) const override;
  std::optional<std::string> inputUpload(int64_t sourceIds,
                                         int64_t targetIds) const override;
  std::string readLoss(const std::string &loss, const std::string &tokens,
                       const std::string &crossEntropy,
                       const std::string &norm) const override;
  LogitsRead readLogits(const std::string &logits,
                        int64_t elements) const override;
  mlir::LogicalResult writeEntry(const EntryFunction &entry,
                                 EmitContext &context,
                                 llvm::raw_ostream &os) const override;
  llvm::StringRef generatedFor() const override { return " for CUDA"; }
  void writeIncludes(llvm::raw_ostream &os) const override;
  llvm::StringRef kernelNamespace() const override { return "cuda"; }
  void writeArenaAccessors(llvm::raw_ostream &os) const override;

  // ElementwiseKernels.cpp: elementwise passes.
  /// Kernels read the key from `g`, so that a replayed CUDA graph draws
  /// each step's masks.
  std::string dropoutKeyOnDevice() const override { return "g.dropoutKey"; }
  std::string dropoutFactor(const std::string &site) const override;
  void writeElementwise(const ElementwiseLoop &loop, llvm::StringRef name,
                        llvm::raw_ostream &os,
                        llvm::raw_ostream &kernels) const override;

  // DeviceHooks.cpp: the constants' device copies and the hooks.
  std::string placeConstant(const Bucket &bucket, llvm::StringRef name,
                            llvm::StringRef type,
                            llvm::raw_ostream &os) override;
  void writeDeviceHooks(const ProgramSizes &sizes,
                        llvm::ArrayRef<Bucket> buckets,
                        llvm::raw_ostream &os) const override;
  llvm::StringRef deviceHooks() const override { return "&kDevice"; }

private:
  /// The constants to copy to the device, "dConstantN = ...(kConstantN)".
  llvm::SmallVector<std::string> constantUploads;
};

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CUDA_CUDATARGET_H
