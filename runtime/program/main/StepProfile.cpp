//===- StepProfile.cpp - where a compiled step spends its time -----------===//
#include "runtime/program/main/StepProfile.h"

#include <sys/resource.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace tgc::runtime {

StepProfile::StepProfile(const CompiledModel &model)
    : model(model), seconds(model.numBuckets), steps(model.numBuckets, 0) {
  for (int b = 0; b < model.numBuckets; ++b)
    seconds[b].assign(model.buckets[b].numStepOps, 0.0);
}

static long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

void StepProfile::run(const CompiledBucket &bucket, StepFrame &frame) {
  int index = static_cast<int>(&bucket - model.buckets);
  bucket.profileStep(frame, seconds[index].data());
  ++steps[index];
  long faults = minorFaults();
  if (faultsSoFar >= 0)
    stepFaults.push_back(faults - faultsSoFar);
  faultsSoFar = faults;
}

void StepProfile::runWhole(const CompiledBucket &bucket, StepFrame &frame) {
  const DeviceHooks &device = *model.device;
  device.beginProfiledStep(nullptr);
  bucket.trainStep(frame);
  device.endProfiledStep();
  ++wholeSteps;
}

/// Ops whose time is GEMMs (OpenBLAS), for the GEMM share: tg.output_loss
/// is three GEMMs and one pass over their [chunk, V] workspace.
static bool isGemm(std::string_view kind) {
  return kind == "tg.matmul" || kind == "tg.linear" || kind == "tg.output_loss";
}

/// `totals` sorted by time, largest first.
static std::vector<std::pair<std::string, double>>
byTime(const std::map<std::string, double> &totals) {
  std::vector<std::pair<std::string, double>> sorted(totals.begin(),
                                                     totals.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  return sorted;
}

/// A kind's bytes and floating-point operations over the profiled steps.
struct Work {
  double bytes = 0.0, flops = 0.0;
};

/// `amount` (bytes or operations) a second, in billions, 9 wide; "-" for
/// none, or where the time is too short to say (under a microsecond a
/// step, as a no-op's).
static std::string perSecond(double amount, double seconds, int64_t steps) {
  char text[32];
  if (amount > 0.0 && seconds > 1e-6 * static_cast<double>(steps))
    std::snprintf(text, sizeof text, "%9.1f", amount / seconds / 1e9);
  else
    std::snprintf(text, sizeof text, "%9s", "-");
  return text;
}

void StepProfile::print(std::FILE *out) const {
  std::map<std::string, double> byKind, byWhat;
  std::map<std::string, Work> workByKind;
  double total = 0.0, gemm = 0.0;
  int64_t stepCount = 0;
  for (int b = 0; b < model.numBuckets; ++b) {
    stepCount += steps[b];
    const CompiledBucket &bucket = model.buckets[b];
    for (int i = 0; i < bucket.numStepOps; ++i) {
      const StepOp &op = bucket.stepOps[i];
      double s = seconds[b][i];
      byKind[op.kind] += s;
      byWhat[op.what] += s;
      Work &work = workByKind[op.kind];
      work.bytes += static_cast<double>(op.bytes) * steps[b];
      work.flops += static_cast<double>(op.flops) * steps[b];
      total += s;
      if (isGemm(op.kind))
        gemm += s;
    }
  }
  if (wholeSteps > 0)
    std::fprintf(out, "profile of %lld steps run whole (CUDA graphs): the "
                      "device's work, no op's time\n",
                 static_cast<long long>(wholeSteps));
  else if (stepCount == 0 || total <= 0.0)
    std::fprintf(out, stepCount ? "profile: no op's time was recorded\n"
                                : "profile: no step was run\n");
  if (wholeSteps > 0 || stepCount == 0 || total <= 0.0) {
    if (deviceWork.steps() > 0)
      deviceWork.print(out);
    return;
  }
  auto perStep = [&](double s) { return 1e3 * s / stepCount; };
  std::fprintf(out, "profile of %lld steps: %.2f ms/step in the ops\n",
               static_cast<long long>(stepCount), perStep(total));
  // GB/s: the kind's operands and results, each read or written once, a
  // second (a lower bound of its traffic); GFLOP/s: its products'.
  std::fprintf(out, "  %-28s %10s %7s %9s %9s\n", "op kind", "ms/step", "share",
               "GB/s", "GFLOP/s");
  for (const auto &[kind, s] : byTime(byKind)) {
    const Work &work = workByKind.at(kind);
    std::fprintf(out, "  %-28s %10.3f %6.1f%% %s %s\n", kind.c_str(),
                 perStep(s), 100.0 * s / total,
                 perSecond(work.bytes, s, stepCount).c_str(),
                 perSecond(work.flops, s, stepCount).c_str());
  }
  std::fprintf(out, "GEMMs (tg.matmul, tg.linear, tg.output_loss): %.1f%% of "
                    "the step, the rest %.1f%%\n",
               100.0 * gemm / total, 100.0 * (total - gemm) / total);
  if (!stepFaults.empty()) {
    std::vector<long> sorted = stepFaults;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0.0;
    for (long f : sorted)
      sum += static_cast<double>(f);
    std::fprintf(out,
                 "minor page faults per step after the first: mean %.1f, "
                 "median %ld\n",
                 sum / static_cast<double>(sorted.size()),
                 sorted[(sorted.size() - 1) / 2]);
  }
  std::fprintf(out, "costliest source locations (all layers and the "
                    "gradients made there):\n");
  auto sorted = byTime(byWhat);
  for (size_t i = 0; i < std::min<size_t>(10, sorted.size()); ++i)
    std::fprintf(out, "  %10.3f ms %6.1f%%  %s\n", perStep(sorted[i].second),
                 100.0 * sorted[i].second / total, sorted[i].first.c_str());
  if (deviceWork.steps() > 0)
    deviceWork.print(out);
}

} // namespace tgc::runtime
