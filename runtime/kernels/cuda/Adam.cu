//===- Adam.cu - bias-corrected multi-tensor Adam --------------------===//
//
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// and with AdamW's decoupled weight decay wd, on the tensors that decay,
//   p = p (1 - lr wd) - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
// The corrections fold into two per-step constants computed in double
// (with b2 near 1, 1 - b2^t is a difference of nearly equal numbers), on
// the device: lr and step live in device memory. optimizerStep adds the
// gradient's weight, accumulation, global norm and clipping in front of it
// (runtime/kernels/KernelTypes.h), without a round trip to the host; the
// gradient's weight is device memory too (it changes every step, and a
// replayed CUDA graph keeps the arguments it was captured with).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AdamKernels.cuh"

#include <vector>

namespace tgc::cuda {

namespace {
/// The chunks' device copy: the same every step (persistentTable).
const Chunk *tableOf(const std::vector<Chunk> &chunks) {
  return static_cast<const Chunk *>(
      persistentTable(chunks.data(), chunks.size() * sizeof(Chunk)));
}
} // namespace

void adamUpdate(const AdamTensor *tensors, int count, const float *lr,
                const int32_t *step, float beta1, float beta2, float epsilon) {
  std::vector<Chunk> chunks = chunksOf(tensors, count);
  if (chunks.empty())
    return;
  const Chunk *table = tableOf(chunks);
  if (!table) // the error is kept for firstError()
    return;
  int64_t blocks = static_cast<int64_t>(chunks.size());
  adamKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table, blocks, lr, step, beta1, beta2, epsilon, 0.0f, nullptr,
      nullptr, nullptr);
  TGC_CUDA_CHECK_LAUNCH();
}

void optimizerStep(const AdamTensor *tensors, int count,
                   const OptimizerControl &control, const float *lr,
                   const int32_t *step, const float *weight, float *norm,
                   float beta1, float beta2, float epsilon,
                   const float *loss) {
  std::vector<Chunk> chunks = chunksOf(tensors, count);
  if (chunks.empty())
    return;
  int64_t blocks = static_cast<int64_t>(chunks.size());
  const Chunk *table = tableOf(chunks);
  if (!table) // the error is kept for firstError()
    return;
  Scratch squares(chunks.size() * sizeof(double)), factor(sizeof(float));
  if (squares.failed() || factor.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  gradientKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table, blocks, weight, control.phase, control.accumulator,
      squares.as<double>(), loss);
  TGC_CUDA_CHECK_LAUNCH();
  normKernel<<<1, kThreads, 0, stream()>>>(
      squares.as<double>(), blocks, control.clip, norm, factor.as<float>());
  TGC_CUDA_CHECK_LAUNCH();
  if (control.phase != runtime::kUpdate &&
      control.phase != runtime::kAccumulateUpdate)
    return;
  bool accumulated = control.phase == runtime::kAccumulateUpdate;
  adamKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table, blocks, lr, step, beta1, beta2, epsilon, control.weightDecay,
      accumulated ? nullptr : weight, factor.as<float>(),
      accumulated ? control.accumulator : nullptr);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace tgc::cuda
