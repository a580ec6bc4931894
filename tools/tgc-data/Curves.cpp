//===- Curves.cpp - tgc-data curves: --metrics files as an SVG ------------===//
//
// Reads training programs' --metrics files (MetricsRun.h) and draws their
// loss, BLEU and learning-rate curves (CurvesSvg.h), several runs on shared
// axes, a colour each. Of a loss with other terms (an L2 penalty) it draws
// the cross-entropy part; the learning rate of every step where the file
// gives the schedule.
//
//===----------------------------------------------------------------------===//
#include "tools/tgc-data/Commands.h"
#include "tools/tgc-data/CurvesSvg.h"
#include "tools/tgc-data/MetricsRun.h"

#include "runtime/data/AtomicFile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace tgc::data {

cl::SubCommand curvesCommand(
    "curves", "Draw --metrics files as one SVG (loss, BLEU, learning rate); "
              "several files are overlaid, a colour each");

namespace {

cl::list<std::string> curvesInputs(cl::Positional, cl::OneOrMore,
                                   cl::desc("<METRICS.jsonl>..."),
                                   cl::sub(curvesCommand),
                                   cl::cat(dataCategory));
cl::opt<std::string> curvesOutput("o", cl::desc("The SVG file to write"),
                                  cl::value_desc("curves.svg"), cl::Required,
                                  cl::sub(curvesCommand),
                                  cl::cat(dataCategory));
cl::list<std::string> curvesLabels(
    "label",
    cl::desc("A run's name in the legend, once per file in their order "
             "(default: the file name without its extension)"),
    cl::value_desc("NAME"), cl::sub(curvesCommand), cl::cat(dataCategory));

/// A run's colour: one per run (tab10), or the single run's by series.
const char *const kRunColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                  "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f",
                                  "#bcbd22", "#17becf"};

CurveSeries curveSeries(std::string id, std::string label, const char *color,
                        bool markers, const StepCurve &curve) {
  CurveSeries series{
      std::move(id), std::move(label), color, markers, false, {}};
  for (const auto &[step, value] : curve)
    series.points.push_back({step, value});
  return series;
}

/// Why the training loss sits above the validation loss; none where every
/// run records that it has no label smoothing.
std::string smoothingNote(const std::vector<MetricsRun> &runs) {
  bool unknown = false;
  for (const MetricsRun &run : runs) {
    unknown = unknown || !run.labelSmoothing;
    if (run.labelSmoothing && *run.labelSmoothing > 0) {
      std::string text;
      llvm::raw_string_ostream(text)
          << "training loss includes label smoothing (\u03b5="
          << llvm::format("%g", *run.labelSmoothing)
          << "); validation is cross-entropy";
      return text;
    }
  }
  if (!unknown)
    return {};
  return "training loss includes any label smoothing; validation is plain "
         "cross-entropy";
}

std::vector<CurvePanel> curvePanels(const std::vector<MetricsRun> &runs,
                                    const std::vector<std::string> &names) {
  CurvePanel loss{"Loss", "loss (nats/token)", "", {}},
      bleu{"Validation BLEU", "BLEU", "", {}},
      rate{"Learning rate", "learning rate", "", {}};
  bool one = runs.size() == 1, valid = false;
  for (size_t i = 0; i < runs.size(); ++i) {
    const MetricsRun &run = runs[i];
    // One run keeps its ids and colours by series; several get a colour
    // each, their ids and labels the run's number and name.
    std::string suffix, prefix;
    if (!one) {
      suffix.append("-").append(std::to_string(i + 1));
      prefix.append(names[i]).append(": ");
    }
    auto color = [&](size_t series) {
      return kRunColors[(one ? series : i) % std::size(kRunColors)];
    };
    loss.series.push_back(curveSeries(
        "series-train-loss" + suffix,
        prefix + (run.trainCrossEntropy ? "train cross-entropy" : "train loss"),
        color(0), false, run.trainLoss));
    loss.series.push_back(curveSeries("series-valid-loss" + suffix,
                                      prefix + "valid loss", color(1), true,
                                      run.validLoss));
    // Beside its run's training loss in the same colour.
    loss.series.back().dashed = !one;
    valid = valid || run.validRecords > 0;
    bleu.series.push_back(curveSeries("series-valid-bleu" + suffix,
                                      prefix + "valid BLEU", color(2), true,
                                      run.bleu));
    rate.series.push_back(curveSeries("series-learning-rate" + suffix,
                                      prefix + "learning rate", color(3), false,
                                      learningRateCurve(run)));
  }
  if (valid)
    loss.note = smoothingNote(runs);
  return {loss, bleu, rate};
}

} // namespace

int runCurves() {
  std::vector<RunFile> files;
  for (const std::string &input : curvesInputs)
    files.push_back({"the metrics file", input});
  files.push_back({"-o", curvesOutput, true});
  if (!checkRunFiles(files))
    return 1;
  if (!curvesLabels.empty() && curvesLabels.size() != curvesInputs.size())
    return fail("give --label once per metrics file (" +
                std::to_string(curvesInputs.size()) + " files, " +
                std::to_string(curvesLabels.size()) + " labels)");
  std::vector<MetricsRun> runs(curvesInputs.size());
  std::vector<std::string> names;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (std::string error = readMetricsRun(curvesInputs[i], runs[i]);
        !error.empty())
      return fail(error);
    names.push_back(curvesLabels.empty()
                        ? llvm::sys::path::stem(curvesInputs[i]).str()
                        : curvesLabels[i]);
  }
  // Each run's records, by its path (or, on the SVG of several, its name:
  // the paths would not fit).
  std::string title, svgTitle;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string counts = ": " + std::to_string(runs[i].trainRecords) +
                         " train and " + std::to_string(runs[i].validRecords) +
                         " valid records";
    title += (i ? "; " : "") + runs[i].path + counts;
    svgTitle += (i ? "; " : "") + names[i] + counts;
  }
  runtime::AtomicFile file(curvesOutput);
  file.write(renderCurves(runs.size() == 1 ? title : svgTitle,
                          curvePanels(runs, names)));
  if (std::string error = file.commit(); !error.empty())
    return fail(error);
  summaryStream(curvesOutput) << curvesOutput << ": " << title << "\n";
  return 0;
}

} // namespace tgc::data
