//===- TgInterfaces.h - the concerns' op interfaces --------------*- C++ -*-===//
//
// Declared in TgInterfaces.td; implemented as external models by the
// libraries that own each concern. The classes their methods take belong to
// those libraries and are only named here.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_IR_TGINTERFACES_H
#define TGC_IR_TGINTERFACES_H

#include "ir/TimeAxes.h"

#include "mlir/IR/OpDefinition.h"

#include <optional>
#include <string>

namespace tgc {
class GradientBuilder; // passes/gradients/GradientBuilder.h
namespace interp {
class Executor; // codegen/interpreter/Executor.h
} // namespace interp
namespace cpp {
class KernelArgs;  // codegen/calls/KernelArgs.h
class EmitContext; // codegen/lowering/EmitContext.h
} // namespace cpp
} // namespace tgc

#include "ir/TgInterfaces.h.inc"

#endif // TGC_IR_TGINTERFACES_H
