//===- ElementwiseKernels.cpp - elementwise passes as CUDA kernels -------===//
//
// On CUDA an elementwise pass is a `__global__` kernel of its own, one
// thread per element, written at file scope before the op's function, which
// launches it on the kernels' stream. Each thread draws its own dropout
// factor from the site it is given by value.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTarget.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tgc::cpp {

std::string CudaTarget::dropoutFactor(const std::string &site) const {
  return site + ".factor(uint64_t(i))";
}

void CudaTarget::writeElementwise(const ElementwiseLoop &loop, StringRef name,
                                  raw_ostream &os, raw_ostream &kernels) const {
  SmallVector<std::string> parameters = loop.parameters;
  SmallVector<std::string> arguments = loop.arguments;
  parameters.push_back("int64_t n");
  arguments.push_back("n");
  kernels << "__global__ void " << name << "_kernel("
          << llvm::join(parameters, ", ") << ") {\n"
          << "  const int64_t i = blockIdx.x * int64_t(blockDim.x) + "
             "threadIdx.x;\n"
          << "  if (i < n) {\n"
          << loop.loads << loop.body << loop.stores << "  }\n}\n\n";
  os << "  " << name << "_kernel<<<(n + 255) / 256, 256, 0, "
     << "kernels::stream()>>>(" << llvm::join(arguments, ", ") << ");\n"
     << "  TGC_CUDA_CHECK(cudaGetLastError());\n";
}

} // namespace tgc::cpp
