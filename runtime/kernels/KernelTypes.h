//===- KernelTypes.h - what the CPU and CUDA kernels both take --*- C++ -*-===//
//
// The small structs and constants of runtime/kernels/cpu/Kernels.h and
// runtime/kernels/cuda/Kernels.h, defined once: generated code builds them as
// `kernels::Dropout{...}`, `kernels::AttentionShape{...}` for either target.
// Pointers in them are host memory for the CPU kernels, device memory for
// the CUDA ones. Plain C++ (g++ and nvcc).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELTYPES_H
#define TGC_RUNTIME_KERNELTYPES_H

#include "runtime/kernels/Philox.h"

#include <cstdint>
#include <cstring>

namespace tgc::runtime {

/// The most dimensions a kernel's shape argument has: the kernels keep
/// shapes and strides in arrays of this size, and tg's verifier refuses a
/// tensor of more (tg::kMaxTensorRank, the same number).
inline constexpr int kMaxRank = 8;

/// A bfloat16: the upper half of an f32 (sign, 8 exponent bits, 7 mantissa
/// bits). The element of the GEMM operands tg-mixed-precision makes; a type
/// of its own so that the bf16 kernels are overloads of the f32 ones.
struct Bf16 {
  uint16_t bits;
};

/// `x` rounded to the nearest bf16, ties to even; NaN stays a (quiet) NaN.
/// The rounding of tg.to_bf16 on every backend and in the interpreter.
TGC_HOST_DEVICE inline Bf16 roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it one
    return Bf16{static_cast<uint16_t>((bits >> 16) | 0x40u)};
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return Bf16{static_cast<uint16_t>(bits >> 16)};
}

TGC_HOST_DEVICE inline float widen(Bf16 x) {
  uint32_t bits = static_cast<uint32_t>(x.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// One dropout site (runtime/kernels/Philox.h); rate 0 keeps everything. Passed to
/// kernels by value; factor() runs on the host and on a GPU, with the same
/// numbers.
struct Dropout {
  uint32_t seed = 0, step = 0, opId = 0;
  float rate = 0.0f;
  /// Added to every element index: where this process's rows start in the
  /// global batch of a data-parallel run (its first example times the
  /// elements per example), so that the masks do not depend on how the
  /// batch is split. 0 in one process.
  uint64_t indexOffset = 0;
  /// CUDA only: the step's (seed, step) in device memory, read in place of
  /// `seed` and `step`, so that a replayed CUDA graph, whose kernels keep
  /// the arguments they were captured with, draws each step's own masks.
  /// Null on the CPU.
  const int32_t *deviceKey = nullptr;

  TGC_HOST_DEVICE uint32_t keySeed() const {
    return deviceKey ? static_cast<uint32_t>(deviceKey[0]) : seed;
  }
  TGC_HOST_DEVICE uint32_t keyStep() const {
    return deviceKey ? static_cast<uint32_t>(deviceKey[1]) : step;
  }

  /// What dropout multiplies element `index` by: 0 or 1 / (1 - rate).
  TGC_HOST_DEVICE float factor(uint64_t index) const {
    if (rate <= 0.0f)
      return 1.0f;
    return dropoutKeep(keySeed(), keyStep(), opId, index + indexOffset, rate)
               ? 1.0f / (1.0f - rate)
               : 0.0f;
  }

  /// factor(index + q) for q < 4 from one Philox block (a quarter of the
  /// work of four factor() calls); index + indexOffset must be a multiple
  /// of 4.
  TGC_HOST_DEVICE void factors4(uint64_t index, float f[4]) const {
    if (rate <= 0.0f) {
      f[0] = f[1] = f[2] = f[3] = 1.0f;
      return;
    }
    PhiloxCounter bits =
        dropoutBlock(keySeed(), keyStep(), opId, (index + indexOffset) / 4);
    const float kept = 1.0f / (1.0f - rate);
    for (int q = 0; q < 4; ++q)
      f[q] = uniformFromBits(bits.v[q]) >= rate ? kept : 0.0f;
  }
};

/// What masks add to a hidden score (as the interpreter's kMaskedScore).
inline constexpr float kMaskedScore = -1e9f;

/// Whether an attention row of log-sum-exp `lse` had every key masked (its
/// largest score a masked one). Its lse, -1e9 + log(sum), is -1e9 in f32,
/// so a backward must take its weights from the scores, not exp(s - lse).
TGC_HOST_DEVICE inline bool everyKeyMasked(float lse) {
  return lse <= kMaskedScore / 2;
}

enum class Reduction { Sum, Max, Mean };

/// linear's epilogue activation (tg.linear's `activation`, in its order):
/// each the formula of runtime/kernels/Elementwise.h of that name.
enum class Activation : int32_t {
  none,
  relu,
  gelu,
  geluTanh,
  silu,
  sigmoid,
  tanh
};

/// q [B, H, Sq, Dk], k [B, H, Sk, Dk], v [B, H, Sk, Dv], mask [B, Sk] or null.
struct AttentionShape {
  int64_t batch, heads, queries, keys, keyDim, valueDim;
  /// q, k, v, out as [B, S, H, D] and lse as [B, Sq, H] (tg.attention's
  /// sequence_major) instead of [B, H, S, D] and [B, H, Sq]. The CPU and
  /// CUDA kernels take both.
  bool sequenceMajor = false;
};
struct AttentionConfig {
  const float *mask = nullptr;
  /// Additive score bias [B or 1, H or 1, Sq, Sk], head-major in both
  /// layouts: score (b, h, i, j) adds bias[b * biasBatchStride +
  /// h * biasHeadStride + i * Sk + j], a stride 0 along a broadcast
  /// dimension. Null: none.
  const float *bias = nullptr;
  int64_t biasBatchStride = 0, biasHeadStride = 0;
  /// tg.attention_grad's gradient of the bias (its shape and strides),
  /// overwritten; null when not asked for.
  float *biasGrad = nullptr;
  bool causal = false;
  /// Causal decoding step: query i sits at position causalOffset + i of
  /// the key cache, so it sees keys 0 .. causalOffset + i.
  int64_t causalOffset = 0;
  float scale = 1.0f;
  Dropout dropout; ///< index: flat into the [B, H, Sq, Sk] probabilities
  /// tg.attention's bf16_products (bf16 q, k, v): the probabilities, and in
  /// the gradient dO and the score gradients, are rounded to bf16 for the
  /// products (CPU: bf16 tiles; CUDA: tensor-core GEMMs).
  bool bf16Products = false;
};

/// One tensor of a (multi-tensor) Adam update.
struct AdamTensor {
  float *param, *moment1, *moment2;
  const float *grad;
  int64_t size;
  /// Whether the optimizer step's weight decay applies (AdamW).
  bool decays = false;
};

/// The optimizer step's controls (tg.multi_adam_update's weight, phase,
/// clip and decay operands; ir/TgOptimizerOps.td says what each phase does).
enum UpdatePhase : int32_t {
  kUpdate = 0,          ///< update with weight * grad
  kAccumulateFirst = 1, ///< accumulator = weight * grad, no update
  kAccumulate = 2,      ///< accumulator += weight * grad, no update
  kAccumulateUpdate = 3 ///< update with accumulator + weight * grad
};
struct OptimizerControl {
  float weight = 1.0f;
  int32_t phase = kUpdate;
  float clip = 0.0f; ///< <= 0: no clipping
  /// One float per gradient element, the tensors' in order; needed by the
  /// accumulating phases only.
  float *accumulator = nullptr;
  /// AdamW's decoupled weight decay on the tensors that decay; 0: Adam.
  float weightDecay = 0.0f;
};

/// What global-norm clipping multiplies the gradient by: clip / norm when
/// clipping is on and the norm is above it, else 1 (every backend).
TGC_HOST_DEVICE inline double clipFactor(double norm, double clip) {
  return clip > 0 && norm > clip ? clip / norm : 1.0;
}

/// The largest gradient norm, after clipping, that an Adam update takes,
/// just under sqrt(FLT_MAX). Past it the square of an element can overflow
/// f32 in the second moment, which then freezes that parameter (its step
/// m / sqrt(v) is 0) while the loss stays finite (seen on an H200 with the
/// learning rate x 1e6).
TGC_HOST_DEVICE inline double largestAdamNorm() { return 1.8e19; }

/// Whether an Adam update takes a gradient of global norm `norm` clipped at
/// `clip`: false for a NaN or infinite norm and past largestAdamNorm. Every
/// optimizer makes no update where it is false, and the training loop stops.
TGC_HOST_DEVICE inline bool adamTakes(double norm, double clip) {
  return norm * clipFactor(norm, clip) <= largestAdamNorm();
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_KERNELTYPES_H
