//===- MatmulPrimitive.cpp - oneDNN matmul primitives, made once per shape -===//
//
// Three products run better as a oneDNN matmul primitive than as a GEMM call
// (AMD EPYC, AVX-512, 2 threads, f32):
//  - linear: the primitive adds the bias and applies the activation (an
//    eltwise post-op) while each tile of the output is in registers, so the
//    whole batch is one product (e.g. 2048x256x1024 at 401 GFLOP/s, against
//    325 for the blocks of 128 rows a GEMM call needed to keep the epilogue
//    in cache);
//  - A B^T with K above N (the backward's dX = dH W^T of the FFN's second
//    layer): 2.6's sgemm reaches 270 GFLOP/s at 2048x512x2048, the primitive
//    362;
//  - a bf16 product whose result is rounded to bf16: the primitive rounds
//    each tile as it writes it, so the f32 result is never stored.
// Creating a primitive costs 2-20 ms (its kernels are generated then), so
// each shape's is made on first use and kept for the rest of the run; the
// steady state creates and allocates nothing. Two GEMMs of a pair
// (SideBySide.h) may call at once: the lock makes them take turns, as the
// primitives share their memory objects (and oneDNN's scratchpad).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/WakeCost.h"

#include <dnnl.hpp>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tgc::cpu {

namespace {

using Dt = dnnl::memory::data_type;

struct PrimitiveKey {
  int64_t m, n, k;
  bool transposeA, transposeB, bf16, bias;
  runtime::Activation activation;
  float beta;
  bool bf16Out;
  bool operator==(const PrimitiveKey &o) const {
    return m == o.m && n == o.n && k == o.k && transposeA == o.transposeA &&
           transposeB == o.transposeB && bf16 == o.bf16 && bias == o.bias &&
           activation == o.activation && beta == o.beta && bf16Out == o.bf16Out;
  }
};

/// A primitive and the memory objects its calls point at the operands; the
/// argument map is built once (it holds the same memory objects), so a call
/// allocates nothing.
struct Primitive {
  PrimitiveKey key;
  dnnl::matmul matmul;
  dnnl::memory a, b, bias, out;
  std::unordered_map<int, dnnl::memory> args;
};

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// Row-major [rows, cols], or its transpose stored as [cols, rows].
dnnl::memory::desc matrix(int64_t rows, int64_t cols, bool transposed, Dt type) {
  return dnnl::memory::desc({rows, cols}, type,
                            transposed ? dnnl::memory::dims{1, rows}
                                       : dnnl::memory::dims{cols, 1});
}

/// oneDNN's post-op for linear's activation: the same formulas (swish with
/// alpha 1 is x sigmoid(x)), computed with oneDNN's own approximations.
dnnl::algorithm algorithmOf(runtime::Activation activation) {
  switch (activation) {
  case runtime::Activation::relu:
    return dnnl::algorithm::eltwise_relu;
  case runtime::Activation::gelu:
    return dnnl::algorithm::eltwise_gelu_erf;
  case runtime::Activation::geluTanh:
    return dnnl::algorithm::eltwise_gelu_tanh;
  case runtime::Activation::silu:
    return dnnl::algorithm::eltwise_swish;
  case runtime::Activation::sigmoid:
    return dnnl::algorithm::eltwise_logistic;
  case runtime::Activation::tanh:
    return dnnl::algorithm::eltwise_tanh;
  case runtime::Activation::none:
    break;
  }
  return dnnl::algorithm::undef;
}

/// The post-op's alpha: relu's negative slope (0), swish's beta (1).
float alphaOf(runtime::Activation activation) {
  return activation == runtime::Activation::silu ? 1.0f : 0.0f;
}

std::unique_ptr<Primitive> create(const PrimitiveKey &key) {
  Dt operand = key.bf16 ? Dt::bf16 : Dt::f32;
  auto a = matrix(key.m, key.k, key.transposeA, operand);
  auto b = matrix(key.k, key.n, key.transposeB, operand);
  // A bf16 destination: oneDNN rounds the f32 sums to nearest, ties to
  // even, as runtime::roundToBf16 does.
  auto out = matrix(key.m, key.n, false, key.bf16Out ? Dt::bf16 : Dt::f32);
  auto bias = key.bias ? matrix(1, key.n, false, Dt::f32) : dnnl::memory::desc();
  dnnl::post_ops ops;
  if (key.beta != 0.0f)
    ops.append_sum(key.beta);
  if (key.activation != runtime::Activation::none)
    ops.append_eltwise(1.0f, algorithmOf(key.activation), alphaOf(key.activation),
                       0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  dnnl::engine &engine = cpuEngine();
  dnnl::matmul::primitive_desc desc(dnnl::matmul::desc(a, b, bias, out), attr,
                                    engine);
  auto p = std::unique_ptr<Primitive>(new Primitive{
      key, dnnl::matmul(desc), dnnl::memory(a, engine, nullptr),
      dnnl::memory(b, engine, nullptr),
      key.bias ? dnnl::memory(bias, engine, nullptr) : dnnl::memory(),
      dnnl::memory(out, engine, nullptr), {}});
  p->args = {{DNNL_ARG_SRC, p->a}, {DNNL_ARG_WEIGHTS, p->b}, {DNNL_ARG_DST, p->out}};
  if (key.bias)
    p->args.emplace(DNNL_ARG_BIAS, p->bias);
  return p;
}

/// The primitive for `key`, made on first use; null where oneDNN has none
/// (e.g. bf16 on a CPU without AVX-512), and that answer is kept too.
Primitive *primitiveFor(const PrimitiveKey &key) {
  static std::vector<std::pair<PrimitiveKey, std::unique_ptr<Primitive>>> cache;
  for (auto &[cached, primitive] : cache)
    if (cached == key)
      return primitive.get();
  std::unique_ptr<Primitive> made;
  try {
    made = create(key);
  } catch (const dnnl::error &) {
  }
  cache.emplace_back(key, std::move(made));
  return cache.back().second.get();
}

bool run(const PrimitiveKey &key, const void *a, const void *b,
         const float *bias, void *out) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  // Made (its kernels sized for the team) and run with the same count.
  CallingThreadOnly alone(gemmOnCallingThread(key.m * key.n * key.k));
  Primitive *p = primitiveFor(key);
  if (!p)
    return false;
  static dnnl::stream stream(cpuEngine());
  p->a.set_data_handle(const_cast<void *>(a));
  p->b.set_data_handle(const_cast<void *>(b));
  p->out.set_data_handle(out);
  if (bias)
    p->bias.set_data_handle(const_cast<float *>(bias));
  p->matmul.execute(stream, p->args);
  stream.wait();
  return true;
}

template <typename T, typename Out>
bool primitiveProduct(const T *a, const T *b, const float *bias, Out *out,
                      int64_t m, int64_t n, int64_t k, bool transposeA,
                      bool transposeB, float beta,
                      runtime::Activation activation) {
  PrimitiveKey key{m, n, k, transposeA, transposeB, sizeof(T) == 2,
                   bias != nullptr, activation, beta, sizeof(Out) == 2};
  return run(key, a, b, bias, out);
}

} // namespace

bool matmulPrimitive(const float *a, const float *b, const float *bias,
                     float *out, int64_t m, int64_t n, int64_t k,
                     bool transposeA, bool transposeB, float beta,
                     runtime::Activation activation) {
  return primitiveProduct(a, b, bias, out, m, n, k, transposeA, transposeB,
                          beta, activation);
}

bool matmulPrimitive(const runtime::Bf16 *a, const runtime::Bf16 *b, const float *bias,
                     float *out, int64_t m, int64_t n, int64_t k,
                     bool transposeA, bool transposeB, float beta,
                     runtime::Activation activation) {
  return primitiveProduct(a, b, bias, out, m, n, k, transposeA, transposeB,
                          beta, activation);
}

bool matmulPrimitive(const runtime::Bf16 *a, const runtime::Bf16 *b,
                     const float *bias, runtime::Bf16 *out, int64_t m,
                     int64_t n, int64_t k, bool transposeA, bool transposeB,
                     runtime::Activation activation) {
  return primitiveProduct(a, b, bias, out, m, n, k, transposeA, transposeB,
                          0.0f, activation);
}

} // namespace tgc::cpu
