//===- ElementQuadsProbe.cu - a generated kernel's quads on the GPU ------===//
//
// The kernel codegen/cuda/ElementwiseKernels.cpp writes for one dropout,
// with its quad loads, factors and stores, over f32 or bf16 arrays, for the
// test that it computes each element as the CPU does and writes nothing
// else; on the GPU, and one thread after another on the host (the quads'
// functions are host code too), which needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/ElementQuadsProbe.h"

#include "runtime/kernels/cuda/ElementQuads.cuh"

namespace tgc::test {
namespace {

/// One thread's work: the elements [first, first + 4) below n.
template <typename In, typename Out>
TGC_HOST_DEVICE void quadDropout(const In *in, Out *out,
                                 const cuda::Dropout &drop, int64_t n,
                                 int64_t first) {
  float x[4], factors[4], y[4];
  cuda::loadQuad(in, first, n, x);
  cuda::dropoutQuad(drop, first, n, factors);
#pragma unroll
  for (int q = 0; q < 4; ++q)
    y[q] = x[q] * factors[q];
  cuda::storeQuad(out, first, n, y);
}

template <typename In, typename Out>
__global__ void quadDropoutKernel(const In *in, Out *out, cuda::Dropout drop,
                                  int64_t n) {
  const int64_t first = 4 * (blockIdx.x * int64_t(blockDim.x) + threadIdx.x);
  if (first < n)
    quadDropout(in, out, drop, n, first);
}

/// `values` as T (bf16: rounded).
template <typename T>
std::vector<T> converted(const std::vector<float> &values) {
  std::vector<T> host(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    if constexpr (std::is_same_v<T, float>)
      host[i] = values[i];
    else
      host[i] = runtime::roundToBf16(values[i]);
  return host;
}

template <typename T> std::vector<float> widened(const std::vector<T> &host) {
  std::vector<float> values(host.size());
  for (size_t i = 0; i < host.size(); ++i)
    if constexpr (std::is_same_v<T, float>)
      values[i] = host[i];
    else
      values[i] = runtime::widen(host[i]);
  return values;
}

/// `values` on the device as T; free with cudaFree.
template <typename T> T *upload(const std::vector<float> &values) {
  std::vector<T> host = converted<T>(values);
  T *device = nullptr;
  TGC_CUDA_CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
  TGC_CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T),
                            cudaMemcpyHostToDevice));
  return device;
}

template <typename T>
std::vector<float> download(const T *device, size_t size) {
  std::vector<T> host(size);
  TGC_CUDA_CHECK(cudaMemcpy(host.data(), device, size * sizeof(T),
                            cudaMemcpyDeviceToHost));
  return widened(host);
}

/// Where the kernel writes: `in` itself where `inPlace` (In and Out the
/// same), else `out`.
template <typename In, typename Out>
Out *target(In *in, Out *out, bool inPlace) {
  if constexpr (std::is_same_v<In, Out>)
    return inPlace ? in : out;
  return out;
}

/// The kernel's work on the device, or its threads one after another on
/// the host.
template <typename In, typename Out>
std::vector<float> run(const std::vector<float> &input,
                       const std::vector<float> &output, int64_t start,
                       int64_t count, const cuda::Dropout &dropout,
                       bool inPlace, bool onDevice) {
  if (!onDevice) {
    std::vector<In> in = converted<In>(input);
    std::vector<Out> out = converted<Out>(output);
    Out *written = target(in.data(), out.data(), inPlace);
    for (int64_t first = 0; first < count; first += 4)
      quadDropout(in.data() + start, written + start, dropout, count, first);
    return widened(std::vector<Out>(written, written + out.size()));
  }
  In *in = upload<In>(input);
  Out *out = upload<Out>(output);
  Out *written = target(in, out, inPlace);
  constexpr int kThreads = 256;
  const int64_t quads = (count + 3) / 4;
  quadDropoutKernel<<<static_cast<unsigned>((quads + kThreads - 1) / kThreads),
                      kThreads>>>(in + start, written + start, dropout, count);
  TGC_CUDA_CHECK(cudaGetLastError());
  std::vector<float> result = download(written, output.size());
  TGC_CUDA_CHECK(cudaFree(in));
  TGC_CUDA_CHECK(cudaFree(out));
  return result;
}

/// run<In, Out> with the element types bf16In and bf16Out name.
template <typename... Args>
std::vector<float> runByTypes(bool bf16In, bool bf16Out, const Args &...args) {
  using runtime::Bf16;
  if (bf16In)
    return bf16Out ? run<Bf16, Bf16>(args...) : run<Bf16, float>(args...);
  return bf16Out ? run<float, Bf16>(args...) : run<float, float>(args...);
}

} // namespace

std::vector<float> deviceQuadDropout(const std::vector<float> &input,
                                     const std::vector<float> &output,
                                     int64_t start, int64_t count,
                                     const cuda::Dropout &dropout, bool bf16In,
                                     bool bf16Out, bool inPlace) {
  return runByTypes(bf16In, bf16Out, input, output, start, count, dropout,
                    inPlace, /*onDevice=*/true);
}

std::vector<float> hostQuadDropout(const std::vector<float> &input,
                                   const std::vector<float> &output,
                                   int64_t start, int64_t count,
                                   const cuda::Dropout &dropout, bool bf16In,
                                   bool bf16Out, bool inPlace) {
  return runByTypes(bf16In, bf16Out, input, output, start, count, dropout,
                    inPlace, /*onDevice=*/false);
}

} // namespace tgc::test
