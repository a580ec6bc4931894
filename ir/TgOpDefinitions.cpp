//===- TgOpDefinitions.cpp - the tg ops' classes mlir-tblgen writes -----===//
// The op classes generated from TgOps.td (builders, accessors, the parsers
// and printers of the assembly format), with the custom<...> directives
// their formats name. In a file of their own because they are most of the
// dialect's compile time: the sanitizer build leaves this file
// uninstrumented (ir/CMakeLists.txt); the verifiers it calls are elsewhere.
#include "ir/TgOps.h"

/// `custom<TypeUnlessSame>(type($x), ref(type($y)))`: `, <type of x>` when
/// it differs from y's, nothing when they are the same (tg.relu_grad's
/// input: its f32 output, or that output's bf16 copy).
static mlir::ParseResult parseTypeUnlessSame(mlir::OpAsmParser &parser,
                                             mlir::Type &type,
                                             mlir::Type same) {
  if (mlir::failed(parser.parseOptionalComma())) {
    type = same;
    return mlir::success();
  }
  return parser.parseType(type);
}

static void printTypeUnlessSame(mlir::OpAsmPrinter &printer, mlir::Operation *,
                                mlir::Type type, mlir::Type same) {
  if (type != same)
    printer << ", " << type;
}

#define GET_OP_CLASSES
#include "ir/TgOps.cpp.inc"
