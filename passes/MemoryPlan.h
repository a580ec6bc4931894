//===- MemoryPlan.h - static arena offsets for a training step --*- C++ -*-===//
//
// Where every tensor of a step function lives at run time. Variables live in
// the state buffer, arguments where the caller puts them, constants in the
// program; every other op result gets a byte offset in one arena:
//   - a reshape shares its input's bytes (an alias, no copy), and so does a
//     tg.all_reduce's result its operand's (the sum is made in place);
//   - an elementwise op (or group) writes over an operand of its type that
//     dies at it (in place: each element is read before it is written), and
//     so does a tg.matmul_add over its summand (the GEMM adds into it)
//     unless its product reads those bytes, and a tg.embedding_grad over
//     its addend (the scatter adds into it; the sum may be a gradient);
//   - the gradients Adam consumes get a region of their own at the arena's
//     end (they live from their computation to the update anyway), one
//     contiguous run of bytes that data-parallel steps all-reduce at once;
//     a step with a tg.all_reduce keeps one more aligned float after it,
//     the token count slot, so that the same call sums the processes'
//     target tokens beside their gradients;
//   - the rest share bytes when their lifetimes (first definition to last
//     use, in program order) do not overlap, placed greedily by size.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_MEMORYPLAN_H
#define TGC_PASSES_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>

namespace tgc {

/// Every allocation in the arena starts at a multiple of this (a cache line,
/// and the widest vector load).
inline constexpr int64_t kArenaAlignment = 64;

/// The attribute on each op of a planned function: one arena offset per
/// result, -1 for results that live elsewhere (aliases, state, constants).
inline constexpr llvm::StringLiteral kArenaOffsetsAttr = "tg.arena_offsets";
/// The attribute on a planned tg.all_reduce: the arena offset of the token
/// count slot right after the gradient region (see MemoryPlan.h's header).
inline constexpr llvm::StringLiteral kTokenCountOffsetAttr =
    "tg.token_count_offset";
/// The function attribute with the plan's figures (MemoryReport's fields).
inline constexpr llvm::StringLiteral kMemoryAttr = "tg.memory";

/// Bytes, per kind, of one training step.
struct MemoryReport {
  int64_t weights = 0;          ///< parameters, trainable or frozen
  int64_t optimizerState = 0;   ///< the Adam moments
  int64_t gradients = 0;        ///< the arena's gradient region
  int64_t savedActivations = 0; ///< forward values the backward reads
  int64_t savedBf16 = 0;        ///< of which bf16 GEMM operands
  int64_t scratch = 0;          ///< the rest of the arena
  int64_t inputs = 0;           ///< the step's arguments (the batch)
  int64_t arena = 0;            ///< gradients + the reused part
  int64_t unplanned = 0;        ///< every arena value, without reuse

  int64_t peak() const { return weights + optimizerState + arena + inputs; }
  /// The figures as a table, one kind per line.
  std::string format() const;
};

struct MemoryPlan {
  /// Arena offset of each op result that lives in the arena.
  llvm::DenseMap<mlir::Value, int64_t> offsets;
  /// The token count slot's arena offset; -1 in a step without tg.all_reduce.
  int64_t tokenCountOffset = -1;
  MemoryReport report;
};

/// Plans `function`'s single block. Fails (with a diagnostic) on a value
/// without a static shape or an element type other than f32/i32.
mlir::FailureOr<MemoryPlan> planMemory(mlir::func::FuncOp function);

/// Reads back what tg-plan-memory attached to `function`.
mlir::FailureOr<MemoryReport> readMemoryReport(mlir::func::FuncOp function);

} // namespace tgc

#endif // TGC_PASSES_MEMORYPLAN_H
