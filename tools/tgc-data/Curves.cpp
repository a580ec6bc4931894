//===- Curves.cpp - tgc-data curves: a --metrics file as an SVG -----------===//
//
// Reads a training program's --metrics file (runtime/program/train/
// Metrics.h: one JSON object a line, "kind" "train" or "valid", each with
// its "step") and draws its loss, BLEU and learning-rate curves
// (CurvesSvg.h). Of a loss with other terms (an L2 penalty) it draws the
// cross-entropy part.
//
//===----------------------------------------------------------------------===//
#include "tools/tgc-data/Commands.h"
#include "tools/tgc-data/CurvesSvg.h"

#include "common/Nesting.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/Vocabulary.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace cl = llvm::cl;
namespace json = llvm::json;

namespace tgc::data {

cl::SubCommand curvesCommand("curves", "Draw a --metrics file as an SVG (loss, "
                                       "BLEU, learning rate)");

namespace {

cl::opt<std::string> curvesInput(cl::Positional, cl::Required,
                                 cl::desc("<METRICS.jsonl>"),
                                 cl::sub(curvesCommand), cl::cat(dataCategory));
cl::opt<std::string> curvesOutput("o", cl::desc("The SVG file to write"),
                                  cl::value_desc("curves.svg"), cl::Required,
                                  cl::sub(curvesCommand),
                                  cl::cat(dataCategory));

/// A curve by step; a later record of the same step replaces an earlier one.
using Curve = std::map<int64_t, std::optional<double>>;

struct Curves {
  Curve trainLoss, learningRate, validLoss, bleu;
  int64_t trainRecords = 0, validRecords = 0;
  /// Whether a train record split its loss (trainLoss is then of the
  /// cross-entropy).
  bool trainCrossEntropy = false;
};

/// "7:12: message" from LLVM's "[1:12, byte=11]: message" (one line parsed
/// at a time, so its own line number is always 1).
std::string parseErrorText(llvm::Error error, size_t line) {
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
std::string addValue(const json::Object &record, const char *key, int64_t step,
                     Curve &curve) {
  const json::Value *value = record.get(key);
  if (!value || value->getAsNull()) {
    curve[step] = std::nullopt;
    return {};
  }
  std::optional<double> number = value->getAsNumber();
  if (!number)
    return std::string("\"") + key + "\" is not a number or null";
  curve[step] = *number;
  return {};
}

/// Reads one record into `curves`; an error names what is wrong with it.
std::string addRecord(const json::Value &value, Curves &curves) {
  const json::Object *record = value.getAsObject();
  if (!record)
    return "not a JSON object";
  std::optional<llvm::StringRef> kind = record->getString("kind");
  if (!kind)
    return "no \"kind\" string";
  if (*kind != "train" && *kind != "valid")
    return {}; // another kind of record: not drawn
  const json::Value *stepValue = record->get("step");
  if (!stepValue)
    return "no \"step\"";
  std::optional<int64_t> step = stepValue->getAsInteger();
  if (!step || *step < 0)
    return "\"step\" is not an integer >= 0";
  if (*kind == "train") {
    ++curves.trainRecords;
    // Of a loss with other terms, the cross-entropy: what the validation
    // loss measures too.
    const char *lossKey = "loss";
    if (record->get("cross_entropy")) {
      lossKey = "cross_entropy";
      curves.trainCrossEntropy = true;
    }
    std::string error = addValue(*record, lossKey, *step, curves.trainLoss);
    return error.empty() ? addValue(*record, "lr", *step, curves.learningRate)
                         : error;
  }
  ++curves.validRecords;
  std::string error = addValue(*record, "loss", *step, curves.validLoss);
  return error.empty() ? addValue(*record, "bleu", *step, curves.bleu) : error;
}

CurveSeries seriesOf(const char *id, const char *label, const char *color,
                     bool markers, const Curve &curve) {
  CurveSeries series{id, label, color, markers, {}};
  for (const auto &[step, value] : curve)
    series.points.push_back({step, value});
  return series;
}

} // namespace

int runCurves() {
  if (!checkRunFiles(
          {{"the metrics file", curvesInput}, {"-o", curvesOutput, true}}))
    return 1;
  std::string text;
  if (std::string error = runtime::readFile(curvesInput, text); !error.empty())
    return fail(error);
  Curves curves;
  std::vector<std::string_view> lines = runtime::splitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t") == std::string_view::npos)
      continue;
    // LLVM's JSON parser recurses once per level.
    if (std::optional<size_t> deep = findDeepNesting(lines[i]))
      return fail(curvesInput + ":" + std::to_string(i + 1) + ":" +
                  std::to_string(*deep + 1) + ": nesting deeper than " +
                  std::to_string(kMaxNestingDepth) +
                  " levels of brackets ([ { ( <)");
    llvm::Expected<json::Value> value = json::parse(lines[i]);
    if (!value)
      return fail(curvesInput + ":" + parseErrorText(value.takeError(), i + 1));
    if (std::string error = addRecord(*value, curves); !error.empty())
      return fail(curvesInput + ":" + std::to_string(i + 1) + ": " + error);
  }
  if (curves.trainRecords + curves.validRecords == 0)
    return fail(curvesInput + ": no \"train\" or \"valid\" records");

  std::vector<CurvePanel> panels = {
      {"Loss",
       {seriesOf("series-train-loss",
                 curves.trainCrossEntropy ? "train cross-entropy"
                                          : "train loss",
                 "#1f77b4", false, curves.trainLoss),
        seriesOf("series-valid-loss", "valid loss", "#d62728", true,
                 curves.validLoss)}},
      {"Validation BLEU",
       {seriesOf("series-valid-bleu", "valid BLEU", "#2ca02c", true,
                 curves.bleu)}},
      {"Learning rate",
       {seriesOf("series-learning-rate", "learning rate", "#9467bd", false,
                 curves.learningRate)}}};
  std::string title = curvesInput + ": " + std::to_string(curves.trainRecords) +
                      " train and " + std::to_string(curves.validRecords) +
                      " valid records";
  runtime::AtomicFile file(curvesOutput);
  file.write(renderCurves(title, panels));
  if (std::string error = file.commit(); !error.empty())
    return fail(error);
  llvm::outs() << curvesOutput << ": " << title << "\n";
  return 0;
}

} // namespace tgc::data
