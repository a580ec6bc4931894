//===- KernelTimes.cpp - what a GPU step's device work cost ---------------===//
#include "runtime/program/main/KernelTimes.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace tgc::runtime {
namespace {

/// The length of the union of `intervals`, each clipped to [begin, end].
uint64_t coveredNanoseconds(std::vector<std::pair<uint64_t, uint64_t>> intervals,
                            uint64_t begin, uint64_t end) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t covered = 0, reached = begin;
  for (auto [start, stop] : intervals) {
    start = std::max(start, reached);
    stop = std::min(stop, end);
    if (start >= stop)
      continue;
    covered += stop - start;
    reached = stop;
  }
  return covered;
}

double milliseconds(uint64_t nanoseconds) {
  return static_cast<double>(nanoseconds) / 1e6;
}

/// The median of `values` in milliseconds (the mean of the middle two of
/// an even count), 0 for none.
double medianMs(std::vector<uint64_t> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  double upper = milliseconds(values[middle]);
  if (values.size() % 2 == 0)
    return (upper + milliseconds(values[middle - 1])) / 2;
  return upper;
}

} // namespace

int OpMarks::opAt(uint64_t time) const {
  auto after = std::upper_bound(
      marks.begin(), marks.end(), time,
      [](uint64_t t, const std::pair<uint64_t, int> &m) { return t < m.first; });
  return after == marks.begin() ? -1 : std::prev(after)->second;
}

void KernelTimes::addStep(uint64_t begin, uint64_t end,
                          const std::vector<DeviceWork> &work) {
  std::vector<std::pair<uint64_t, uint64_t>> intervals;
  intervals.reserve(work.size());
  for (const DeviceWork &w : work) {
    uint64_t took = w.end - w.start;
    Totals &kind = w.kind == DeviceWork::Kernel ? kernels
                   : w.kind == DeviceWork::Copy ? copies
                                                : memsets;
    ++kind.launches;
    kind.nanoseconds += took;
    if (w.kind == DeviceWork::Kernel) {
      Totals &named = byName[w.name];
      ++named.launches;
      named.nanoseconds += took;
    }
    intervals.emplace_back(w.start, w.end);
  }
  if (stepCount++ > 0 && end > begin) {
    laterSpans.push_back(end - begin);
    laterBusy.push_back(coveredNanoseconds(std::move(intervals), begin, end));
  }
}

double KernelTimes::kernelsPerStep() const {
  return stepCount ? static_cast<double>(kernels.launches) / stepCount : 0.0;
}

double KernelTimes::kernelMsPerStep() const {
  return stepCount ? milliseconds(kernels.nanoseconds) / stepCount : 0.0;
}

double KernelTimes::spanMsPerStep() const { return medianMs(laterSpans); }

double KernelTimes::busyMsPerStep() const { return medianMs(laterBusy); }

std::string KernelTimes::shortName(const std::string &name) {
  std::string text = name;
  int status = 0;
  if (char *demangled =
          abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status)) {
    text = demangled;
    std::free(demangled);
  }
  // Without the anonymous namespaces, the return type of a template and
  // the parameters: what tells the kernels apart is their name and
  // template arguments.
  const std::string anonymous = "(anonymous namespace)::";
  for (size_t at; (at = text.find(anonymous)) != std::string::npos;)
    text.erase(at, anonymous.size());
  if (text.rfind("void ", 0) == 0)
    text.erase(0, 5);
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    depth += text[i] == '<' ? 1 : text[i] == '>' ? -1 : 0;
    if (text[i] == '(' && depth == 0 && i > 0) {
      text.resize(i);
      break;
    }
  }
  const size_t limit = 72;
  if (text.size() > limit)
    text = text.substr(0, limit - 3) + "...";
  return text;
}

void KernelTimes::print(std::FILE *out) const {
  if (stepCount == 0) {
    std::fprintf(out, "GPU kernels: no step was recorded\n");
    return;
  }
  std::fprintf(out,
               "GPU kernels of %lld steps: %.1f launches and %.3f ms of "
               "kernels a step; %.1f copies (%.3f ms) and %.1f memsets "
               "(%.3f ms) a step\n",
               static_cast<long long>(stepCount), kernelsPerStep(),
               kernelMsPerStep(),
               static_cast<double>(copies.launches) / stepCount,
               milliseconds(copies.nanoseconds) / stepCount,
               static_cast<double>(memsets.launches) / stepCount,
               milliseconds(memsets.nanoseconds) / stepCount);
  if (!laterSpans.empty()) {
    double span = spanMsPerStep(), busy = busyMsPerStep();
    std::fprintf(out,
                 "steps after the first (medians): %.3f ms a step from its "
                 "start to its loss on the host, the device busy %.3f ms "
                 "(%.1f%%); the other %.3f ms are launch gaps and host work\n",
                 span, busy, span > 0 ? 100.0 * busy / span : 0.0, span - busy);
  }
  std::vector<std::pair<std::string, Totals>> sorted(byName.begin(),
                                                     byName.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
    return a.second.nanoseconds > b.second.nanoseconds;
  });
  std::fprintf(out, "costliest kernels:\n  %10s %7s %9s  %s\n", "ms/step",
               "share", "launches", "kernel");
  double all = static_cast<double>(std::max<uint64_t>(kernels.nanoseconds, 1));
  for (size_t i = 0; i < std::min<size_t>(15, sorted.size()); ++i) {
    const Totals &t = sorted[i].second;
    std::fprintf(out, "  %10.3f %6.1f%% %9.1f  %s\n",
                 milliseconds(t.nanoseconds) / stepCount,
                 100.0 * static_cast<double>(t.nanoseconds) / all,
                 static_cast<double>(t.launches) / stepCount,
                 shortName(sorted[i].first).c_str());
  }
}

} // namespace tgc::runtime
