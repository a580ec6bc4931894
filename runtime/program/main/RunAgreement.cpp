//===- RunAgreement.cpp - the processes of a run agree before step one ---===//
//
// `mpirun` starts each process with its own command line, so two of them
// may be given different programs, data or flags. Processes that disagree
// on what they run would train different models, or wait for each other in
// an exchange one of them never makes (different --steps waited out the
// peer timeout). Before the first step every process compares what must be
// alike with rank 0's, and the run stops at once, every process saying
// what differs on it.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/main/Run.h"
#include "runtime/program/parallel/ParameterChecksum.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tgc::runtime {
namespace {

/// FNV-1a of `text`: equal only for equal texts (up to collisions).
uint64_t textHash(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

/// One thing the processes must have alike: a number, or a text compared by
/// its hash (`shown` is what this process says of it when it differs).
struct Agreed {
  const char *what;
  double value;
  std::string shown;
  bool isText = false;
};

/// The trainable parameters the process starts from, as a hex checksum:
/// checkpoints of one step that hold other parameters (--resume A on one
/// rank, B on another) were trained on together until the first check,
/// and rank 0's replaced its own. (The moments are left out: a sharded
/// optimizer's processes hold different parts of them.)
std::string startingParameters(const Run &run) {
  uint64_t sum = trainableChecksum(run.model, run.memory.state());
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(sum));
  return text;
}

std::vector<Agreed> agreedOf(const Run &run) {
  const TrainOptions &o = run.options;
  const std::string parameters = startingParameters(run);
  auto number = [](const char *flag, double value) {
    return Agreed{flag, value, {}};
  };
  // Compared by `value`, shown as `shown`.
  auto text = [](const char *what, const std::string &value,
                 const std::string &shown) {
    return Agreed{what, static_cast<double>(textHash(value) >> 11), shown,
                  true};
  };
  return {
      text("the program (its manifest)",
           run.model.manifest ? run.model.manifest : "", run.model.name),
      // The pairs, not the files' names: each machine has its own paths.
      text("the training data", run.dataFingerprint(),
           run.dataFingerprint() == run.data.describe()
               ? run.data.describe()
               : run.data.describe() + ": " + run.dataFingerprint()),
      number("the step it starts after (--resume)",
             static_cast<double>(run.stepsDone)),
      // Whether a validation is owed first: rank 0 would validate while
      // the others trained.
      number("the step of its last validation (--resume)",
             static_cast<double>(run.validations.validatedStep)),
      text(o.resume.empty()
               ? "the checksum of the parameters it starts from (--seed)"
               : "the checksum of the parameters it starts from (--resume)",
           parameters,
           "checksum " + parameters +
               (o.resume.empty() ? std::string() : ", from " + o.resume)),
      number("--seed", run.seed),
      number("--steps", static_cast<double>(o.steps)),
      // --max-time may differ: the processes stop together when the first
      // one runs out.
      number("--max-epochs", static_cast<double>(o.maxEpochs)),
      number("the learning-rate schedule (--lr-scheduler)",
             static_cast<double>(run.learningRates().kind)),
      number("the peak learning rate (--lr, --lr-factor)",
             run.learningRates().peakRate()),
      number("--warmup", static_cast<double>(run.learningRates().warmupSteps)),
      number("--min-lr", run.learningRates().minimum),
      number("--update-freq", static_cast<double>(o.updateFreq)),
      number("--max-tokens", static_cast<double>(o.maxTokens)),
      number("--clip-norm", o.clipNorm),
      number("--weight-decay", run.weightDecay()),
      number("--label-smoothing", run.hyperparameters()[0].value()),
      number("--adam-betas (beta1)", run.hyperparameters()[1].value()),
      number("--adam-betas (beta2)", run.hyperparameters()[2].value()),
      number("--adam-eps", run.hyperparameters()[3].value()),
      number("--dropout", run.hyperparameters()[4].value()),
      number("--attention-dropout", run.hyperparameters()[5].value()),
      number("--log-every", static_cast<double>(o.logEvery)),
      number("--save-every", static_cast<double>(o.saveEvery)),
      number("--valid-every", static_cast<double>(o.validEvery)),
      number("--shard-optimizer", o.shardOptimizer ? 1 : 0),
      // A sharded dump gathers the moments from every process: given on
      // one alone, it waited for the others for ever.
      number("--dump-params (with --shard-optimizer)",
             o.shardOptimizer && !o.dumpParameters.empty() ? 1 : 0),
  };
}

std::string formatted(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

} // namespace

bool Run::processesAgree() {
  if (!group)
    return true;
  std::vector<Agreed> mine = agreedOf(*this);
  std::vector<double> first(mine.size());
  for (size_t i = 0; i < mine.size(); ++i)
    first[i] = mine[i].value;
  group->shareFromFirst(first.data(),
                        static_cast<int64_t>(first.size() * sizeof(double)),
                        "rank 0's settings of the run");
  bool agrees = true;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (mine[i].value == first[i])
      continue;
    agrees = false;
    if (mine[i].isText)
      std::fprintf(stderr,
                   "error: rank %d of %d: %s differs from rank 0's (here: "
                   "%s)\n",
                   group->rank(), group->size(), mine[i].what,
                   mine[i].shown.c_str());
    else
      std::fprintf(stderr, "error: rank %d of %d: %s is %s here but %s on "
                           "rank 0\n",
                   group->rank(), group->size(), mine[i].what,
                   formatted(mine[i].value).c_str(),
                   formatted(first[i]).c_str());
  }
  uint64_t min = 0, max = 0;
  group->minMax(agrees ? 1 : 0, min, max,
                "whether every process agrees with rank 0");
  if (min == 1)
    return true;
  if (leads())
    std::fprintf(stderr,
                 "error: the %d processes of this run were not started alike "
                 "(above): they must run one program on one data set with "
                 "the same flags; no process has trained\n",
                 group->size());
  return false;
}

} // namespace tgc::runtime
