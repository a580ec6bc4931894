//===- Elementwise.h - the scalar formula of each elementwise op -*- C++ -*-===//
//
// Written once, used everywhere an elementwise tg op is computed: the
// reference interpreter instantiates these in double, generated C++ and CUDA
// steps call them in float (`tgc::elementwise::add(v0, v1)`). Which op uses
// which formula is codegen/ElementwiseOps.def. Plain C++ (g++ and nvcc).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_ELEMENTWISE_H
#define TGC_RUNTIME_KERNELS_ELEMENTWISE_H

#include "runtime/kernels/KernelTypes.h" // Activation, TGC_HOST_DEVICE

#include <cmath>

namespace tgc::elementwise {

template <typename T> TGC_HOST_DEVICE inline T add(T a, T b) { return a + b; }
template <typename T> TGC_HOST_DEVICE inline T sub(T a, T b) { return a - b; }
template <typename T> TGC_HOST_DEVICE inline T mul(T a, T b) { return a * b; }
template <typename T> TGC_HOST_DEVICE inline T div(T a, T b) { return a / b; }
/// max and min propagating NaN (as torch.maximum; std::fmax drops it): a
/// NaN operand makes a + b NaN.
template <typename T> TGC_HOST_DEVICE inline T maximum(T a, T b) {
  return a != a || b != b ? a + b : a > b ? a : b;
}
template <typename T> TGC_HOST_DEVICE inline T minimum(T a, T b) {
  return a != a || b != b ? a + b : a < b ? a : b;
}
// Comparisons as a 0/1 mask; NaN compares false except for notEqual.
template <typename T> TGC_HOST_DEVICE inline T less(T a, T b) {
  return a < b ? T(1) : T(0);
}
template <typename T> TGC_HOST_DEVICE inline T lessEqual(T a, T b) {
  return a <= b ? T(1) : T(0);
}
template <typename T> TGC_HOST_DEVICE inline T greater(T a, T b) {
  return a > b ? T(1) : T(0);
}
template <typename T> TGC_HOST_DEVICE inline T greaterEqual(T a, T b) {
  return a >= b ? T(1) : T(0);
}
template <typename T> TGC_HOST_DEVICE inline T equal(T a, T b) {
  return a == b ? T(1) : T(0);
}
template <typename T> TGC_HOST_DEVICE inline T notEqual(T a, T b) {
  return a != b ? T(1) : T(0);
}
/// tg.where: `onTrue` where the condition is non-zero.
template <typename T> TGC_HOST_DEVICE inline T where(T condition, T onTrue,
                                                     T onFalse) {
  return condition != T(0) ? onTrue : onFalse;
}
template <typename T> TGC_HOST_DEVICE inline T neg(T x) { return -x; }
template <typename T> TGC_HOST_DEVICE inline T exp(T x) { return std::exp(x); }
template <typename T> TGC_HOST_DEVICE inline T log(T x) { return std::log(x); }
template <typename T> TGC_HOST_DEVICE inline T sqrt(T x) { return std::sqrt(x); }
template <typename T> TGC_HOST_DEVICE inline T rsqrt(T x) {
  return T(1) / std::sqrt(x);
}
template <typename T> TGC_HOST_DEVICE inline T tanh(T x) {
  return std::tanh(x);
}
/// 1 / (1 + e^-x), without overflow: e^-|x| is at most 1.
template <typename T> TGC_HOST_DEVICE inline T sigmoid(T x) {
  T e = std::exp(-std::fabs(x));
  return x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
}
template <typename T> TGC_HOST_DEVICE inline T abs(T x) { return std::fabs(x); }
/// x Phi(x), Phi the standard normal distribution function.
template <typename T> TGC_HOST_DEVICE inline T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
/// dy (Phi(x) + x phi(x)), phi the standard normal density.
template <typename T> TGC_HOST_DEVICE inline T geluGrad(T dy, T x) {
  T cdf = T(0.5) * (T(1) + std::erf(x * T(0.70710678118654752440)));
  T pdf = T(0.39894228040143267794) * std::exp(T(-0.5) * x * x);
  return dy * (cdf + x * pdf);
}
/// 0.5 x (1 + tanh(k (x + c x^3))), k = sqrt(2 / pi), c = 0.044715.
template <typename T> TGC_HOST_DEVICE inline T geluTanh(T x) {
  T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + std::tanh(u));
}
template <typename T> TGC_HOST_DEVICE inline T geluTanhGrad(T dy, T x) {
  T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
  T t = std::tanh(u);
  T du = T(0.79788456080286535588) * (T(1) + T(3) * T(0.044715) * x * x);
  return dy * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
}
/// max(0, x); NaN gives 0.
template <typename T> TGC_HOST_DEVICE inline T relu(T x) {
  return x > T(0) ? x : T(0);
}
/// The gradient `dy` of relu passes where the forward input `x` was > 0.
template <typename T> TGC_HOST_DEVICE inline T reluGrad(T dy, T x) {
  return x > T(0) ? dy : T(0);
}
/// x sigmoid(x) (SiLU), as the DSL's silu writes it.
template <typename T> TGC_HOST_DEVICE inline T silu(T x) {
  return x * sigmoid(x);
}
/// tg.linear's epilogue: the formula its `activation` names.
template <typename T>
TGC_HOST_DEVICE inline T activate(runtime::Activation activation, T x) {
  switch (activation) {
  case runtime::Activation::none:
    return x;
  case runtime::Activation::relu:
    return relu(x);
  case runtime::Activation::gelu:
    return gelu(x);
  case runtime::Activation::geluTanh:
    return geluTanh(x);
  case runtime::Activation::silu:
    return silu(x);
  case runtime::Activation::sigmoid:
    return sigmoid(x);
  case runtime::Activation::tanh:
    return tanh(x);
  }
  return x;
}
/// tg.pow: `exponent` is the op's attribute.
template <typename T> TGC_HOST_DEVICE inline T pow(T x, T exponent) {
  return std::pow(x, exponent);
}
/// tg.scale: `factor` is the op's attribute.
template <typename T> TGC_HOST_DEVICE inline T scale(T x, T factor) {
  return factor * x;
}
/// tg.dropout and tg.dropout_grad: `factor` is 0 or 1 / (1 - rate), drawn
/// for the element's index (runtime/kernels/Philox.h).
template <typename T> TGC_HOST_DEVICE inline T dropout(T x, T factor) {
  return x * factor;
}

} // namespace tgc::elementwise

#endif // TGC_RUNTIME_KERNELS_ELEMENTWISE_H
