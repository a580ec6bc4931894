//===- Attention.cpp - decoder axes of attention -------------------------===//
//
// Attention runs one query position at a time over keys and values read
// whole.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

using namespace mlir;

namespace tgc {
namespace {

/// Cross-attention; DeriveDecoder.cpp rewrites self-attention (keys from the
/// target) itself, with key/value caches.
FailureOr<OpAxes> attentionAxes(const AxisRequest &r, tg::AttentionOp op) {
  if (op.getCausal())
    return r.unsupported("a causal attention whose keys come from the "
                         "source (causality orders one sequence's positions)");
  if (!r.isTarget(op.getQuery()) || r.axis != 2)
    return r.unsupported("only queries may come from the target here");
  if (op.getBias())
    return r.unsupported("a score bias is not cut to one query position");
  OpAxes a = r.all(kNoAxis);
  a.operands[0] = a.results[0] = a.results[1] = 2;
  return a;
}

} // namespace

void attachAttentionAxes(MLIRContext &context) {
  // Target op only (recomputed, if at all, whole).
  tg::AttentionOp::attachInterface<
      DecoderAxesModel<tg::AttentionOp, attentionAxes, nullptr>>(context);
}

} // namespace tgc
