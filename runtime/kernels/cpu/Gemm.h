//===- Gemm.h - the GEMM calls of the CPU kernels -----------------*- C++ -*-===//
#ifndef TGC_RUNTIME_KERNELS_CPU_GEMM_H
#define TGC_RUNTIME_KERNELS_CPU_GEMM_H

#include "runtime/kernels/KernelTypes.h"

#include <cstdint>

namespace tgc::cpu {

/// out [m, n] = op(a) op(b) + beta out, with op(a) [m, k] and op(b) [k, n],
/// row-major (a stored as [k, m] when transposed, b as [n, k]). The library
/// threads the call itself: never call it inside an OpenMP parallel region.
/// f32 operands: oneDNN or OpenBLAS, whichever is faster for the shape.
void gemm(const float *a, const float *b, float *out, int64_t m, int64_t n,
          int64_t k, bool transposeA, bool transposeB, float beta);

/// The library an f32 gemm runs on: OpenBLAS's cblas_sgemm, oneDNN's
/// dnnl_sgemm, or a oneDNN matmul primitive made for the shape (each
/// falling back to the next if oneDNN refuses the call).
enum class GemmLibrary { OpenBlas, OneDnnSgemm, OneDnnPrimitive };
/// The dispatch's rule, measured per shape and per instruction set:
/// `avx512` is whether oneDNN runs AVX-512 kernels on this CPU.
GemmLibrary f32GemmLibrary(int64_t m, int64_t n, int64_t k, bool transposeA,
                           bool transposeB, bool avx512);
/// Whether oneDNN runs AVX-512 kernels here (its effective instruction
/// set, which DNNL_MAX_CPU_ISA may lower).
bool oneDnnHasAvx512();

/// bf16 operands, f32 accumulation and output: a oneDNN matmul primitive
/// where bf16GemmOnPrimitive says so, else oneDNN's bf16 GEMM call
/// (bf16GemmCall). `lda`: a's stored row length where it is not m
/// (transposed) or k (0); such products take the call.
void gemm(const runtime::Bf16 *a, const runtime::Bf16 *b, float *out,
          int64_t m, int64_t n, int64_t k, bool transposeA, bool transposeB,
          float beta, int64_t lda = 0);
/// oneDNN's bf16 GEMM call alone (vdpbf16ps where the CPU has AVX512-BF16;
/// oneDNN emulates it elsewhere, and where it cannot, the operands are
/// widened for sgemm): gemm's fallback, and bench/gemm_shapes.cpp's peer.
void bf16GemmCall(const runtime::Bf16 *a, const runtime::Bf16 *b, float *out,
                  int64_t m, int64_t n, int64_t k, bool transposeA,
                  bool transposeB, float beta, int64_t lda = 0);
/// The bf16 dispatch's rule: whether a product of packed operands runs on a
/// matmul primitive. Only where oneDNN runs AMX kernels (`amx`), which its
/// primitives use and its GEMM call does not, and for products of at least
/// kOneDnnFrom multiply-adds not transposed on the left with K at most 4N,
/// and not both long (K above 1024) and wide (N above 512).
bool bf16GemmOnPrimitive(int64_t m, int64_t n, int64_t k, bool transposeA,
                         bool transposeB, bool amx);
/// Whether oneDNN runs AMX kernels here (its effective instruction set).
bool oneDnnHasAmx();

/// Rounds each row of the f32 [rows, width] `values` to bf16 over the first
/// half of its own storage, and returns the bf16 rows: a [rows, width]
/// operand of leading dimension 2 * width, made without a second buffer.
runtime::Bf16 *roundRowsInPlace(float *values, int64_t rows, int64_t width);
/// One such row (on the calling thread): `width` bf16 values over the first
/// half of `row`.
runtime::Bf16 *roundRowInPlace(float *row, int64_t width);

/// Products of at least this many multiply-adds go to oneDNN.
inline constexpr int64_t kOneDnnFrom = int64_t{1} << 21;

/// out [m, n] = act(op(a) op(b) + bias) + beta out, on a oneDNN
/// matmul primitive made for the shape on first use and kept
/// (MatmulPrimitive.cpp); `bias` may be null. False where oneDNN has no
/// primitive for it (out untouched).
bool matmulPrimitive(const float *a, const float *b, const float *bias,
                     float *out, int64_t m, int64_t n, int64_t k,
                     bool transposeA, bool transposeB, float beta,
                     runtime::Activation activation);
bool matmulPrimitive(const runtime::Bf16 *a, const runtime::Bf16 *b,
                     const float *bias, float *out, int64_t m, int64_t n,
                     int64_t k, bool transposeA, bool transposeB, float beta,
                     runtime::Activation activation);

/// The bf16 product rounded to a bf16 `out` in the primitive's epilogue.
bool matmulPrimitive(const runtime::Bf16 *a, const runtime::Bf16 *b,
                     const float *bias, runtime::Bf16 *out, int64_t m,
                     int64_t n, int64_t k, bool transposeA, bool transposeB,
                     runtime::Activation activation);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_GEMM_H
