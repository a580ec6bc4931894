//===- DeviceStep.h - where a generated CUDA step keeps its data -*- C++ -*-===//
//
// A generated CUDA training step (codegen `--target cuda`) keeps the state,
// the arena, its inputs and its constants in device memory, in the one
// DeviceFrame below; the runtime's main() reaches it through the hooks the
// generated file fills in (runtime/program/CompiledStep.h: DeviceHooks).
// Plain C++: generated .cu files and g++-compiled runtime code include it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_DEVICESTEP_H
#define TGC_RUNTIME_CUDA_DEVICESTEP_H

#include "runtime/program/CompiledStep.h"

#include <cstddef>
#include <cuda_runtime.h>
#include <cstdint>
#include <string>

namespace tgc::cuda {

/// The step's inputs that are not the batch, as the device keeps them.
struct StepScalars {
  float lr;
  int32_t step;
  int32_t dropoutKey[2];
  float gradWeight;
};

struct DeviceFrame {
  float *state = nullptr;
  char *arena = nullptr;
  /// The incremental decoder's caches (the largest bucket's), where the
  /// CPU has StepFrame::cache. Zeros at first; later sentences find the
  /// earlier ones' rows past their position, which decodeStep never reads
  /// (attention stops at the position's key).
  float *cache = nullptr;
  /// The batch ([batch, length] each) and the step's scalars, uploaded by
  /// uploadInputs() at the start of every call. What changes from step to
  /// step lives here, in device memory, so that a replayed CUDA graph
  /// (StepGraphs.h) reads each step's values: the learning rate, the step,
  /// the dropout key (Dropout::deviceKey) and the gradient's weight (the
  /// optimizer's), each a field of one block (`scalars`).
  int32_t *sourceIds = nullptr, *targetInIds = nullptr, *targetOutIds = nullptr;
  StepScalars *scalars = nullptr;
  float *lr = nullptr;
  int32_t *step = nullptr;
  int32_t *dropoutKey = nullptr;
  float *gradWeight = nullptr;
  /// The optimizer step's gradient accumulator (runtime/kernels/
  /// KernelTypes.h), allocated by uploadInputs for the first accumulating
  /// step: only --update-freq > 1 pays for it.
  float *gradAccumulator = nullptr;
  int64_t gradientFloats = 0;
  /// Pinned host buffer predict's logits are downloaded into, made on the
  /// first download and grown to the largest (a run that never decodes
  /// pins none: base and big pinned 3.6 GB at the start), and its floats.
  float *hostLogits = nullptr;
  int64_t hostLogitsFloats = 0;
  /// Pinned host staging for the inputs (the batch's ids, the scalars):
  /// they are copied here and DMA'd to the device asynchronously, and
  /// `inputsCopied` marks when that copy is done and the staging is free.
  int32_t *stagedIds = nullptr;
  StepScalars *stagedScalars = nullptr;
  cudaEvent_t inputsCopied = nullptr;
};

/// The process's one device frame.
DeviceFrame &deviceFrame();

/// Data-parallel runs (runtime/program/parallel/ProcessGroup.h):
/// StepFrame::allReduceSum on device memory, with NCCL on stream()
/// (NcclAllReduce.cu): DeviceHooks::allReduceSum.
void allReduceSum(runtime::StepFrame &f, float *data, int64_t count);

/// What a model needs on the device.
struct DeviceSizes {
  int64_t stateFloats, arenaBytes, sourceIds, targetIds, cacheFloats,
      gradientFloats;
};

/// Picks device 0, creates the stream, allocates everything in `sizes`. Any
/// CUDA error means "no usable GPU": returns false with the reason. Also
/// points runtime::deviceFailed at firstError(): the functions below and
/// the kernels keep their first CUDA error there instead of stopping, and
/// the program shell asks.
bool openDevice(const DeviceSizes &sizes, std::string &why);

/// A device copy of a host constant (generated files upload theirs once);
/// null on an error.
float *uploadConstant(const void *host, size_t bytes);

/// State between host and device (whole buffer, synchronous).
void uploadState(const float *host, int64_t floats);
void downloadState(float *host, int64_t floats);

/// Copies the frame's ids (those not null) and its StepScalars to the
/// device through the pinned staging buffers: returns once the host buffers
/// may change, while the copies still run on stream().
void uploadInputs(const runtime::StepFrame &frame, int64_t sourceIds,
                  int64_t targetIds);

/// Copies the frame's gradient weight to the device again (on stream()),
/// after a data-parallel all-reduce divided it by the global tokens.
void uploadGradWeight(const runtime::StepFrame &frame);

/// Reads `floats` logits at device address `logits` into the pinned host
/// buffer and returns it (synchronous). Zeros once the device has failed
/// (firstError()), so that decoding on the host stays well defined until
/// the shell sees the error.
const float *downloadLogits(const float *logits, int64_t floats);

/// Beam search's reorder on the device: row r of every per-hypothesis cache
/// of `bucket` becomes what row parents[r] was (DeviceHooks::reorderCaches).
void reorderCaches(const runtime::CompiledBucket &bucket,
                   const int64_t *parents);

/// Reads the step's loss, token count, cross-entropy part and gradient
/// norm (synchronous; all but the loss may be null).
void downloadLoss(const float *loss, const int32_t *tokens,
                  const float *crossEntropy, const float *norm,
                  runtime::StepFrame &frame);

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_DEVICESTEP_H
