//===- ShardedOptimizer.h - Adam on 1/N of the parameters per process -*- C++
//-*-===//
//
// `--shard-optimizer` under mpirun (CPU programs): instead of summing every
// gradient in every process and running Adam on every parameter N times,
// process r
//   1. sums only its share of the gradient region and the token count
//      slot after it over the processes (reduce-scatter: the region split
//      in N nearly equal parts),
//   2. runs Adam on the parameters of that share (the global gradient norm
//      and token count, and so the gradient's weight and clipping, from
//      one summed pair of scalars),
//   3. and the processes exchange their updated parameters (all-gather).
// Each process keeps the Adam moments of its share only: the others are
// zeroed and their whole pages given back to the system, so the moments
// take 1/N of the memory, and so does the gradient accumulator of
// --update-freq. Before a checkpoint, every process adds its
// moments into rank 0's (sumToFirst), which writes them whole.
//
// The compiled step calls countTokens() through StepFrame::allReduceSum
// (the region's gradients become per-token sums, as in the plain
// all-reduce, and no exchange happens yet), then step() through
// StepFrame::optimizerStep, with the kernels' optimizer step to run Adam on
// the share.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_SHARDEDOPTIMIZER_H
#define TGC_RUNTIME_PROGRAM_SHARDEDOPTIMIZER_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/parallel/ProcessGroup.h"

#include <cstdint>
#include <vector>

namespace tgc::runtime {

/// MPI's counts and displacements are ints: the sharded exchanges lay a
/// region of at most this many floats end to end (8 GiB of gradients).
inline constexpr int64_t kMaxShardedFloats = 2147483647;

/// Process r's count of `total` floats split in `n` nearly equal runs, end
/// to end; empty when `total` is past kMaxShardedFloats.
std::vector<int> shareCounts(int64_t total, int64_t n);

class ShardedOptimizer {
public:
  explicit ShardedOptimizer(ProcessGroup &group) : group(group) {}

  /// StepFrame::optimizerStep (through the process's one instance, set by
  /// activate()). With --update-freq (the accumulating phases) each batch's
  /// share is summed as in step 1 and added into an accumulator of the
  /// share only; the last batch's update runs Adam on it (step 2) and the
  /// exchange follows (step 3).
  static float step(StepFrame::OptimizerStepFn plain, const AdamTensor *tensors,
                    int count, const OptimizerControl &control, float lr,
                    int32_t step, float beta1, float beta2, float epsilon);
  /// StepFrame::allReduceSum: this process's gradients times its target
  /// tokens, the token count in the region's last float; remembers the
  /// region for step().
  static void countTokens(StepFrame &f, float *data, int64_t count);
  /// Makes this the instance step() and countTokens() use.
  void activate();

  /// Before rank 0 writes the moments (checkpoints, dumps): every process
  /// adds its share into rank 0's. A collective: every process calls it.
  void gatherMoments();
  /// After rank 0 wrote them: its moments outside its share zeroed again.
  void releaseMoments();

private:
  /// A run of one tensor's elements [begin, end) that this process updates.
  struct Piece {
    int tensor;
    int64_t begin, end;
  };
  /// (Re)computes the share when the step's tensors change (a resumed or
  /// first step, another bucket's arena layout).
  void layOut(const AdamTensor *tensors, int count);
  float run(StepFrame::OptimizerStepFn plain, const AdamTensor *tensors,
            int count, const OptimizerControl &control, float lr, int32_t step,
            float beta1, float beta2, float epsilon);
  /// run()'s accumulating phases, after the reduce-scatter.
  float accumulate(StepFrame::OptimizerStepFn plain,
                   const OptimizerControl &control, float lr, int32_t step,
                   float beta1, float beta2, float epsilon, float *region,
                   int64_t total);
  /// shareTensors: the pieces as Adam's tensors, their gradients read from
  /// the share's sums at `shareGradients` (the region's start after the
  /// reduce-scatter).
  void shareOf(const float *shareGradients);
  /// Adam on shareTensors with `weight` times their gradients (the
  /// clipping and the token weight folded in), then exchangeParameters.
  void updateShare(StepFrame::OptimizerStepFn plain, float weight,
                   const OptimizerControl &control, float lr, int32_t step,
                   float beta1, float beta2, float epsilon, float *region);
  /// The updated parameters of every share to every process (all-gather
  /// through the region, whose gradients are used by then).
  void exchangeParameters(float *region);

  ProcessGroup &group;
  std::vector<AdamTensor> all;       ///< the last layout's, as given
  std::vector<AdamTensor> tensors;   ///< those whose gradients are summed
  /// Those whose gradient is a constant zero outside the summed region (a
  /// parameter that does not reach the loss): updated whole by every
  /// process, their moments kept whole and never gathered.
  std::vector<AdamTensor> outside;
  const float *regionStart = nullptr; ///< the first gradient's first float
  /// countTokens()'s region: the token count slot is its last float.
  float *countedRegion = nullptr;
  int64_t countedFloats = 0;
  int64_t regionFloats = 0; ///< the gradients and the token count slot
  std::vector<int> counts;           ///< floats of the region per process
  int64_t shareBegin = 0, shareEnd = 0; ///< this process's, in the region
  std::vector<Piece> pieces;
  /// Runs of the region between gradients (alignment padding), in floats
  /// from its start: kept zero, as the plain step's all-reduce keeps them.
  std::vector<std::pair<int64_t, int64_t>> gaps;
  std::vector<AdamTensor> shareTensors; ///< the pieces as Adam's tensors
  /// --update-freq: the update's weighted sum of the share's gradients,
  /// the pieces' floats in order (the kernels' accumulator layout).
  std::vector<float> shareAccumulator;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_SHARDEDOPTIMIZER_H
