//===- TgOps.td - the tg dialect's ops -------------------------*- tablegen -*-===//
//
// Every op of the tg dialect, one file per family, in this order: state
// (TgStateOps.td), the tensor ops the model is written in and their gradients
// (TgTensorOps.td), softmax/layer norm/dropout, masks, positions and loss
// (TgNNOps.td), the ops of the fusion passes (TgFusedOps.td) and the
// optimizer (TgOptimizerOps.td). This file is what tablegen reads: the
// generated TgOps.h.inc and TgOps.cpp.inc hold all of them.
//
//===----------------------------------------------------------------------===//

#ifndef TG_OPS_TD
#define TG_OPS_TD

include "ir/TgBase.td"
include "mlir/IR/SymbolInterfaces.td"

include "ir/TgStateOps.td"
include "ir/TgTensorOps.td"
include "ir/TgNNOps.td"
include "ir/TgFusedOps.td"
include "ir/TgOptimizerOps.td"

#endif // TG_OPS_TD
