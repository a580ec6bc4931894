//===- Precision.h - the precision of a compiled step's GEMMs ---*- C++ -*-===//
#ifndef TGC_PASSES_PRECISION_H
#define TGC_PASSES_PRECISION_H

namespace tgc {

/// What the GEMMs of a compiled step multiply: f32, or bf16 copies of their
/// operands with f32 accumulation (tg-mixed-precision). Everything else is
/// f32 in both.
enum class GemmPrecision { fp32, bf16 };

inline const char *nameOf(GemmPrecision precision) {
  return precision == GemmPrecision::bf16 ? "bf16" : "fp32";
}

} // namespace tgc

#endif // TGC_PASSES_PRECISION_H
