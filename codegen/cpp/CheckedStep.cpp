//===- CheckedStep.cpp - the CPU entries, checks and profile -------------===//
//
// Each CPU entry calls its op functions in order, the two GEMMs of a
// tg-pair-gemms pair side by side (kernels::sideBySide: a GPU runs its
// stream's kernels one after another either way). The step comes in three
// forms: trainStep, whose Adam runs only from a finite loss, written as
// calls; checkTrainStep, which the runtime runs to find the first op that
// made a NaN or an infinity (FiniteChecks.h), and profileTrainStep with its
// table of ops (--profile), both the runtime's loops over trainStep's
// calls written as a table (runtime::StepCall).
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
      // Halves where there is nothing to share (a NaN is no C++ literal).
      pairs[call.function] =
          first + second > 0 ? first / (first + second) : 0.5;
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
  /// pair and the next call in one kernels::sideBySide.
  void writeCalls(llvm::function_ref<std::string(const std::string &)> guard) {
    for (size_t i = 0; i < calls.size(); ++i) {
      auto pair = pairs.find(calls[i]);
      if (pair == pairs.end() || i + 1 == calls.size()) {
        os << guard(calls[i]) << calls[i] << "(f);\n";
        continue;
      }
      os << "  kernels::sideBySide([&] { " << calls[i] << "(f); }, [&] { "
         << calls[i + 1] << "(f); });\n";
      ++i;
    }
  }

  /// trainStep (Adam guarded by a finite loss), its table of ops for
  /// --profile, and its calls as data (writeCallTable).
  LogicalResult writeCheckedStep(EmitContext &context);

  /// trainStep's calls as a table, and checkTrainStep (the runtime's search
  /// for the first non-finite op) and profileTrainStep (--profile), which
  /// run it in the runtime's loops.
  void writeCallTable();

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
  os << "// Whether the step's optimizer runs: from a finite loss, or a "
        "sharded one,\n// whose collectives need every process.\n"
     << "static bool mayUpdateState(StepFrame &f) {\n"
     << "  return f.optimizerStep || std::isfinite(*" << *loss << ");\n}\n\n";
  auto guard = [&](const std::string &call) {
    auto check = checks.find(call);
    bool guarded = check != checks.end() && check->second.updatesState;
    return guarded ? std::string("  if (mayUpdateState(f)) ")
                   : std::string("  ");
  };
  os << "void trainStep(StepFrame &f) {\n";
  writeCalls(guard);
  os << "}\n\n";
  os << "// trainStep's ops in order, for --profile: kind, what, "
        "bytes, flops.\n"
     << "const StepOp kTrainStepOps[] = {\n";
  for (const std::string &call : calls) {
    auto check = checks.find(call);
    os << "    "
       << (check == checks.end() ? kStepResultsRow : check->second.row)
       << ",\n";
  }
  os << "};\n\n";
  writeCallTable();
  return success();
}

void EntryWriter::writeCallTable() {
  // The f32 results each call's check tests, in call order.
  os << "// The f32 results of trainStep's ops, checked after each op "
        "after a NaN:\n// byte offset in the arena, floats.\n";
  SmallVector<std::pair<int, int>> ranges; // per call: first, count
  int total = 0;
  std::string results;
  for (const std::string &call : calls) {
    auto check = checks.find(call);
    int count = 0;
    if (check != checks.end() && !check->second.updatesState)
      for (auto [offset, floats] : check->second.arenaFloats) {
        results += "    {" + std::to_string(offset) + ", " +
                   std::to_string(floats) + "},\n";
        ++count;
      }
    ranges.push_back({total, count});
    total += count;
  }
  // Ended by an empty row, which no call counts: C++ has no array of none.
  os << "const ArenaFloats kTrainStepResults[] = {\n"
     << results << "    {0, 0}, // (the end)\n};\n\n";
  // The calls: trainStep's, as data for the runtime's checked run (after a
  // NaN) and profiled one (--profile).
  os << "// trainStep's calls, for its run after a NaN and --profile "
        "(runtime::checkStepCalls,\n// profileStepCalls): the call; what a "
        "NaN after it names, its results' first row\n// and count; whether "
        "it is the optimizer; a pair's share of its multiply-adds.\n"
     << "const StepCall kTrainStepCalls[] = {\n";
  for (size_t i = 0; i < calls.size(); ++i) {
    auto check = checks.find(calls[i]);
    bool updatesState = check != checks.end() && check->second.updatesState;
    os << "    {&" << calls[i];
    auto pair = pairs.find(calls[i]);
    bool beside = pair != pairs.end();
    if (ranges[i].second > 0 || updatesState || beside)
      os << ", "
         << (ranges[i].second > 0 ? check->second.what : std::string("nullptr"))
         << ", " << ranges[i].first << ", " << ranges[i].second;
    if (updatesState || beside)
      os << ", " << (updatesState ? "true" : "false");
    if (beside)
      os << ", " << pair->second;
    os << "},\n";
  }
  os << "};\n"
     << "static_assert(std::size(kTrainStepCalls) == "
        "std::size(kTrainStepOps));\n"
     << "const StepCalls kTrainStep = {kTrainStepCalls, "
        "int(std::size(kTrainStepCalls)),\n"
     << "                              kTrainStepResults, &mayUpdateState};\n\n"
     << "const char *checkTrainStep(StepFrame &f) {\n"
     << "  return checkStepCalls(kTrainStep, f);\n}\n\n"
     << "void profileTrainStep(StepFrame &f, double *seconds) {\n"
     << "  profileStepCalls(kTrainStep, f, seconds);\n}\n\n";
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
  writer.writeCalls([](const std::string &) { return "  "; });
  os << "}\n\n";
  return success();
}

} // namespace tgc::cpp
