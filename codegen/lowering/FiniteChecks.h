//===- FiniteChecks.h - the step's per-op NaN checks, any target -*- C++ -*-===//
//
// After a step with a non-finite loss the runtime re-runs it op by op on the
// same batch and state (CompiledBucket::checkStep) to name the first op
// that produced a NaN or an infinity. Both targets write that step from
// the checks here; only the function that tests an op's f32 results
// differs (the host's runtime::allFinite, the GPU's cuda::allFinite on
// device memory).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_FINITECHECKS_H
#define TGC_CODEGEN_LOWERING_FINITECHECKS_H

#include "codegen/lowering/ProgramTarget.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>

namespace tgc::cpp {

class EmitContext;

/// A step's op call, for the non-finite checks and --profile.
struct FiniteCheck {
  std::string condition;     ///< true when a f32 result is not finite
  /// Its f32 results, in the arena: (byte offset, floats).
  llvm::SmallVector<std::pair<int64_t, int64_t>> arenaFloats;
  std::string what;          ///< "\"tg.matmul at file:line:col\""
  std::string row;           ///< its StepOp row (stepOpRow)
  bool updatesState = false; ///< the optimizer: not re-run
};

/// The checks of `entry`'s op calls, by call; `allFinite` is the function
/// the conditions call on (pointer, count).
mlir::FailureOr<llvm::StringMap<FiniteCheck>>
noteFiniteChecks(const EntryFunction &entry, EmitContext &context,
                 llvm::StringRef allFinite);

/// The GPU's checkTrainStep: `entry`'s calls without the optimizer's, each
/// op's f32 results checked after it; the first op with a NaN or an
/// infinity, or nullptr. (The CPU's runs its table of calls:
/// runtime::checkStepCalls.)
void writeCheckingStep(const EntryFunction &entry,
                       const llvm::StringMap<FiniteCheck> &checks,
                       llvm::raw_ostream &os);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_FINITECHECKS_H
