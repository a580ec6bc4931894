//===- DeviceHooks.cpp - constants' device copies and the device hooks ---===//
//
// The runtime's main opens the GPU through the program's DeviceHooks
// (runtime/program/CompiledStep.h): openDevice allocates the device frame
// for the largest bucket and copies the constants there, uploadState and
// downloadState move the state around initialization, resumes and
// checkpoints (which therefore keep the CPU program's format).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTarget.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;

namespace tgc::cpp {

std::string CudaTarget::placeConstant(const Bucket &bucket, StringRef name,
                                      StringRef type, raw_ostream &os) {
  // The kernels read it from device memory; the host keeps its copy for
  // dropout keys and the loss gradient's seed.
  std::string device = ("d" + name.drop_front()).str();
  os << type << " *" << device << "; // on the device (openDevice)\n";
  std::string host = qualified(bucket, name);
  constantUploads.push_back(qualified(bucket, device) + " = reinterpret_cast<" +
                            type.str() + " *>(cuda::uploadConstant(" + host +
                            ", sizeof " + host + "));");
  return device;
}

void CudaTarget::writeDeviceHooks(const ProgramSizes &sizes,
                                  ArrayRef<Bucket> buckets,
                                  raw_ostream &os) const {
  // The device's input buffers hold the largest bucket's.
  int64_t sourceIds = 0, targetIds = 0, cacheFloats = 0;
  for (const Bucket &bucket : buckets) {
    const runtime::BatchShape &b = bucket.signature.shape;
    sourceIds = std::max(sourceIds, b.batchSize * b.sourceLength);
    targetIds = std::max(targetIds, b.batchSize * b.targetLength);
    cacheFloats = std::max(cacheFloats, bucket.cacheFloats);
  }
  os << "bool openDevice(std::string &why) {\n"
     << "  const cuda::DeviceSizes sizes{/*stateFloats=*/" << sizes.stateFloats
     << ", /*arenaBytes=*/" << sizes.arenaBytes << ",\n"
     << "      /*sourceIds=*/" << sourceIds << ", /*targetIds=*/" << targetIds
     << ",\n      /*cacheFloats=*/"
     << cacheFloats << ", /*gradientFloats=*/" << sizes.gradientFloats << "};\n"
     << "  if (!cuda::openDevice(sizes, why))\n    return false;\n";
  for (const std::string &upload : constantUploads)
    os << "  " << upload << "\n";
  os << "  return true;\n}\n\n"
     << "void uploadState(const float *state) { cuda::uploadState(state, "
     << sizes.stateFloats << "); }\n"
     << "void downloadState(float *state) { cuda::downloadState(state, "
     << sizes.stateFloats << "); }\n\n"
     << "const DeviceHooks kDevice = {&openDevice, &uploadState, "
        "&downloadState,\n                              "
        "&cuda::reorderCaches, &cuda::allReduceSum,\n                              "
        "&cuda::setFusedAttention, &cuda::startKernelProfile,\n"
        "                              "
        "&cuda::beginProfiledStep, &cuda::endProfiledStep};\n\n";
}

} // namespace tgc::cpp
