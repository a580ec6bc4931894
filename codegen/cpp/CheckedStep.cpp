//===- CheckedStep.cpp - the CPU entries, checks and profile -------------===//
//
// Each CPU entry calls its op functions in order, the two GEMMs of a
// tg-pair-gemms pair side by side (kernels::sideBySide: a GPU runs its
// stream's kernels one after another either way). The step comes in three
// forms: trainStep, whose Adam runs only from a finite loss;
// checkTrainStep, which the runtime runs to find the first op that made a
// NaN or an infinity; and profileTrainStep with its table of ops
// (--profile).
//
//===----------------------------------------------------------------------===//
#include "codegen/cpp/CppTarget.h"
#include "codegen/lowering/EmitContext.h"

#include "ir/TgLocations.h"
#include "ir/TgOps.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// A step's op call, for the non-finite checks and --profile.
struct FiniteCheck {
  std::string condition;     ///< true when a f32 result is not finite
  std::string what;          ///< "\"tg.matmul at file:line:col\""
  std::string row;           ///< its StepOp row (stepOpRow)
  bool updatesState = false; ///< Adam: skipped after a non-finite loss
};

class EntryWriter {
public:
  EntryWriter(const EntryFunction &entry, raw_ostream &os)
      : entry(entry), os(os) {
    for (const OpCall &call : entry.calls)
      calls.push_back(call.function);
  }

  /// The first call of each pair, with its share of the pair's
  /// multiply-adds. The partner's call is the next one: nextComputingOp
  /// skips exactly the ops the lowering writes no call for.
  void notePairs() {
    for (const OpCall &call : entry.calls) {
      if (!call.op || !call.op->hasAttr(tg::kBesideNextAttr))
        continue;
      double first = tg::multiplyAdds(llvm::cast<tg::MatmulOp>(call.op));
      double second = tg::multiplyAdds(
          llvm::cast<tg::MatmulOp>(tg::nextComputingOp(call.op)));
      pairs[call.function] = first / (first + second);
    }
  }

  LogicalResult noteFiniteChecks(EmitContext &context) {
    for (const OpCall &call : entry.calls)
      if (call.op && failed(noteFiniteCheck(*call.op, call.function, context)))
        return failure();
    return success();
  }

  /// `calls` as statements, each prefixed by `guard(call)`: the first of a
  /// pair and the next call in one kernels::sideBySide; with `lap`, a lap
  /// of profileTrainStep's clock into seconds[i] after each (shared by a
  /// pair).
  void writeCalls(llvm::function_ref<std::string(const std::string &)> guard,
                  bool lap) {
    for (size_t i = 0; i < calls.size(); ++i) {
      auto pair = pairs.find(calls[i]);
      if (pair == pairs.end() || i + 1 == calls.size()) {
        os << guard(calls[i]) << calls[i] << "(f);\n";
        if (lap)
          os << "  clock.lap(seconds[" << i << "]);\n";
        continue;
      }
      os << "  kernels::sideBySide([&] { " << calls[i] << "(f); }, [&] { "
         << calls[i + 1] << "(f); });\n";
      if (lap)
        os << "  clock.lapShared(seconds[" << i << "], seconds[" << i + 1
           << "], " << pair->second << ");\n";
      ++i;
    }
  }

  /// trainStep (Adam guarded by a finite loss), checkTrainStep (the
  /// runtime's search for the first non-finite op) and profileTrainStep
  /// with its table of ops (--profile).
  LogicalResult writeCheckedStep(EmitContext &context);

private:
  LogicalResult noteFiniteCheck(Operation &op, StringRef call,
                                EmitContext &context);

  const EntryFunction &entry;
  raw_ostream &os;
  SmallVector<std::string> calls;
  llvm::StringMap<double> pairs; // tg.beside_next: first call -> its share
  llvm::StringMap<FiniteCheck> checks;
};

LogicalResult EntryWriter::noteFiniteCheck(Operation &op, StringRef call,
                                           EmitContext &context) {
  FiniteCheck check;
  check.updatesState = op.hasTrait<tg::traits::OptimizerStep>();
  for (Value result : op.getResults()) {
    auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.getElementType().isF32())
      continue;
    FailureOr<std::string> pointer = context.pointer(result);
    if (failed(pointer))
      return failure();
    check.condition += (check.condition.empty() ? "" : " ||\n      ") +
                       std::string("!allFinite(") + *pointer + ", " +
                       std::to_string(type.getNumElements()) + ")";
  }
  // A fused group names the ops it computes: one of them is the culprit.
  check.what = stringLiteral(describeOp(&op));
  check.row = stepOpRow(&op);
  checks[call] = std::move(check);
  return success();
}

LogicalResult EntryWriter::writeCheckedStep(EmitContext &context) {
  func::FuncOp function = entry.function;
  auto ret = llvm::cast<func::ReturnOp>(function.getBody().front().back());
  FailureOr<std::string> loss = context.pointer(ret.getOperand(0));
  if (failed(loss))
    return failure();
  // Adam runs only from a finite loss: a diverged step leaves the state as
  // it was, so that checkTrainStep can re-run it on the same batch.
  auto guard = [&](const std::string &call) {
    auto check = checks.find(call);
    bool guarded = check != checks.end() && check->second.updatesState;
    return guarded ? "  if (std::isfinite(*" + *loss + ")) "
                   : std::string("  ");
  };
  os << "void trainStep(StepFrame &f) {\n";
  writeCalls(guard, false);
  os << "}\n\n";
  // --profile: the same calls, each followed by a lap of the clock.
  os << "// trainStep's ops in order, for --profile: kind, what.\n"
     << "const StepOp kTrainStepOps[] = {\n";
  for (const std::string &call : calls) {
    auto check = checks.find(call);
    os << "    "
       << (check == checks.end() ? kStepResultsRow : check->second.row)
       << ",\n";
  }
  os << "};\n\n"
     << "// trainStep, adding each op's time to seconds[i] "
        "(kTrainStepOps[i]).\n"
     << "void profileTrainStep(StepFrame &f, double *seconds) {\n"
     << "  OpClock clock;\n";
  writeCalls(guard, true);
  os << "}\n\n";
  // One op at a time, a pair's too: the same values, and the first
  // non-finite one is found.
  os << "// trainStep's ops without Adam, each result checked: the first op "
        "that\n// produces a NaN or an infinity, or nullptr.\n"
     << "const char *checkTrainStep(StepFrame &f) {\n";
  for (const std::string &call : calls) {
    auto check = checks.find(call);
    if (check == checks.end()) {
      os << "  " << call << "(f);\n";
      continue;
    }
    if (check->second.updatesState)
      continue;
    os << "  " << call << "(f);\n";
    if (!check->second.condition.empty())
      os << "  if (" << check->second.condition << ")\n    return "
         << check->second.what << ";\n";
  }
  os << "  return nullptr;\n}\n\n";
  return success();
}

} // namespace

LogicalResult CppTarget::writeEntry(const EntryFunction &entry,
                                    EmitContext &context,
                                    raw_ostream &os) const {
  EntryWriter writer(entry, os);
  writer.notePairs();
  if (entry.kind == FunctionKind::Step) {
    if (failed(writer.noteFiniteChecks(context)))
      return failure();
    return writer.writeCheckedStep(context);
  }
  os << "void " << entry.name << "(StepFrame &f) {\n";
  writer.writeCalls([](const std::string &) { return "  "; }, false);
  os << "}\n\n";
  return success();
}

std::string CppTarget::checkingStep(const Bucket &bucket) const {
  return "&" + qualified(bucket, "checkTrainStep");
}

} // namespace tgc::cpp
