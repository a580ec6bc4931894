//===- ScoreCorpus.cpp - the binary's --score mode -----------------------===//
#include "runtime/program/decode/ScoreCorpus.h"

#include "runtime/program/decode/Translate.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/LmData.h"
#include "runtime/program/train/LmWindows.h"
#include "runtime/program/train/PairData.h"

#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace tgc::runtime {

namespace {

/// Every window of the stream, in order, in the largest bucket's batches;
/// false after a message. `what` says what was scored.
bool scoreWindows(const CompiledModel &model, const TokenCorpus &corpus,
                  const std::string &path, ModelState &memory,
                  ValidationLoss &loss, std::string &what) {
  const CompiledBucket &bucket = largestBucket(model);
  const int64_t context = bucket.targetLength, rows = bucket.batchSize;
  LmWindows windows(corpus, context, rows);
  if (windows.windows() == 0) {
    std::fprintf(stderr,
                 "error: %s: %llu tokens with the end-of-document tokens, "
                 "fewer than one window of %lld (the context + 1)\n",
                 path.c_str(),
                 static_cast<unsigned long long>(windows.streamLength()),
                 static_cast<long long>(context + 1));
    return false;
  }
  for (uint64_t first = 0; first < windows.windows();
       first += static_cast<uint64_t>(rows)) {
    (void)interruptRequested(); // exits, naming the activity: nothing to save
    addBatchLoss(model, model.numBuckets - 1, memory.state(), memory.arena(),
                 windows.inOrder(first), loss);
  }
  // Window w is tokens [w C, (w + 1) C] of the stream, predicting its last
  // C: the stream's first token is never predicted, nor those after the
  // last window.
  uint64_t left = windows.streamLength() - 1 -
                  windows.windows() * static_cast<uint64_t>(context);
  what = std::to_string(windows.windows()) + " windows of " +
         std::to_string(context + 1) + " tokens, each predicting " +
         std::to_string(context) + "; the last " + std::to_string(left) +
         " of the stream left out";
  return true;
}

} // namespace

int scoreCorpus(const CompiledModel &model, const TrainOptions &options,
                ModelState &memory) {
  if (!model.buckets[0].predict) {
    std::fprintf(stderr, "error: %s was compiled without @predict, which "
                         "--score runs\n", model.name);
    return 1;
  }
  std::optional<TokenCorpus> corpus = openCorpus(options.score, model);
  if (!corpus)
    return 1;
  // openCorpus refused a corpus of the other kind.
  const bool documents = corpus->kind() == CorpusKind::Documents;
  installInterruptHandlers();
  InterruptScope scope("scoring", /*returns=*/false);
  auto start = std::chrono::steady_clock::now();
  ValidationLoss loss;
  std::string what;
  if (documents) {
    if (!scoreWindows(model, *corpus, options.score, memory, loss, what))
      return 1;
  } else {
    size_t skipped = 0;
    std::vector<SentencePair> pairs =
        fittingCorpusPairs(model, std::move(*corpus), skipped);
    if (pairs.empty()) {
      std::fprintf(stderr, "error: %s: no sentence pair fits a bucket of %s\n",
                   options.score.c_str(), model.name);
      return 1;
    }
    loss = validationLoss(model, memory.state(), memory.arena(), pairs);
    what = std::to_string(pairs.size()) + " sentence pairs; " +
           std::to_string(skipped) + " longer than every bucket left out";
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  interruptRequested(); // a signal after the last batch's look
  double perToken = loss.perTokenLoss();
  // The result is the run's whole output: a failed write is an error
  // (a full disk, a closed standard output exited 0).
  if (std::printf("%s: loss %.4f  ppl %.3f  on %lld tokens (%s) in %.1fs\n",
                  options.score.c_str(), perToken, std::exp(perToken),
                  static_cast<long long>(loss.tokens), what.c_str(),
                  seconds) < 0 ||
      std::fflush(stdout) != 0) {
    std::fprintf(stderr, "error: cannot write the score to standard output: %s\n",
                 std::strerror(errno));
    return 1;
  }
  return 0;
}

} // namespace tgc::runtime
