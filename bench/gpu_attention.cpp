// tgc's CUDA attention kernels alone, on the shapes of the base and big
// models' GPU steps (bench/configs/base-gpu.pbtxt, big-gpu.pbtxt: 384
// sentences of 64 tokens, heads of 64, bf16 products, sequence-major, no
// attention dropout), forward and backward, as the generated step calls them
// (bf16 q, k, v and output, f32 output gradient and lse, bf16 gradients):
//   - "gemms": the batched GEMMs and row kernels (the default);
//   - "fused": the fused kernels of --fused-attention (FusedAttention.cu).
// Two kinds of call: "padded" (a key-padding mask, as the encoder's self-
// and the cross-attention) and "causal" (the decoder's self-attention).
// Each call is timed with CUDA events over repeats after a warm-up; the
// median. Also printed: how far the fused results are from the GEMMs' (the
// largest difference, not a test: cuda.FusedAttention.* checks them).
//
// One JSON object a line on stdout, for bench/gpu_attention.py, which runs
// this program and PyTorch's scaled_dot_product_attention on each of its
// backends on the same shapes, in one table. Built where nvcc is, as
// build/bench/gpu_attention (bench/CMakeLists.txt); needs a GPU.
//   build/bench/gpu_attention [--repeats N]
#include "runtime/kernels/cuda/FusedAttention.h"
#include "runtime/kernels/cuda/Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using tgc::runtime::Bf16;
namespace cuda = tgc::cuda;

struct Model {
  const char *name;
  int64_t batch, heads, length, headWidth;
};
const Model kModels[] = {{"base", 384, 8, 64, 64}, {"big", 384, 16, 64, 64}};

/// Exits with CUDA's or the kernels' message at the first failure.
void ensure(cudaError_t status, const char *what) {
  std::string why;
  if (status != cudaSuccess) {
    std::fprintf(stderr, "gpu_attention: %s: %s\n", what,
                 cudaGetErrorString(status));
    std::exit(1);
  }
  if (cuda::firstError(why)) {
    std::fprintf(stderr, "gpu_attention: %s: %s\n", what, why.c_str());
    std::exit(1);
  }
}

template <typename T> T *deviceArray(size_t count) {
  void *memory = nullptr;
  ensure(cudaMalloc(&memory, count * sizeof(T)), "cudaMalloc");
  return static_cast<T *>(memory);
}

/// `count` values uniform in [-1, 1) (bf16 or f32), the same each run.
template <typename T> void fillUniform(T *device, size_t count, unsigned seed) {
  std::vector<T> host(count);
  unsigned state = seed;
  for (T &x : host) {
    state = state * 1664525u + 1013904223u;
    const float u = static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f;
    if constexpr (sizeof(T) == 2)
      x = tgc::runtime::roundToBf16(u);
    else
      x = u;
  }
  ensure(cudaMemcpy(device, host.data(), count * sizeof(T),
                    cudaMemcpyHostToDevice),
         "upload");
}

template <typename T> std::vector<float> download(const T *device, size_t n) {
  std::vector<T> host(n);
  ensure(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost),
         "download");
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 2)
      values[i] = tgc::runtime::widen(host[i]);
    else
      values[i] = host[i];
  }
  return values;
}

float largestDifference(const std::vector<float> &a,
                        const std::vector<float> &b) {
  float largest = 0.0f;
  for (size_t i = 0; i < a.size(); ++i)
    largest = std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

/// Median milliseconds of `call` on the kernels' stream, after a warm-up.
template <typename Call> double medianMs(int repeats, Call call) {
  cudaEvent_t start, stop;
  ensure(cudaEventCreate(&start), "cudaEventCreate");
  ensure(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 3; ++i)
    call();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    ensure(cudaEventRecord(start, cuda::stream()), "cudaEventRecord");
    call();
    ensure(cudaEventRecord(stop, cuda::stream()), "cudaEventRecord");
    ensure(cudaEventSynchronize(stop), "the attention call");
    float ms = 0.0f;
    ensure(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// One model's tensors: q, k, v, out, lse, the output gradient and the
/// input gradients, in the generated step's types.
struct Tensors {
  explicit Tensors(const Model &m)
      : elements(size_t(m.batch * m.length * m.heads * m.headWidth)),
        rows(size_t(m.batch * m.length * m.heads)) {
    for (Bf16 **x : {&q, &k, &v, &out, &dq, &dk, &dv})
      *x = deviceArray<Bf16>(elements);
    grad = deviceArray<float>(elements);
    lse = deviceArray<float>(rows);
    mask = deviceArray<float>(size_t(m.batch * m.length));
    fillUniform(q, elements, 1);
    fillUniform(k, elements, 2);
    fillUniform(v, elements, 3);
    fillUniform(grad, elements, 4);
    // Every key real, as in the bench's full-length batches: the mask is
    // read all the same.
    ensure(cudaMemset(mask, 0, size_t(m.batch * m.length) * sizeof(float)),
           "cudaMemset");
  }
  ~Tensors() {
    for (void *x :
         {(void *)q, (void *)k, (void *)v, (void *)out, (void *)dq, (void *)dk,
          (void *)dv, (void *)grad, (void *)lse, (void *)mask})
      cudaFree(x);
  }
  size_t elements, rows;
  Bf16 *q, *k, *v, *out, *dq, *dk, *dv;
  float *grad, *lse, *mask;
};

struct Results {
  double forwardMs, backwardMs;
  int64_t fusedCalls;
  std::vector<float> out, dq, dk, dv;
};

Results run(const Model &m, bool causal, bool fused, int repeats, Tensors &t) {
  const cuda::AttentionShape shape{m.batch,
                                   m.heads,
                                   m.length,
                                   m.length,
                                   m.headWidth,
                                   m.headWidth,
                                   /*sequenceMajor=*/true};
  cuda::AttentionConfig config;
  config.mask = causal ? nullptr : t.mask;
  config.causal = causal;
  config.scale = 1.0f / std::sqrt(static_cast<float>(m.headWidth));
  config.bf16Products = true;
  cuda::setFusedAttention(fused);
  const int64_t callsBefore = cuda::fusedAttentionCalls();
  Results r;
  r.forwardMs = medianMs(repeats, [&] {
    cuda::attention(t.q, t.k, t.v, t.out, t.lse, shape, config);
  });
  r.backwardMs = medianMs(repeats, [&] {
    cuda::attentionGrad(t.grad, t.q, t.k, t.v, t.out, t.lse, t.dq, t.dk, t.dv,
                        shape, config);
  });
  r.fusedCalls = cuda::fusedAttentionCalls() - callsBefore;
  ensure(cudaDeviceSynchronize(), "the attention calls");
  r.out = download(t.out, t.elements);
  r.dq = download(t.dq, t.elements);
  r.dk = download(t.dk, t.elements);
  r.dv = download(t.dv, t.elements);
  cuda::setFusedAttention(false);
  return r;
}

} // namespace

int main(int argc, char **argv) {
  int repeats = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--repeats N]\n", argv[0]);
      return 2;
    }
  }
  if (repeats < 1) {
    std::fprintf(stderr, "gpu_attention: --repeats must be at least 1\n");
    return 2;
  }
  ensure(cudaSetDevice(0), "cudaSetDevice");
  for (const Model &m : kModels) {
    Tensors t(m);
    for (bool causal : {false, true}) {
      const Results gemms = run(m, causal, false, repeats, t);
      const Results fused = run(m, causal, true, repeats, t);
      const char *kind = causal ? "causal" : "padded";
      for (const auto &[path, r] :
           {std::pair<const char *, const Results &>{"gemms", gemms},
            {"fused", fused}})
        std::printf("{\"model\": \"%s\", \"kind\": \"%s\", \"path\": \"%s\", "
                    "\"batch\": %lld, \"heads\": %lld, \"length\": %lld, "
                    "\"head_width\": %lld, \"forward_ms\": %.4f, "
                    "\"backward_ms\": %.4f, \"fused_calls\": %lld}\n",
                    m.name, kind, path, (long long)m.batch, (long long)m.heads,
                    (long long)m.length, (long long)m.headWidth, r.forwardMs,
                    r.backwardMs, (long long)r.fusedCalls);
      std::printf("{\"model\": \"%s\", \"kind\": \"%s\", \"fused_vs_gemms\": "
                  "{\"out\": %.3g, \"dq\": %.3g, \"dk\": %.3g, \"dv\": "
                  "%.3g}}\n",
                  m.name, kind, largestDifference(fused.out, gemms.out),
                  largestDifference(fused.dq, gemms.dq),
                  largestDifference(fused.dk, gemms.dk),
                  largestDifference(fused.dv, gemms.dv));
      std::fflush(stdout);
    }
  }
  return 0;
}
