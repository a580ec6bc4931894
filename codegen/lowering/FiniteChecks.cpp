//===- FiniteChecks.cpp - the step's per-op NaN checks, any target --------===//
#include "codegen/lowering/FiniteChecks.h"
#include "codegen/lowering/EmitContext.h"

#include "ir/TgLocations.h"
#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::cpp {

FailureOr<llvm::StringMap<FiniteCheck>>
noteFiniteChecks(const EntryFunction &entry, EmitContext &context,
                 StringRef allFinite) {
  llvm::StringMap<FiniteCheck> checks;
  for (const OpCall &call : entry.calls) {
    if (!call.op)
      continue;
    FiniteCheck check;
    check.updatesState = call.op->hasTrait<tg::traits::OptimizerStep>();
    for (Value result : call.op->getResults()) {
      auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.getElementType().isF32() ||
          tg::isUnwrittenResult(result))
        continue;
      FailureOr<std::string> pointer = context.pointer(result);
      if (failed(pointer))
        return failure();
      FailureOr<int64_t> offset =
          EmitContext::arenaOffset(llvm::cast<OpResult>(result));
      if (failed(offset))
        return failure();
      check.arenaFloats.push_back({*offset, type.getNumElements()});
      check.condition += (check.condition.empty() ? "!" : " ||\n      !") +
                         allFinite.str() + "(" + *pointer + ", " +
                         std::to_string(type.getNumElements()) + ")";
    }
    // A fused group names the ops it computes: one of them is the culprit.
    check.what = stringLiteral(describeOp(call.op));
    check.row = stepOpRow(call.op);
    checks[call.function] = std::move(check);
  }
  return checks;
}

void writeCheckingStep(const EntryFunction &entry,
                       const llvm::StringMap<FiniteCheck> &checks,
                       raw_ostream &os) {
  // One op at a time, a pair's too: the same values, and the first
  // non-finite one is found.
  os << "// trainStep's ops without Adam, each result checked: the first op "
        "that\n// produces a NaN or an infinity, or nullptr.\n"
     << "const char *checkTrainStep(StepFrame &f) {\n";
  for (const OpCall &call : entry.calls) {
    auto check = checks.find(call.function);
    if (check == checks.end()) {
      os << "  " << call.function << "(f);\n";
      continue;
    }
    if (check->second.updatesState)
      continue;
    os << "  " << call.function << "(f);\n";
    if (!check->second.condition.empty())
      os << "  if (" << check->second.condition << ")\n    return "
         << check->second.what << ";\n";
  }
  os << "  return nullptr;\n}\n\n";
}

} // namespace tgc::cpp
