//===- ElementwiseKernels.cpp - elementwise passes as CUDA kernels -------===//
//
// On CUDA an elementwise pass is a `__global__` kernel of its own, written
// at file scope before the op's function, which launches it on the
// kernels' stream. A thread takes four adjacent elements
// (runtime/kernels/cuda/ElementQuads.cuh): each array moves as one 16-byte
// (8 for bf16) load or store where it can, and each dropout site draws the
// four factors from one Philox block; the per-element statements run on
// the four in turn.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaTarget.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// Threads a block of an elementwise kernel.
constexpr int kThreads = 256;

/// The local holding an array's four elements.
std::string quadOf(const ElementwiseArray &array) {
  return array.pointer + "_quad";
}

} // namespace

std::string CudaTarget::dropoutFactor(const std::string &site) const {
  // The kernel draws each site's four factors first (dropoutQuad).
  return "factors_" + site + "[q]";
}

void CudaTarget::writeElementwise(const ElementwiseLoop &loop, StringRef name,
                                  raw_ostream &os, raw_ostream &kernels) const {
  SmallVector<std::string> parameters = loop.parameters;
  SmallVector<std::string> arguments = loop.arguments;
  parameters.push_back("int64_t n");
  arguments.push_back("n");
  kernels << "__global__ void " << name << "_kernel("
          << llvm::join(parameters, ", ") << ") {\n"
          << "  const int64_t first = 4 * (blockIdx.x * int64_t(blockDim.x) + "
             "threadIdx.x);\n"
          << "  if (first < n) {\n";
  for (const ElementwiseArray &in : loop.inputs)
    kernels << "    float " << quadOf(in) << "[4];\n"
            << "    kernels::loadQuad(" << in.pointer << ", first, n, "
            << quadOf(in) << ");\n";
  for (const std::string &site : loop.dropoutSites)
    kernels << "    float factors_" << site << "[4];\n"
            << "    kernels::dropoutQuad(" << site << ", first, n, factors_"
            << site << ");\n";
  for (const ElementwiseArray &out : loop.outputs)
    kernels << "    float " << quadOf(out) << "[4];\n";
  std::string iteration = loop.constants;
  for (const ElementwiseArray &in : loop.inputs)
    iteration += "    const float " + in.local + " = " + quadOf(in) + "[q];\n";
  iteration += loop.body;
  for (const ElementwiseArray &out : loop.outputs)
    iteration += "    " + quadOf(out) + "[q] = " + out.local + ";\n";
  kernels << "#pragma unroll\n"
          << "    for (int q = 0; q < 4; ++q) {\n"
          << indented(iteration, 2) << "    }\n";
  for (const ElementwiseArray &out : loop.outputs)
    kernels << "    kernels::storeQuad(" << out.pointer << ", first, n, "
            << quadOf(out) << ");\n";
  kernels << "  }\n}\n\n";
  os << "  " << name << "_kernel<<<((n + 3) / 4 + " << kThreads - 1 << ") / "
     << kThreads << ", " << kThreads << ", 0, kernels::stream()>>>("
     << llvm::join(arguments, ", ") << ");\n"
     << "  TGC_CUDA_CHECK(cudaGetLastError());\n";
}

} // namespace tgc::cpp
