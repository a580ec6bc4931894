//===- Linear.cpp - linear: a GEMM with its bias and activation epilogue --===//
//
// Large products without a pre-activation to keep run on a oneDNN matmul
// primitive whose bias and eltwise post-op apply the activation in its tiles
// (MatmulPrimitive.cpp). The rest (small products, no primitive, a bf16
// result of a transcendental activation, and a kept pre-activation, which
// GELU's and SiLU's backward read and a post-op cannot write) run as GEMMs
// of blocks of rows, each followed by the bias and the activation over the
// block while its sums are still in cache, writing the result and the
// pre-activation in one pass. Where a block's bf16 product runs on a
// primitive anyway (AMX), the primitive adds the bias and writes the sums
// into an f32 pre-activation directly, and the epilogue only activates.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace tgc::cpu {

namespace {

/// Rows per block: a block's f32 sums ([512, n], 4 MiB at n = 2048) are
/// still in the last-level cache when the epilogue reads them back, and
/// the GEMM of 512 rows runs near the whole product's rate; blocks of 128
/// (in L2) cost the GEMM more than the cache saves (bench/linear_epilogue.cpp:
/// at 2048x512x2048 with the pre-activation kept, 128 rows 4-10% slower
/// than the unfused linear and activation loop, 512 rows 1% faster to 5%
/// slower).
constexpr int64_t kLinearBlockRows = 512;

void storeAs(float value, float *to) { *to = value; }
void storeAs(float value, Bf16 *to) { *to = runtime::roundToBf16(value); }

/// `row` (n floats) written to `to` as its element type.
template <typename T> void storeRow(const float *row, T *to, int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c)
    storeAs(row[c], to + c);
}

/// to[c] = act(from[c]) (`to` may be `from`). Its own function, compiled
/// once per activation and called by every epilogue: the compiler
/// vectorizes each loop in its own way (whole vectors, shorter ones, or
/// none where a store rounds to bf16), and libmvec's SIMD erf, exp and tanh
/// (VectorMath.h) differ from each other and from the scalar ones in the
/// last bit, so a loop per result type made an f32 result depend on
/// whether the pre-activation beside it was kept in bf16 (seen on an Intel
/// Xeon with AMX).
template <Activation A>
[[gnu::noinline, gnu::target("prefer-vector-width=512")]] void
activateRow(const float *from, float *to, int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c)
    to[c] = elementwise::activate(A, from[c]);
}

/// The epilogue of `count` rows of sums, over the sums' own (scratch)
/// rows: the bias added (and the pre-activation stored) in one pass, the
/// activation in a second (straight into an f32 result; a bf16 one is
/// rounded in a third); without an activation, one pass. With A a
/// compile-time constant the loops have no branch on the activation. `pre`
/// may be null.
template <Activation A, typename Out, typename Pre>
void epilogue(float *sums, const float *bias, Out *out, Pre *pre,
              int64_t count, int64_t n) {
#pragma omp parallel for schedule(static) if (count * n >= (int64_t{1} << 15))
  for (int64_t r = 0; r < count; ++r) {
    float *row = sums + r * n;
    if constexpr (A == Activation::none) {
      // Nothing but the sum to compute: one pass, straight into the results.
      Out *y = out + r * n;
      if (pre) {
        Pre *kept = pre + r * n;
#pragma omp simd
        for (int64_t c = 0; c < n; ++c) {
          const float x = row[c] + bias[c];
          storeAs(x, y + c);
          storeAs(x, kept + c);
        }
      } else {
#pragma omp simd
        for (int64_t c = 0; c < n; ++c)
          storeAs(row[c] + bias[c], y + c);
      }
      continue;
    }
    if (pre) {
      Pre *kept = pre + r * n;
#pragma omp simd
      for (int64_t c = 0; c < n; ++c) {
        row[c] += bias[c];
        storeAs(row[c], kept + c);
      }
    } else {
#pragma omp simd
      for (int64_t c = 0; c < n; ++c)
        row[c] += bias[c];
    }
    if constexpr (std::is_same_v<Out, float>) {
      activateRow<A>(row, out + r * n, n);
    } else {
      activateRow<A>(row, row, n);
      storeRow(row, out + r * n, n);
    }
  }
}

/// Calls `body` with the activation as a compile-time constant (a
/// std::integral_constant), so that each epilogue's loops have no branch on
/// it.
template <typename Body>
void withActivation(Activation activation, Body &&body) {
  using A = Activation;
  switch (activation) {
  case A::none:
    return body(std::integral_constant<A, A::none>{});
  case A::relu:
    return body(std::integral_constant<A, A::relu>{});
  case A::gelu:
    return body(std::integral_constant<A, A::gelu>{});
  case A::geluTanh:
    return body(std::integral_constant<A, A::geluTanh>{});
  case A::silu:
    return body(std::integral_constant<A, A::silu>{});
  case A::sigmoid:
    return body(std::integral_constant<A, A::sigmoid>{});
  case A::tanh:
    return body(std::integral_constant<A, A::tanh>{});
  }
}

/// A block's sums with the bias added by a oneDNN matmul primitive (its
/// bias post-op) into `to` [count, n], where the dispatch (gemm) would run
/// the block's product on a primitive anyway: bf16 operands on AMX. The
/// sums are then the same bits, and the epilogue's bias pass, which read
/// and wrote the block once more, goes. False elsewhere (nothing written).
bool sumsOnPrimitive(const Bf16 *input, const Bf16 *weight, const float *bias,
                     float *to, int64_t count, int64_t k, int64_t n) {
  return bf16GemmOnPrimitive(count, n, k, false, false, oneDnnHasAmx()) &&
         matmulPrimitive(input, weight, bias, to, count, n, k, false, false,
                         0.0f, Activation::none);
}
bool sumsOnPrimitive(const float *, const float *, const float *, float *,
                     int64_t, int64_t, int64_t) {
  return false;
}

/// The epilogue of `count` rows of sums that have their bias (from
/// sumsOnPrimitive): the pre-activation stored where it is kept apart from
/// the sums, and the activation, through a row of thread scratch for a bf16
/// result (the same values as epilogue's).
template <Activation A, typename Out, typename Pre>
void activationEpilogue(const float *sums, Out *out, Pre *pre, int64_t count,
                        int64_t n) {
#pragma omp parallel for schedule(static) if (count * n >= (int64_t{1} << 15))
  for (int64_t r = 0; r < count; ++r) {
    const float *row = sums + r * n;
    if (pre)
      storeRow(row, pre + r * n, n);
    if constexpr (A == Activation::none) {
      storeRow(row, out + r * n, n);
    } else if constexpr (std::is_same_v<Out, float>) {
      activateRow<A>(row, out + r * n, n);
    } else {
      thread_local std::vector<float> activated;
      activated.resize(n);
      activateRow<A>(row, activated.data(), n);
      storeRow(activated.data(), out + r * n, n);
    }
  }
}

template <typename T, typename Out, typename Pre>
void blockedLinear(const T *input, const T *weight, const float *bias,
                   Out *out, Pre *pre, int64_t rows, int64_t k, int64_t n,
                   Activation activation) {
  struct BlockSums;
  float *sums =
      reusedScratch<BlockSums, float>(std::min(kLinearBlockRows, rows) * n);
  // No bias adds zeros: one loop for both.
  struct NoBias;
  if (!bias)
    bias = reusedBuffer<NoBias, float>(n, 0.0f).data();
  for (int64_t r0 = 0; r0 < rows; r0 += kLinearBlockRows) {
    int64_t count = std::min(kLinearBlockRows, rows - r0);
    // An f32 pre-activation takes the sums itself.
    float *keptSums = nullptr;
    if constexpr (std::is_same_v<Pre, float>)
      keptSums = pre ? pre + r0 * n : nullptr;
    float *blockSums = keptSums ? keptSums : sums;
    if (sumsOnPrimitive(input + r0 * k, weight, bias, blockSums, count, k, n)) {
      Pre *apart = keptSums || !pre ? nullptr : pre + r0 * n;
      withActivation(activation, [&](auto a) {
        activationEpilogue<decltype(a)::value>(blockSums, out + r0 * n, apart,
                                               count, n);
      });
      continue;
    }
    gemm(input + r0 * k, weight, sums, count, n, k, false, false, 0.0f);
    withActivation(activation, [&](auto a) {
      epilogue<decltype(a)::value>(sums, bias, out + r0 * n,
                                   pre ? pre + r0 * n : pre, count, n);
    });
  }
}

/// On a primitive: an f32 result with beta 0, a bf16 one rounded as written.
template <typename T>
bool onPrimitive(const T *input, const T *weight, const float *bias,
                 float *out, int64_t rows, int64_t k, int64_t n,
                 Activation activation) {
  return matmulPrimitive(input, weight, bias, out, rows, n, k, false, false,
                         0.0f, activation);
}
bool onPrimitive(const Bf16 *input, const Bf16 *weight, const float *bias,
                 Bf16 *out, int64_t rows, int64_t k, int64_t n,
                 Activation activation) {
  return matmulPrimitive(input, weight, bias, out, rows, n, k, false, false,
                         activation);
}

/// Whether the primitive's result is the activation of its f32 sums rounded
/// once: for a bf16 destination oneDNN computes the transcendental post-ops
/// in less precision (the GELUs: 2-8% of the elements of a 260x96x100
/// product not the rounding of the f32 value), so only the exact ReLU.
template <typename Out> bool roundsOnce(Activation activation) {
  return std::is_same_v<Out, float> || activation == Activation::none ||
         activation == Activation::relu;
}

template <typename T, typename Out>
void linearOf(const T *input, const T *weight, const float *bias, Out *out,
              int64_t rows, int64_t k, int64_t n, Activation activation) {
  if (rows * n * k >= kOneDnnFrom && roundsOnce<Out>(activation) &&
      onPrimitive(input, weight, bias, out, rows, k, n, activation))
    return;
  blockedLinear(input, weight, bias, out, static_cast<float *>(nullptr), rows,
                k, n, activation);
}

/// The f32 kernels' bias from a bf16 one: widened into the calling
/// thread's buffer (n values, exact), so one epilogue serves both.
template <typename Out>
void linearOfBf16Bias(const Bf16 *input, const Bf16 *weight, const Bf16 *bias,
                      Out *out, int64_t rows, int64_t k, int64_t n,
                      Activation activation) {
  struct WidenedBias;
  float *widened = nullptr;
  if (bias) {
    widened = reusedScratch<WidenedBias, float>(n);
    for (int64_t c = 0; c < n; ++c)
      widened[c] = runtime::widen(bias[c]);
  }
  linearOf(input, weight, widened, out, rows, k, n, activation);
}

} // namespace

void linear(const float *input, const float *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const Bf16 *bias, float *out,
            int64_t rows, int64_t k, int64_t n, Activation activation) {
  linearOfBf16Bias(input, weight, bias, out, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const Bf16 *bias, Bf16 *out,
            int64_t rows, int64_t k, int64_t n, Activation activation) {
  linearOfBf16Bias(input, weight, bias, out, rows, k, n, activation);
}

void linear(const float *input, const float *weight, const float *bias,
            float *out, float *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  blockedLinear(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            float *out, float *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  blockedLinear(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            float *out, Bf16 *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  blockedLinear(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, float *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  blockedLinear(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, Bf16 *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  blockedLinear(input, weight, bias, out, pre, rows, k, n, activation);
}

} // namespace tgc::cpu
