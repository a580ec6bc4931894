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
    os << "  for (int64_t i = 0; i < n; ++i) {\n"
       << loop.loads << loop.body << loop.stores << "  }\n";
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
  // The loop body two spaces deeper.
  std::string inner = loop.loads + loop.body + loop.stores;
  for (size_t at = 0; at < inner.size(); at = inner.find('\n', at) + 1)
    inner.insert(at, "  ");
  os << "#pragma omp simd\n"
     << "    for (int64_t i = start; i < end; ++i) {\n"
     << inner << "    }\n  }\n";
}

} // namespace tgc::cpp
