//===- OpenMpLoops.cpp - elementwise passes as OpenMP loops ---------------===//
//
// On the CPU an elementwise pass is `omp parallel for simd` above a size
// where threads pay off. A loop with dropout runs in blocks of 256
// elements whose factors are filled first, four lanes per Philox call and
// many calls at once (kernels::dropoutFactors), instead of one call per
// element.
//
//===----------------------------------------------------------------------===//
#include "codegen/cpp/CppTarget.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// Element counts below this run on one thread (thread start-up costs
/// more than the loop).
constexpr int64_t kParallelThreshold = 1 << 15;
/// Elements per block of a loop with dropout sites: the factors of a
/// block live on the stack (1 KiB a site).
constexpr int64_t kDropoutBlock = 256;

/// Element i of every input into its local, the constants, the body and
/// element i of every result: the statements of one iteration.
std::string iteration(const ElementwiseLoop &loop) {
  std::string text = loop.constants;
  for (const ElementwiseArray &in : loop.inputs) {
    std::string element = in.pointer + "[i]";
    text += "    const float " + in.local + " = " +
            (in.bf16 ? "runtime::widen(" + element + ")" : element) + ";\n";
  }
  text += loop.body;
  for (const ElementwiseArray &out : loop.outputs)
    text += "    " + out.pointer + "[i] = " +
            (out.bf16 ? "runtime::roundToBf16(" + out.local + ")" : out.local) +
            ";\n";
  return text;
}

} // namespace

std::string CppTarget::dropoutFactor(const std::string &site) const {
  // The loop fills each block's factors first (vectorized Philox).
  return "factors_" + site + "[i - start]";
}

void CppTarget::writeElementwise(const ElementwiseLoop &loop, StringRef name,
                                 raw_ostream &os, raw_ostream &kernels) const {
  if (loop.dropoutSites.empty()) {
    os << "#pragma omp parallel for simd if (n >= " << kParallelThreshold
       << ")\n";
    os << "  for (int64_t i = 0; i < n; ++i) {\n" << iteration(loop) << "  }\n";
    return;
  }
  // Blocks of kDropoutBlock elements: each block's factors first.
  os << "#pragma omp parallel for if (n >= " << kParallelThreshold << ")\n"
     << "  for (int64_t start = 0; start < n; start += " << kDropoutBlock
     << ") {\n"
     << "    const int64_t end = n - start < " << kDropoutBlock
     << " ? n : start + " << kDropoutBlock << ";\n";
  for (const std::string &site : loop.dropoutSites)
    os << "    float factors_" << site << "[" << kDropoutBlock << "];\n"
       << "    kernels::dropoutFactors(" << site
       << ", uint64_t(start), end - start, factors_" << site << ");\n";
  os << "#pragma omp simd\n"
     << "    for (int64_t i = start; i < end; ++i) {\n"
     << indented(iteration(loop), 2) << "    }\n  }\n";
}

} // namespace tgc::cpp
