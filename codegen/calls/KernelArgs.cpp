//===- KernelArgs.cpp - helpers of several kernel-call families -----------===//
//
// The literals more than one family file writes: products of dimensions,
// booleans, dropout sites and the rows x width of a normalized tensor.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"

#include "codegen/lowering/DataParallel.h"

#include <functional>
#include <numeric>

using namespace mlir;

namespace tgc::cpp {

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

std::string b(bool value) { return value ? "true" : "false"; }

std::string dropout(KernelArgs &p, Value key, llvm::APFloat rate,
                    Value runTime, uint64_t opId, Operation *op,
                    int64_t elements) {
  if (!key || (rate.isZero() && !runTime))
    return "kernels::Dropout{}";
  std::string k = p.host(key);
  std::string given = runTime ? "*" + p.host(runTime)
                              : floatLiteral(rate.convertToFloat());
  return "kernels::Dropout" +
         p.target().dropoutSite(k, isStepDropoutKey(key), opId, given,
                                dropoutIndexOffset(op, elements));
}

std::string rowsWidth(Value value) {
  auto shape = shapeOf(value);
  return std::to_string(product(shape.drop_back())) + ", " +
         std::to_string(shape.back());
}

} // namespace tgc::cpp
