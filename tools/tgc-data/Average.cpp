//===- Average.cpp - tgc-data average: the mean of checkpoints ------------===//
//
// Checkpoint averaging (the paper averages the last 5 or 20 checkpoints for
// its results): every tensor of the output is the element-wise mean of the
// inputs', summed in double. The inputs must be of one model: the same
// model name, config text and tensors (names, shapes, order), every value
// finite.
//
//===----------------------------------------------------------------------===//
#include "tools/tgc-data/Commands.h"

#include "runtime/program/checkpoint/Checkpoint.h"
#include "runtime/program/checkpoint/CheckpointHistory.h"
#include "runtime/program/checkpoint/ManifestCheck.h"
#include "runtime/data/TokenCorpus.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <sys/stat.h>

namespace cl = llvm::cl;
using namespace tgc::runtime;

namespace tgc::data {

cl::SubCommand averageCommand("average", "Average checkpoints of one model "
                                         "(meant for translation)");

namespace {

cl::opt<unsigned> averageLast(
    "last",
    cl::desc("Average the N files CHECKPOINT.step<S> with the highest steps"),
    cl::value_desc("N"), cl::init(0), cl::sub(averageCommand),
    cl::cat(dataCategory));
cl::list<std::string> averageInputs(
    cl::Positional, cl::OneOrMore,
    cl::desc("<checkpoint> ... (with --last: the one checkpoint path)"),
    cl::sub(averageCommand), cl::cat(dataCategory));
cl::opt<std::string> averageOutput("o", cl::desc("The checkpoint to write"),
                                   cl::value_desc("OUT"), cl::Required,
                                   cl::sub(averageCommand),
                                   cl::cat(dataCategory));
cl::opt<bool> averageOverwrite(
    "overwrite",
    cl::desc("Replace OUT when it exists (never a checkpoint a run holds)"),
    cl::sub(averageCommand), cl::cat(dataCategory));

struct Input {
  std::string path;
  int64_t namedStep = -1; ///< S of a CHECKPOINT.step<S>; -1 if given by name
};

/// The `count` files `<checkpoint>.step<S>` with the highest S, oldest first:
/// the names a run's --keep-last gives (historySteps), so that no file is
/// found twice under two spellings of one step ("step2", "step02").
std::string findLast(const std::string &checkpoint, unsigned count,
                     std::vector<Input> &inputs) {
  std::vector<int64_t> steps = runtime::historySteps(checkpoint);
  if (steps.size() < count)
    return "--last " + std::to_string(count) + ": found only " +
           std::to_string(steps.size()) + " files " + checkpoint +
           ".step<S> (a training run with --keep-last N keeps them)";
  inputs.clear();
  for (size_t i = steps.size() - count; i < steps.size(); ++i)
    inputs.push_back({runtime::historyPath(checkpoint, steps[i]), steps[i]});
  return {};
}

std::string quoted(std::string_view a, std::string_view b) {
  return std::string("'").append(a).append("' vs '").append(b).append("'");
}

/// The first "; "-separated part of two config texts that differs.
std::string configDifference(std::string_view a, std::string_view b) {
  for (size_t start = 0; start < std::min(a.size(), b.size());) {
    std::string_view partA = a.substr(start, a.find("; ", start) - start);
    std::string_view partB = b.substr(start, b.find("; ", start) - start);
    if (partA != partB)
      return quoted(partA, partB);
    start += partA.size() + 2;
  }
  return quoted(a, b);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Why `b` cannot be averaged with `a`, or an empty string.
std::string modelDifference(const CheckpointInfo &infoA,
                            const std::vector<OwnedTensor> &a,
                            const CheckpointInfo &infoB,
                            const std::vector<OwnedTensor> &b) {
  if (infoA.model != infoB.model)
    return "model " + quoted(infoA.model, infoB.model);
  if (infoA.config != infoB.config)
    return "config " + configDifference(infoA.config, infoB.config);
  // The whole config is in the manifests (heads, dropout, ...), where the
  // checkpoints have them: another one is another model, as --resume says.
  if (!infoA.manifest.empty() && !infoB.manifest.empty()) {
    ManifestDifference difference =
        compareManifests(infoA.manifest, infoB.manifest);
    auto firstConfig = [](const std::vector<std::string> &lines) {
      for (const std::string &line : lines)
        if (line.starts_with("config "))
          return line;
      return std::string("no such config line");
    };
    if (difference.configDiffers)
      return quoted(firstConfig(difference.checkpointOnly),
                    firstConfig(difference.programOnly));
  }
  // Trained on text of other vocabularies, the same ids are other words.
  if (infoA.vocabularyHash && infoB.vocabularyHash &&
      infoA.vocabularyHash != infoB.vocabularyHash)
    return "the vocabulary trained on (hash " +
           quoted(runtime::hashText(infoA.vocabularyHash),
                  runtime::hashText(infoB.vocabularyHash)) +
           ")";
  if (a.size() != b.size())
    return std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
           " tensors";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name)
      return "tensor " + std::to_string(i) + " is " +
             quoted(a[i].name, b[i].name);
    if (a[i].shape != b[i].shape)
      return "tensor '" + a[i].name + "' has shape " + shapeText(a[i].shape) +
             " vs " + shapeText(b[i].shape);
  }
  return {};
}

/// The running sum of checkpoints of one model, in double: the mean of N
/// copies of a value is then that value, exactly.
class CheckpointSum {
public:
  /// Reads `input` and adds it; an error names the file and the problem.
  std::string add(const Input &input);
  /// Writes the mean, with the newest input's metadata.
  std::string writeMean(const std::string &path);

  size_t count = 0;
  CheckpointInfo newest;
  std::string newestPath, steps; ///< e.g. "1, 2"

private:
  CheckpointInfo first;
  std::string firstPath;
  std::vector<OwnedTensor> model; ///< the first input, then the mean
  std::vector<std::vector<double>> sums;
};

std::string CheckpointSum::add(const Input &input) {
  CheckpointInfo info;
  std::vector<OwnedTensor> tensors;
  if (std::string error = readCheckpointTensors(input.path, info, tensors);
      !error.empty())
    return error;
  if (input.namedStep >= 0 && info.step != input.namedStep)
    return input.path + " holds step " + std::to_string(info.step) +
           ", not the step its name says";
  // One NaN or infinity would make the whole mean's tensor one.
  for (const OwnedTensor &t : tensors)
    for (size_t j = 0; j < t.values.size(); ++j)
      if (!std::isfinite(t.values[j]))
        return input.path + ": tensor '" + t.name + "' holds " +
               (std::isnan(t.values[j]) ? "NaN" : "an infinity") +
               " at element " + std::to_string(j) +
               ": a non-finite checkpoint cannot be averaged";
  if (count == 0) {
    first = info;
    firstPath = input.path;
    model = tensors;
    for (const OwnedTensor &t : tensors)
      sums.emplace_back(t.values.size(), 0.0);
  } else if (std::string why = modelDifference(first, model, info, tensors);
             !why.empty()) {
    return "cannot average checkpoints of different models: " + firstPath +
           " and " + input.path + " differ: " + why;
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t j = 0; j < tensors[i].values.size(); ++j)
      sums[i][j] += tensors[i].values[j];
  if (count == 0 || info.step >= newest.step) {
    newest = info;
    newestPath = input.path;
  }
  steps += (count++ ? ", " : "") + std::to_string(info.step);
  return {};
}

std::string CheckpointSum::writeMean(const std::string &path) {
  std::vector<CheckpointTensor> views;
  for (size_t i = 0; i < model.size(); ++i) {
    for (size_t j = 0; j < sums[i].size(); ++j)
      model[i].values[j] =
          static_cast<float>(sums[i][j] / static_cast<double>(count));
    views.push_back({model[i].name, model[i].shape, model[i].values.data()});
  }
  return writeCheckpoint(path, newest, views);
}

} // namespace

int runAverage() {
  std::vector<Input> inputs;
  if (averageLast > 0) {
    if (averageInputs.size() != 1)
      return fail("average --last N takes one checkpoint path, not " +
                  std::to_string(averageInputs.size()));
    if (std::string error = findLast(averageInputs[0], averageLast, inputs);
        !error.empty())
      return fail(error);
  } else {
    if (averageInputs.size() < 2)
      return fail("average needs two checkpoints or more, or --last N "
                  "CHECKPOINT");
    for (const std::string &path : averageInputs)
      inputs.push_back({path, -1});
  }
  std::vector<RunFile> files = {{"-o", averageOutput, true}};
  for (const Input &input : inputs)
    files.push_back({"the checkpoint", input.path});
  if (!checkRunFiles(files))
    return 1;
  // As a training run: an existing checkpoint (a run's own, maybe its
  // live one) is replaced only when asked, and never while a run holds it.
  struct stat status;
  if (::stat((averageOutput + ".lock").c_str(), &status) == 0)
    return fail("-o " + averageOutput + " is held by a running training "
                "program (" + averageOutput + ".lock exists): give another "
                "path (nothing was written)");
  if (!averageOverwrite && ::stat(averageOutput.c_str(), &status) == 0)
    return fail("-o " + averageOutput + " exists, and average does not "
                "replace it: give another path, or --overwrite");
  CheckpointSum sum;
  for (const Input &input : inputs)
    if (std::string error = sum.add(input); !error.empty())
      return fail(error);
  if (std::string error = sum.writeMean(averageOutput); !error.empty())
    return fail(error);
  summaryStream(averageOutput) << averageOutput << ": the mean of " << sum.count
               << (sum.count == 1 ? " checkpoint of " : " checkpoints of ")
               << sum.newest.model << " (steps " << sum.steps
               << "), metadata from " << sum.newestPath << " (step "
               << sum.newest.step << ")\n";
  return 0;
}

} // namespace tgc::data
