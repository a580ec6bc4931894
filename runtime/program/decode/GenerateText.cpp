//===- GenerateText.cpp - the binary's --generate mode -------------------===//
#include "runtime/program/decode/GenerateText.h"

#include "runtime/program/decode/Translate.h"
#include "runtime/program/decode/TranslateText.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/LmData.h"
#include "runtime/program/train/TrainingData.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace tgc::runtime {
namespace {

/// "0.001", "12345", "1e+308": every figure a flag's value has, to 6.
std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

} // namespace

int generateText(const CompiledModel &model, const TrainOptions &options,
                 ModelState &memory) {
  if (!isLanguageModel(model)) {
    std::fprintf(stderr, "error: %s translates (it has a source side): "
                         "--generate continues text with a language model; "
                         "use --translate\n",
                 model.name);
    return 1;
  }
  if (!model.buckets[0].predict) {
    std::fprintf(stderr, "error: %s was compiled without @predict\n", model.name);
    return 1;
  }
  std::unique_ptr<VocabularyTool> vocabulary;
  std::vector<std::vector<int32_t>> prompts;
  std::string name, error;
  if (!readEncodedLines(options.generate, options.vocabulary, model,
                        vocabulary, prompts, name))
    return 1;
  const int64_t context = model.buckets[model.numBuckets - 1].targetLength;
  // The context ends a continuation before --max-new-tokens can: said once
  // (it was said by --help alone). A prompt keeps at most context - 1 of
  // its tokens (its last), an empty one is BOS: each gets one new at least.
  int64_t shortest = context - 1;
  for (const std::vector<int32_t> &prompt : prompts)
    shortest = std::min<int64_t>(
        shortest, std::max<int64_t>(static_cast<int64_t>(prompt.size()), 1));
  const int64_t room = context - shortest;
  if (!prompts.empty() && options.maxNewTokens > room)
    std::fprintf(stderr,
                 "note: the context holds %lld tokens: the prompts are "
                 "continued by at most %lld, fewer than --max-new-tokens %lld\n",
                 static_cast<long long>(context), static_cast<long long>(room),
                 static_cast<long long>(options.maxNewTokens));
  int64_t cut = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const int64_t over =
        static_cast<int64_t>(prompts[i].size()) - (context - 1);
    if (over > 0 && cut++ < 5)
      std::fprintf(stderr,
                   "%s:%zu: %zu tokens, more than the context of %lld holds "
                   "with a new one: the first %lld %s left out\n",
                   name.c_str(), i + 1, prompts[i].size(),
                   static_cast<long long>(context),
                   static_cast<long long>(over), over == 1 ? "is" : "are");
  }

  installInterruptHandlers();
  InterruptScope scope("generating", /*returns=*/false);
  Sampling sampling{options.temperature, options.topK, options.topP,
                    options.seed.value_or(1)};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<int32_t>> continuations =
      continuePrompts(model, memory.state(), memory.arena(), prompts,
                      options.maxNewTokens, sampling,
                      options.fullDecoding ? Decoding::Full
                                           : Decoding::Incremental);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  std::vector<std::vector<int32_t>> texts;
  int64_t tokens = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int32_t> whole = prompts[i];
    whole.insert(whole.end(), continuations[i].begin(), continuations[i].end());
    texts.push_back(std::move(whole));
    tokens += static_cast<int64_t>(continuations[i].size());
  }
  std::vector<std::string> decoded;
  bool detokenized = vocabulary->decode(texts, decoded, error);
  interruptRequested(); // as --translate: before --output is written
  if (!detokenized) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::string written;
  for (const std::string &line : decoded)
    written += line + "\n";
  if (!writeText(options.output, written, "the generated text"))
    return 1;
  std::string how =
      options.temperature <= 0
          ? std::string("greedy")
          : "sampled at temperature " + formatNumber(options.temperature) +
                (options.topK ? ", top-k " + std::to_string(options.topK) : "") +
                (options.topP < 1 ? ", top-p " + formatNumber(options.topP) : "") +
                ", seed " + std::to_string(sampling.seed);
  std::fprintf(stderr,
               "generated %lld tokens for %zu prompts in %.2fs (%.0f tokens/s), "
               "%s, %s decoder%s\n",
               static_cast<long long>(tokens), prompts.size(), seconds,
               seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0,
               how.c_str(),
               !options.fullDecoding && model.buckets[model.numBuckets - 1].decodeStep
                   ? "incremental"
                   : "full-prefix",
               cut ? (", " + std::to_string(cut) + (cut == 1 ? " prompt" : " prompts") +
                      " cut").c_str()
                   : "");
  return 0;
}

} // namespace tgc::runtime
