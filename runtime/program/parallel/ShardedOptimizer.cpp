//===- ShardedOptimizer.cpp - Adam on 1/N of the parameters per process --===//
#include "runtime/program/parallel/ShardedOptimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace tgc::runtime {

namespace {

ShardedOptimizer *activeOptimizer = nullptr;

/// Zeroes floats [begin, end) and gives their whole pages back to the
/// system (they read as zeros again, and take no memory until written).
void release(float *begin, float *end) {
  if (begin >= end)
    return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  uintptr_t last = reinterpret_cast<uintptr_t>(end) / page * page;
  if (first >= last) {
    std::memset(begin, 0, static_cast<size_t>(end - begin) * sizeof(float));
    return;
  }
  std::memset(begin, 0, first - reinterpret_cast<uintptr_t>(begin));
  std::memset(reinterpret_cast<void *>(last), 0,
              reinterpret_cast<uintptr_t>(end) - last);
  if (madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED) != 0)
    std::memset(reinterpret_cast<void *>(first), 0, last - first);
}

} // namespace

std::vector<int> shareCounts(int64_t total, int64_t n) {
  if (total < 0 || total > kMaxShardedFloats || n < 1)
    return {};
  std::vector<int> counts(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r)
    counts[r] = static_cast<int>(total * (r + 1) / n - total * r / n);
  return counts;
}

void ShardedOptimizer::activate() { activeOptimizer = this; }

void ShardedOptimizer::countTokens(StepFrame &f, float *data, int64_t count) {
  weighByTokens(f, data, count);
  activeOptimizer->countedRegion = data;
  activeOptimizer->countedFloats = count;
}

float ShardedOptimizer::step(StepFrame::OptimizerStepFn plain,
                             const AdamTensor *tensors, int count,
                             const OptimizerControl &control, float lr,
                             int32_t step, float beta1, float beta2,
                             float epsilon) {
  return activeOptimizer->run(plain, tensors, count, control, lr, step, beta1, beta2,
                     epsilon);
}

void ShardedOptimizer::layOut(const AdamTensor *given, int count) {
  bool same = static_cast<int>(all.size()) == count &&
              regionStart + regionFloats == countedRegion + countedFloats;
  for (int t = 0; same && t < count; ++t)
    same = all[t].grad == given[t].grad && all[t].param == given[t].param;
  if (same)
    return;
  all.assign(given, given + count);
  // The summed gradients lie in one region of the arena (tg-plan-memory);
  // a parameter that does not reach the loss has a constant zero gradient
  // outside it (tgc warns of it), updated whole by every process alike.
  // (Taken into the region's span, the exchanges ran over memory between
  // the two: a segmentation fault, or other data changed.)
  tensors.clear();
  outside.clear();
  for (const AdamTensor &t : all)
    (t.grad >= countedRegion && t.grad + t.size <= countedRegion + countedFloats
         ? tensors
         : outside)
        .push_back(t);
  // The region split in N nearly equal runs of floats.
  const float *lo = countedRegion, *hi = countedRegion;
  if (!tensors.empty()) {
    lo = tensors[0].grad;
    hi = tensors[0].grad + tensors[0].size;
  }
  for (const AdamTensor &t : tensors) {
    lo = std::min(lo, t.grad);
    hi = std::max(hi, t.grad + t.size);
  }
  // The region ends with the token count slot.
  hi = std::max<const float *>(hi, countedRegion + countedFloats);
  regionStart = lo;
  regionFloats = hi - lo;
  const int64_t total = hi - lo, n = group.size();
  counts = shareCounts(total, n);
  if (counts.empty()) { // every process finds the same: one message
    if (group.rank() == 0)
      std::fprintf(stderr,
                   "error: --shard-optimizer: the gradients span %lld floats, "
                   "past the %lld that MPI's int counts reach; train without "
                   "it\n",
                   static_cast<long long>(total),
                   static_cast<long long>(kMaxShardedFloats));
    group.abort(1);
  }
  shareBegin = total * group.rank() / n;
  shareEnd = total * (group.rank() + 1) / n;
  pieces.clear();
  for (int t = 0; t < static_cast<int>(tensors.size()); ++t) {
    int64_t at = tensors[t].grad - lo;
    int64_t begin = std::max(at, shareBegin), end = std::min(at + tensors[t].size, shareEnd);
    if (begin < end)
      pieces.push_back({t, begin - at, end - at});
  }
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (const AdamTensor &t : tensors)
    runs.push_back({t.grad - lo, t.grad - lo + t.size});
  std::sort(runs.begin(), runs.end());
  gaps.clear();
  int64_t covered = 0;
  for (auto [begin, end] : runs) {
    if (begin > covered)
      gaps.push_back({covered, begin});
    covered = std::max(covered, end);
  }
  releaseMoments();
}

void ShardedOptimizer::releaseMoments() {
  // Each tensor's moments outside this process's pieces.
  for (int t = 0; t < static_cast<int>(tensors.size()); ++t) {
    int64_t kept = 0; // elements before it are released
    auto releaseUpTo = [&](int64_t until) {
      release(tensors[t].moment1 + kept, tensors[t].moment1 + until);
      release(tensors[t].moment2 + kept, tensors[t].moment2 + until);
    };
    for (const Piece &piece : pieces)
      if (piece.tensor == t) {
        releaseUpTo(piece.begin);
        kept = piece.end;
      }
    releaseUpTo(tensors[t].size);
  }
}

void ShardedOptimizer::gatherMoments() {
  // Outside its share every process's moments are zeros: the sums are the
  // owners' values.
  for (const AdamTensor &t : tensors) {
    group.sumToFirst(t.moment1, t.size);
    group.sumToFirst(t.moment2, t.size);
  }
}

float ShardedOptimizer::run(StepFrame::OptimizerStepFn plain,
                            const AdamTensor *given, int count,
                            const OptimizerControl &control, float lr,
                            int32_t step, float beta1, float beta2,
                            float epsilon) {
  layOut(given, count);
  float *region = const_cast<float *>(regionStart);
  int64_t total = 0;
  for (int c : counts)
    total += c;
  // This process's part of the per-token sums (countTokens() made them) at
  // the region's start.
  group.reduceScatter(region, counts.data());
  if (control.phase != kUpdate)
    return accumulate(plain, control, lr, step, beta1, beta2, epsilon, region,
                      total);
  // The global norm from the parts' sums of squares, and the global tokens
  // from the process whose part holds the slot.
  double sums[2] = {0, 0};
  for (const Piece &piece : pieces) {
    const float *g = region + (tensors[piece.tensor].grad - regionStart) +
                     piece.begin - shareBegin;
    for (int64_t i = 0; i < piece.end - piece.begin; ++i)
      sums[0] += static_cast<double>(g[i]) * g[i];
  }
  const int64_t slot = total - 1;
  if (slot >= shareBegin && slot < shareEnd)
    sums[1] = region[slot - shareBegin];
  group.sum(sums, 2, "the gradient norm and the token count");
  // The optimizer's weight per global token: Adam's gradient is weight x sums.
  const double weight = control.weight / std::max(sums[1], 1.0);
  const double norm = std::abs(weight) * std::sqrt(sums[0]);
  if (!adamTakes(norm, control.clip))
    return static_cast<float>(norm); // nothing is updated, anywhere
  // Adam on the share, the clipping as its weight.
  shareOf(region);
  updateShare(plain,
              static_cast<float>(weight * clipFactor(norm, control.clip)),
              control, lr, step, beta1, beta2, epsilon, region);
  return static_cast<float>(norm);
}

void ShardedOptimizer::shareOf(const float *shareGradients) {
  shareTensors.clear();
  for (const Piece &piece : pieces) {
    const AdamTensor &t = tensors[piece.tensor];
    shareTensors.push_back(
        {t.param + piece.begin, t.moment1 + piece.begin,
         t.moment2 + piece.begin,
         shareGradients + (t.grad - regionStart) + piece.begin - shareBegin,
         piece.end - piece.begin, t.decays});
  }
}

float ShardedOptimizer::accumulate(StepFrame::OptimizerStepFn plain,
                                   const OptimizerControl &control, float lr,
                                   int32_t step, float beta1, float beta2,
                                   float epsilon, float *region,
                                   int64_t total) {
  // This batch's weight per global token first: the accumulator holds the
  // update's weighted sum (TrainingLoop.cpp weighs each batch by its share
  // of the update's tokens).
  double tokens = 0;
  const int64_t slot = total - 1;
  if (slot >= shareBegin && slot < shareEnd)
    tokens = region[slot - shareBegin];
  group.sum(&tokens, 1, "the token count");
  const float weight =
      static_cast<float>(control.weight / std::max(tokens, 1.0));
  // The kernels' own accumulating phases on the share's gradients, into an
  // accumulator of the share's floats only (the pieces' in order, as the
  // kernels lay one out): the same sums as the plain run's, element by
  // element. The batches of one update may come from different buckets:
  // their gradient regions differ in place, not in layout (tgc refuses
  // buckets whose layouts differ: checkSameGradientLayout in
  // codegen/lowering/DataParallel.cpp), so the pieces stay the same elements.
  shareOf(region);
  int64_t shareFloats = 0;
  for (const Piece &piece : pieces)
    shareFloats += piece.end - piece.begin;
  shareAccumulator.resize(static_cast<size_t>(shareFloats));
  OptimizerControl accumulating;
  accumulating.weight = weight;
  accumulating.phase =
      control.phase == kAccumulateFirst ? kAccumulateFirst : kAccumulate;
  accumulating.accumulator = shareAccumulator.data();
  if (!shareTensors.empty())
    plain(shareTensors.data(), static_cast<int>(shareTensors.size()),
          accumulating, lr, step, beta1, beta2, epsilon);
  // The norm of the whole accumulated gradient, from the shares' squares.
  double squares = 0;
  for (float x : shareAccumulator)
    squares += static_cast<double>(x) * x;
  group.sum(&squares, 1, "the gradient norm");
  const double norm = std::sqrt(squares);
  for (auto [begin, end] : gaps)
    std::memset(region + begin, 0,
                static_cast<size_t>(end - begin) * sizeof(float));
  if (control.phase != kAccumulateUpdate || !adamTakes(norm, control.clip))
    return static_cast<float>(norm);
  // Adam on the share's accumulated gradient, the clipping as its weight
  // (the plain run's update phase scales the accumulator by the same
  // factor).
  int64_t at = 0;
  for (AdamTensor &t : shareTensors) {
    t.grad = shareAccumulator.data() + at;
    at += t.size;
  }
  updateShare(plain, static_cast<float>(clipFactor(norm, control.clip)),
              control, lr, step, beta1, beta2, epsilon, region);
  return static_cast<float>(norm);
}

void ShardedOptimizer::updateShare(StepFrame::OptimizerStepFn plain,
                                   float weight,
                                   const OptimizerControl &control, float lr,
                                   int32_t step, float beta1, float beta2,
                                   float epsilon, float *region) {
  OptimizerControl scaled;
  scaled.weight = weight;
  scaled.weightDecay = control.weightDecay;
  if (!shareTensors.empty())
    plain(shareTensors.data(), static_cast<int>(shareTensors.size()), scaled,
          lr, step, beta1, beta2, epsilon);
  // Zero gradients, whole moments in every process: the same update in
  // each (AdamW's decay), as the plain run's.
  if (!outside.empty())
    plain(outside.data(), static_cast<int>(outside.size()), scaled, lr, step,
          beta1, beta2, epsilon);
  exchangeParameters(region);
}

void ShardedOptimizer::exchangeParameters(float *region) {
  // The updated parameters into their places in the region (the
  // gradients are used), exchanged, and back into every parameter.
  for (const Piece &piece : pieces) {
    const AdamTensor &t = tensors[piece.tensor];
    std::memcpy(region + (t.grad - regionStart) + piece.begin,
                t.param + piece.begin,
                static_cast<size_t>(piece.end - piece.begin) * sizeof(float));
  }
  group.allGather(region, counts.data());
  for (const AdamTensor &t : tensors)
    std::memcpy(t.param, region + (t.grad - regionStart),
                static_cast<size_t>(t.size) * sizeof(float));
  for (auto [begin, end] : gaps)
    std::memset(region + begin, 0,
                static_cast<size_t>(end - begin) * sizeof(float));
}

} // namespace tgc::runtime
