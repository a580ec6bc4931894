//===- LossParts.h - the cross-entropy inside a model's loss ----*- C++ -*-===//
//
// A model's loss is one tg.cross_entropy's loss, alone or with extra terms
// (an L2 penalty, an auxiliary loss). tg-derive-predict takes that
// cross-entropy's logits; tg-split-loss returns its loss beside the total.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_LOSSPARTS_H
#define TGC_PASSES_LOSSPARTS_H

#include "ir/TgOps.h"

namespace tgc {

/// The one tg.cross_entropy whose loss `loss` is, alone or with extra terms
/// added (`ce + aux`, scaled or not); null when there is none, or more than
/// one.
tg::CrossEntropyOp modelCrossEntropy(mlir::Value loss);

} // namespace tgc

#endif // TGC_PASSES_LOSSPARTS_H
