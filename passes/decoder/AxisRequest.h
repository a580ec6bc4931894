//===- AxisRequest.h - what a decoder-axes model is asked -------*- C++ -*-===//
//
// The models of DecoderAxesOpInterface, one file per op family, are written
// as two plain functions per op (either may be null): the time-axis rule and
// the position rule, each given a request with its helpers. DecoderAxesModel
// turns the pair into the external model; the families' attach functions are
// called by registerDecoderAxisModels (DecoderAxes.h).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_DECODER_AXISREQUEST_H
#define TGC_PASSES_DECODER_AXISREQUEST_H

#include "passes/decoder/DecoderAxes.h"

#include "ir/TgOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>

namespace tgc {

//===----------------------------------------------------------------------===//
// Target ops: from the time axis of an operand to all of them
//===----------------------------------------------------------------------===//

/// What a time-axis rule is asked, and its helpers.
struct AxisRequest {
  mlir::Operation *op;
  int64_t axis; ///< of the op's first operand that depends on the target
  llvm::function_ref<bool(mlir::Value)> isTarget;

  /// Every operand and result at `a`.
  OpAxes all(int64_t a) const;
  /// Whether `axis` is not the result's last dimension (normalized over).
  bool notLast() const;
  mlir::FailureOr<OpAxes> unsupported(const llvm::Twine &why) const;
};

//===----------------------------------------------------------------------===//
// Recomputed values: from the time axis of the result back to the operands
//===----------------------------------------------------------------------===//

/// What a position rule is asked, and its helpers.
struct PositionRequest {
  mlir::OpBuilder &b;
  mlir::Value value; ///< a result of `op`
  mlir::Operation *op;
  int64_t axis; ///< of `value`
  mlir::Value position;

  /// Every operand recomputed whole.
  llvm::SmallVector<int64_t> wholeOperands() const;
  mlir::FailureOr<PositionRecipe> cannot() const;
  /// cannot(), saying why.
  mlir::FailureOr<PositionRecipe> cannot(const llvm::Twine &why) const;
};

//===----------------------------------------------------------------------===//
// Helpers shared by the families
//===----------------------------------------------------------------------===//

int64_t rankOf(mlir::Value value);

/// The dimension of `to` that holds dimension `axis` of `from` for a
/// row-major reshape, or kNoAxis when the reshape merges or splits it.
int64_t reshapeAxis(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to,
                    int64_t axis);

/// The axis stays where it is (ops with the Elementwise trait).
mlir::FailureOr<OpAxes> sameAxes(const AxisRequest &r, mlir::Operation *);
mlir::FailureOr<PositionRecipe> samePosition(const PositionRequest &r,
                                             mlir::Operation *op);

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// DecoderAxesOpInterface for OpT from its two rules. A null rule refuses
/// that direction, as an op without a rule does.
template <typename OpT,
          mlir::FailureOr<OpAxes> (*Time)(const AxisRequest &, OpT),
          mlir::FailureOr<PositionRecipe> (*Position)(const PositionRequest &,
                                                      OpT)>
struct DecoderAxesModel
    : tg::DecoderAxesOpInterface::ExternalModel<
          DecoderAxesModel<OpT, Time, Position>, OpT> {
  mlir::FailureOr<OpAxes> getTimeAxes(mlir::Operation *op,
                                      const AxisRequest &request) const {
    if constexpr (Time == nullptr)
      return request.unsupported("no rule for this op");
    else
      return Time(request, llvm::cast<OpT>(op));
  }
  mlir::FailureOr<PositionRecipe>
  recomputePosition(mlir::Operation *op, const PositionRequest &request) const {
    if constexpr (Position == nullptr)
      return request.cannot();
    else
      return Position(request, llvm::cast<OpT>(op));
  }
};

/// DecoderAxesOpInterface for an op that cannot run one position at a time
/// in either direction, for `Reason` (a string with static storage): said
/// in both refusals.
template <typename OpT, const char *Reason>
struct NoDecoderAxes
    : tg::DecoderAxesOpInterface::ExternalModel<NoDecoderAxes<OpT, Reason>,
                                                OpT> {
  mlir::FailureOr<OpAxes> getTimeAxes(mlir::Operation *,
                                      const AxisRequest &request) const {
    return request.unsupported(Reason);
  }
  mlir::FailureOr<PositionRecipe>
  recomputePosition(mlir::Operation *, const PositionRequest &request) const {
    return request.cannot(Reason);
  }
};

/// Each family's models, attached to its ops (passes/decoder/<Family>.cpp).
void attachTensorAxes(mlir::MLIRContext &context);
void attachGemmAxes(mlir::MLIRContext &context);
void attachNormAxes(mlir::MLIRContext &context);
void attachAttentionAxes(mlir::MLIRContext &context);
void attachStateAxes(mlir::MLIRContext &context);
void attachLossAxes(mlir::MLIRContext &context);

} // namespace tgc

#endif // TGC_PASSES_DECODER_AXISREQUEST_H
