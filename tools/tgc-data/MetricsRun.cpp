//===- MetricsRun.cpp - one --metrics file read for drawing ---------------===//
#include "tools/tgc-data/MetricsRun.h"

#include "common/Nesting.h"
#include "runtime/data/Vocabulary.h"

#include "llvm/Support/JSON.h"

#include <cmath>

namespace json = llvm::json;

namespace tgc::data {
namespace {

/// "7:12: message" from LLVM's "[1:12, byte=11]: message" (one line parsed
/// at a time, so its own line number is always 1).
std::string jsonErrorAt(llvm::Error error, size_t line) {
  std::string text = llvm::toString(std::move(error));
  std::string where = std::to_string(line);
  if (text.starts_with("[1:")) {
    size_t comma = text.find(','), close = text.find("]: ");
    if (comma != std::string::npos && close != std::string::npos) {
      where.append(":").append(text, 3, comma - 3);
      text = text.substr(close + 3);
    }
  }
  return where + ": invalid JSON: " + text;
}

/// Adds `key` of `record` to `curve` at `step`; a null (or no key) is a gap.
/// Returns an error for a value that is neither a number nor null.
std::string addStepValue(const json::Object &record, const char *key,
                         int64_t step, StepCurve &curve) {
  const json::Value *value = record.get(key);
  if (!value || value->getAsNull()) {
    curve[step] = std::nullopt;
    return {};
  }
  std::optional<double> number = value->getAsNumber();
  if (!number)
    return std::string("\"") + key + "\" is not a number or null";
  // 1e999 parses as infinity; past 1e300 an axis's range overflows.
  if (!std::isfinite(*number) || std::fabs(*number) > 1e300)
    return std::string("\"") + key + "\" is " + std::to_string(*number) +
           ", not a finite number a curve can show (null leaves a gap)";
  curve[step] = *number;
  return {};
}

/// A "run" record's schedule (runtime/program/train/Metrics.h's
/// scheduleRecord); an error names the field that is wrong.
std::string readSchedule(const json::Object &record, WarmupSchedule &out) {
  std::optional<llvm::StringRef> name = record.getString("lr_scheduler");
  bool known = false;
  for (LrScheduler kind : {LrScheduler::InverseSqrt, LrScheduler::Cosine,
                           LrScheduler::Linear, LrScheduler::Constant})
    if (name && *name == lrSchedulerName(kind)) {
      out.kind = kind;
      known = true;
    }
  if (!known)
    return "\"lr_scheduler\" is not inverse_sqrt, cosine, linear or constant";
  std::optional<double> peak = record.getNumber("lr_peak"),
                        minimum = record.getNumber("lr_min");
  std::optional<int64_t> warmup = record.getInteger("lr_warmup"),
                         last = record.getInteger("lr_last_step");
  // Finite too: an infinite peak drew NaN coordinates.
  if (!peak || !(*peak > 0) || !std::isfinite(*peak))
    return "\"lr_peak\" is not a finite number > 0";
  if (!minimum || !(*minimum >= 0) || !std::isfinite(*minimum))
    return "\"lr_min\" is not a finite number >= 0";
  if (!warmup || *warmup < 0 || *warmup > kMaxMetricsStep)
    return "\"lr_warmup\" is not an integer from 0 to " +
           std::to_string(kMaxMetricsStep);
  if (!last || *last < 0 || *last > kMaxMetricsStep)
    return "\"lr_last_step\" is not an integer from 0 to " +
           std::to_string(kMaxMetricsStep);
  out.peak = *peak;
  out.minimum = *minimum;
  out.warmupSteps = *warmup;
  out.lastStep = *last;
  return {};
}

/// Reads one record into `run`; an error names what is wrong with it.
std::string addMetricsRecord(const json::Value &value, MetricsRun &run) {
  const json::Object *record = value.getAsObject();
  if (!record)
    return "not a JSON object";
  std::optional<llvm::StringRef> kind = record->getString("kind");
  if (!kind)
    return "no \"kind\" string";
  if (*kind != "train" && *kind != "valid" && *kind != "run")
    return {}; // another kind of record: not drawn
  const json::Value *stepValue = record->get("step");
  if (!stepValue)
    return "no \"step\"";
  std::optional<int64_t> step = stepValue->getAsInteger();
  if (!step || *step < 0 || *step > kMaxMetricsStep)
    return "\"step\" is not an integer from 0 to " +
           std::to_string(kMaxMetricsStep);
  if (*kind == "run") {
    ScheduleSpan span{{}, *step, *step};
    if (std::string error = readSchedule(*record, span.schedule);
        !error.empty())
      return "\"run\" record: " + error;
    if (const json::Value *smoothing = record->get("label_smoothing")) {
      std::optional<double> value = smoothing->getAsNumber();
      if (!value || !(*value >= 0 && *value < 1))
        return "\"run\" record: \"label_smoothing\" is not a number in "
               "[0, 1)";
      run.labelSmoothing = *value;
    }
    run.schedules.push_back(span);
    return {};
  }
  if (!run.schedules.empty())
    run.schedules.back().lastStep =
        std::max(run.schedules.back().lastStep, *step);
  if (*kind == "train") {
    ++run.trainRecords;
    // Of a loss with other terms, the cross-entropy: what the validation
    // loss measures too.
    const char *lossKey = "loss";
    if (record->get("cross_entropy")) {
      lossKey = "cross_entropy";
      run.trainCrossEntropy = true;
    }
    std::string error = addStepValue(*record, lossKey, *step, run.trainLoss);
    return error.empty() ? addStepValue(*record, "lr", *step, run.learningRate)
                         : error;
  }
  ++run.validRecords;
  std::string error = addStepValue(*record, "loss", *step, run.validLoss);
  return error.empty() ? addStepValue(*record, "bleu", *step, run.bleu) : error;
}

} // namespace

std::string readMetricsRun(const std::string &path, MetricsRun &run) {
  run.path = path;
  std::string text;
  if (std::string error = runtime::readFile(path, text); !error.empty())
    return error;
  std::vector<std::string_view> lines = runtime::splitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t") == std::string_view::npos)
      continue;
    // LLVM's JSON parser recurses once per level.
    if (std::optional<size_t> deep = findDeepNesting(lines[i]))
      return path + ":" + std::to_string(i + 1) + ":" +
             std::to_string(*deep + 1) + ": nesting deeper than " +
             std::to_string(kMaxNestingDepth) + " levels of brackets ([ { ( <)";
    llvm::Expected<json::Value> value = json::parse(lines[i]);
    if (!value) {
      // A JSON document over several lines, not a --metrics file.
      llvm::StringRef line = llvm::StringRef(lines[i]).trim();
      return path + ":" + jsonErrorAt(value.takeError(), i + 1) +
             (line == "{" || line == "["
                  ? " (a metrics file has one JSON record a line)"
                  : "");
    }
    if (std::string error = addMetricsRecord(*value, run); !error.empty())
      return path + ":" + std::to_string(i + 1) + ": " + error;
  }
  if (run.trainRecords + run.validRecords == 0)
    return path + ": no \"train\" or \"valid\" records";
  return {};
}

StepCurve learningRateCurve(const MetricsRun &run) {
  StepCurve curve = run.learningRate;
  for (const ScheduleSpan &span : run.schedules) {
    if (span.lastStep <= span.afterStep)
      continue;
    // The span's own rates replace the samples in it (a resumed run's
    // schedule may differ from the one before).
    curve.erase(curve.upper_bound(span.afterStep),
                curve.upper_bound(span.lastStep));
    int64_t first = span.afterStep + 1, count = span.lastStep - span.afterStep;
    int64_t stride = (count + kMaxScheduleSteps - 1) / kMaxScheduleSteps;
    auto add = [&](int64_t step) {
      curve[step] = span.schedule.learningRate(step);
    };
    for (int64_t step = first; step <= span.lastStep; step += stride)
      add(step);
    // The peak and the end, whatever the stride.
    if (span.schedule.warmupSteps >= first &&
        span.schedule.warmupSteps <= span.lastStep)
      add(span.schedule.warmupSteps);
    add(span.lastStep);
  }
  // The spans' points add up (a file of many "run" records): the whole
  // curve keeps at most 2 x kMaxScheduleSteps of them, evenly spaced, and
  // its last.
  const size_t most = 2 * static_cast<size_t>(kMaxScheduleSteps);
  if (curve.size() > most) {
    const size_t stride = (curve.size() + most - 1) / most;
    StepCurve thinned;
    size_t i = 0;
    for (const auto &point : curve)
      if (i++ % stride == 0)
        thinned.insert(point);
    thinned.insert(*curve.rbegin());
    curve = std::move(thinned);
  }
  return curve;
}

} // namespace tgc::data
