//===- CheckedStep.cpp - the CPU entries, checks and profile -------------===//
//
// Each CPU entry calls its op functions in order, the two GEMMs of a
// tg-pair-gemms pair side by side (kernels::sideBySide: a GPU runs its
// stream's kernels one after another either way). The step comes in three
// forms: trainStep, whose Adam runs only from a finite loss;
// checkTrainStep, which the runtime runs to find the first op that made a
// NaN or an infinity (FiniteChecks.h); and profileTrainStep with its
// table of ops (--profile).
//
//===----------------------------------------------------------------------===//
#include "codegen/cpp/CppTarget.h"
#include "codegen/lowering/EmitContext.h"
#include "codegen/lowering/FiniteChecks.h"

#include "ir/TgOps.h"

#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

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
      double first = tg::multiplyAdds(call.op);
      double second = tg::multiplyAdds(tg::nextComputingOp(call.op));
      pairs[call.function] = first / (first + second);
    }
  }

  LogicalResult noteFiniteChecks(EmitContext &context) {
    FailureOr<llvm::StringMap<FiniteCheck>> noted =
        cpp::noteFiniteChecks(entry, context, "allFinite");
    if (failed(noted))
      return failure();
    checks = std::move(*noted);
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
  const EntryFunction &entry;
  raw_ostream &os;
  SmallVector<std::string> calls;
  llvm::StringMap<double> pairs; // tg.beside_next: first call -> its share
  llvm::StringMap<FiniteCheck> checks;
};

LogicalResult EntryWriter::writeCheckedStep(EmitContext &context) {
  func::FuncOp function = entry.function;
  auto ret = llvm::cast<func::ReturnOp>(function.getBody().front().back());
  FailureOr<std::string> loss = context.pointer(ret.getOperand(0));
  if (failed(loss))
    return failure();
  // Adam runs only from a finite loss: a diverged step leaves the state as
  // it was, so that checkTrainStep can re-run it on the same batch. A
  // sharded optimizer (f.optimizerStep) is always entered: its collectives
  // need every process, whatever this one's own loss, and it makes no update
  // from a non-finite norm of the summed gradients, as the kernel does not.
  auto guard = [&](const std::string &call) {
    auto check = checks.find(call);
    bool guarded = check != checks.end() && check->second.updatesState;
    return guarded ? "  if (f.optimizerStep || std::isfinite(*" + *loss + ")) "
                   : std::string("  ");
  };
  os << "void trainStep(StepFrame &f) {\n";
  writeCalls(guard, false);
  os << "}\n\n";
  // --profile: the same calls, each followed by a lap of the clock.
  os << "// trainStep's ops in order, for --profile: kind, what, "
        "bytes, flops.\n"
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
  writeCheckingStep(entry, checks, os);
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

} // namespace tgc::cpp
