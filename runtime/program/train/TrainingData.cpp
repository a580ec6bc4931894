//===- TrainingData.cpp - what every kind of training data shares --------===//
#include "runtime/program/train/TrainingData.h"

#include "runtime/data/TokenCorpus.h"

#include <cinttypes>
#include <cstdio>
#include <optional>

namespace tgc::runtime {

bool isLanguageModel(const CompiledModel &model) {
  return model.numBuckets > 0 && largestBucket(model).sourceLength == 0;
}

void taskTexts(Task task, const std::vector<std::vector<int32_t>> &sentences,
               std::vector<std::string> &out) {
  out.clear();
  for (const std::vector<int32_t> &ids : sentences) {
    std::string s;
    for (int32_t id : ids)
      s += (s.empty() ? "" : " ") + tokenText(task, id);
    out.push_back(s);
  }
}

bool corpusTexts(const VocabularyTool *vocabulary,
                 const std::vector<std::vector<int32_t>> &sentences,
                 std::vector<std::string> &out) {
  if (vocabulary) {
    std::string error;
    if (!vocabulary->decode(sentences, out, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return false;
    }
    return true;
  }
  out.clear();
  for (const std::vector<int32_t> &ids : sentences) {
    std::string s;
    for (int32_t id : ids)
      s += (s.empty() ? "" : " ") + std::to_string(id);
    out.push_back(s);
  }
  return true;
}

const CompiledBucket &largestBucket(const CompiledModel &model) {
  return model.buckets[model.numBuckets - 1];
}

std::optional<TokenCorpus> openCorpus(const std::string &path,
                                      const CompiledModel &model) {
  std::string error;
  std::optional<TokenCorpus> corpus = TokenCorpus::open(path, error);
  if (!corpus) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return std::nullopt;
  }
  bool documents = corpus->kind() == CorpusKind::Documents;
  if (isLanguageModel(model) && !documents)
    error = path + " is a corpus of sentence pairs: " + model.name +
            " is a language model, it trains on documents (tgc-data encode "
            "--text)";
  else if (!isLanguageModel(model) && documents)
    error = path + " is a corpus of documents (language-model text): " +
            model.name + " translates, it trains on sentence pairs (tgc-data "
            "encode --source S --target T)";
  else if (model.vocabularyHash)
    error = checkVocabulary(*corpus, model.vocabularyHash,
                            static_cast<uint32_t>(model.vocabulary),
                            std::string("the vocabulary ") + model.name +
                                " was compiled for");
  else if (corpus->vocabularySize() != model.vocabulary)
    error = path + ": encoded with a vocabulary of " +
            std::to_string(corpus->vocabularySize()) + " pieces; " +
            model.name + " has " + std::to_string(model.vocabulary) +
            " (compile it with tgc --corpus " + path + ")";
  if (!error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return std::nullopt;
  }
  return corpus;
}

std::unique_ptr<VocabularyTool> openVocabulary(const std::string &path,
                                               const CompiledModel &model) {
  std::string error;
  std::unique_ptr<VocabularyTool> vocabulary = VocabularyTool::open(
      path, model.toolsDirectory ? model.toolsDirectory : "", model.vocabulary,
      error);
  if (!vocabulary) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return nullptr;
  }
  if (model.vocabularyHash && vocabulary->hash() != model.vocabularyHash) {
    std::fprintf(stderr,
                 "error: %s (hash 0x%016" PRIx64 ") is not the vocabulary %s "
                 "was compiled for (hash 0x%016" PRIx64 ")\n",
                 path.c_str(), vocabulary->hash(), model.name,
                 model.vocabularyHash);
    return nullptr;
  }
  // Its ids are the model's: fewer, and the model's predictions beyond
  // them failed to decode at the first validation (which ended the run) or
  // after a whole --translate; more, and encoding failed.
  if (vocabulary->ids() != model.vocabulary) {
    std::fprintf(stderr,
                 "error: %s has %lld ids; the model has %lld (train it with "
                 "tgc-data vocab --size %lld, or compile the model with tgc "
                 "--corpus of text it encoded)\n",
                 path.c_str(), static_cast<long long>(vocabulary->ids()),
                 static_cast<long long>(model.vocabulary),
                 static_cast<long long>(model.vocabulary));
    return nullptr;
  }
  return vocabulary;
}

} // namespace tgc::runtime
