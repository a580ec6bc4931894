//===- TgDialect.h - the tg dialect ------------------------------*- C++ -*-===//
#ifndef TGC_IR_TGDIALECT_H
#define TGC_IR_TGDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/TgDialect.h.inc"

#endif // TGC_IR_TGDIALECT_H
