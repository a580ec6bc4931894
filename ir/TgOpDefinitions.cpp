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

// tg.residual_layer_norm and its gradient: a LayerNorm (the default kind)
// has beta, returns its mean and gets beta's gradient; an RMSNorm (`rms`,
// printed first) has none of them, so the kind says which are there.

static bool isLayerNorm(tgc::tg::NormKindAttr kind) {
  return !kind || kind.getValue() == tgc::tg::NormKind::layer;
}

/// `custom<NormParams>(ref($kind), $gamma, $beta)`: `%gamma, %beta`, or
/// `%gamma` alone for an RMSNorm.
static mlir::ParseResult parseNormParams(
    mlir::OpAsmParser &parser, tgc::tg::NormKindAttr kind,
    mlir::OpAsmParser::UnresolvedOperand &gamma,
    std::optional<mlir::OpAsmParser::UnresolvedOperand> &beta) {
  if (parser.parseOperand(gamma))
    return mlir::failure();
  if (!isLayerNorm(kind))
    return mlir::success();
  beta.emplace();
  return mlir::failure(parser.parseComma() || parser.parseOperand(*beta));
}

static void printNormParams(mlir::OpAsmPrinter &printer, mlir::Operation *,
                            tgc::tg::NormKindAttr, mlir::Value gamma,
                            mlir::Value beta) {
  printer << gamma;
  if (beta)
    printer << ", " << beta;
}

/// `custom<GammaAndMean>(ref($kind), ref(type($residual)), type($gamma),
/// type($mean))`: gamma's type; a LayerNorm's mean has the row statistics'
/// type.
static mlir::ParseResult parseGammaAndMean(mlir::OpAsmParser &parser,
                                           tgc::tg::NormKindAttr kind,
                                           mlir::Type rows, mlir::Type &gamma,
                                           mlir::Type &mean) {
  if (isLayerNorm(kind))
    mean = tgc::tg::rowStatisticsType(rows);
  return parser.parseType(gamma);
}

static void printGammaAndMean(mlir::OpAsmPrinter &printer, mlir::Operation *,
                              tgc::tg::NormKindAttr, mlir::Type,
                              mlir::Type gamma, mlir::Type) {
  printer << gamma;
}

/// `custom<GammaAndBetaGrad>(ref($kind), type($gamma), type($beta_grad))`:
/// gamma's type, which a LayerNorm's beta gradient has too.
static mlir::ParseResult parseGammaAndBetaGrad(mlir::OpAsmParser &parser,
                                               tgc::tg::NormKindAttr kind,
                                               mlir::Type &gamma,
                                               mlir::Type &betaGrad) {
  if (parser.parseType(gamma))
    return mlir::failure();
  if (isLayerNorm(kind))
    betaGrad = gamma;
  return mlir::success();
}

static void printGammaAndBetaGrad(mlir::OpAsmPrinter &printer,
                                  mlir::Operation *, tgc::tg::NormKindAttr,
                                  mlir::Type gamma, mlir::Type) {
  printer << gamma;
}

#define GET_OP_CLASSES
#include "ir/TgOps.cpp.inc"
