//===- TranslateText.cpp - the binary's --translate mode -----------------===//
#include "runtime/program/decode/TranslateText.h"

#include "runtime/data/AtomicFile.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/TokenFiles.h"
#include "runtime/data/Utf8.h"
#include "runtime/program/decode/Translate.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/LmData.h"
#include "runtime/program/train/TrainingData.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc::runtime {

namespace {

/// "1024 MiB" for whole MiB, else "N bytes".
std::string describeBytes(size_t bytes) {
  return bytes % (size_t{1} << 20) == 0
             ? std::to_string(bytes >> 20) + " MiB"
             : std::to_string(bytes) + " bytes";
}

} // namespace

bool readTextLines(const std::string &path, std::vector<std::string> &lines,
                   std::string &name, TextInputLimits limits) {
  bool fromStdin = path == "-";
  name = fromStdin ? "<stdin>" : path;
  if (!fromStdin) {
    if (std::string why = checkInputFile(path, /*emptyOk=*/true); !why.empty()) {
      std::fprintf(stderr, "error: %s\n", why.c_str());
      return false;
    }
  }
  // openReader: a FIFO that no process writes does not hold the open.
  Descriptor file{fromStdin ? -1 : openReader(path.c_str())};
  if (!fromStdin && file.fd < 0) {
    std::fprintf(stderr, "error: cannot read %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  const int fd = fromStdin ? 0 : file.fd;
  // /dev/zero or /dev/urandom (a path, or standard input) never ends.
  if (std::string why = checkTextDescriptor(fd, name); !why.empty()) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    return false;
  }
  LineReader in(fd);
  size_t bytes = 0;
  for (std::string line;;) {
    LineRead read = in.next(line);
    if (read == LineRead::End)
      return true;
    if (read == LineRead::Failed) {
      std::fprintf(stderr, "error: %s:%zu: cannot read: %s\n", name.c_str(),
                   lines.size() + 1, in.error().c_str());
      return false;
    }
    if (read == LineRead::TooLong) {
      std::fprintf(stderr, "error: %s:%zu: the line is longer than %zu MiB\n",
                   name.c_str(), lines.size() + 1, kMaxLineBytes >> 20);
      return false;
    }
    bytes += line.size() + 1;
    if (bytes > limits.bytes || lines.size() == limits.lines) {
      std::fprintf(stderr,
                   "error: %s: more than %s or %zu lines of text, the most "
                   "one run reads (split it)\n",
                   name.c_str(), describeBytes(limits.bytes).c_str(),
                   limits.lines);
      return false;
    }
    lines.push_back(line);
  }
}

bool readEncodedLines(const std::string &path,
                      const std::string &vocabularyPath,
                      const CompiledModel &model,
                      std::unique_ptr<VocabularyTool> &vocabulary,
                      std::vector<std::vector<int32_t>> &ids,
                      std::string &name) {
  std::vector<std::string> lines;
  if (!readTextLines(path, lines, name))
    return false;
  // Checked here, where the file's name is known (the vocabulary tool reads
  // the lines from its standard input).
  for (size_t i = 0; i < lines.size(); ++i)
    if (std::string bad = checkUtf8(lines[i], i + 1); !bad.empty()) {
      std::fprintf(stderr, "error: %s:%s\n", name.c_str(), bad.c_str());
      return false;
    }
  vocabulary = openVocabulary(vocabularyPath, model);
  if (!vocabulary)
    return false;
  std::string error;
  if (!vocabulary->encode(lines, ids, error)) {
    std::fprintf(stderr, "error: %s: %s\n", name.c_str(), error.c_str());
    return false;
  }
  // A line of spaces says nothing (SentencePiece would make it a word
  // boundary symbol or two).
  for (size_t i = 0; i < lines.size() && i < ids.size(); ++i)
    if (lines[i].find_first_not_of(" \t\r\v\f") == std::string::npos)
      ids[i].clear();
  return true;
}

bool writeText(const std::string &path, const std::string &text,
               const char *what) {
  // "-" is standard output, as for the inputs (it made a file named "-").
  if (!path.empty() && path != "-") {
    // Atomic, every write checked: a full disk keeps what was there.
    AtomicFile out(path);
    out.write(text);
    if (std::string why = out.commit(); !why.empty()) {
      std::fprintf(stderr, "error: %s\n", why.c_str());
      return false;
    }
    return true;
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    std::fprintf(stderr, "error: cannot write %s to standard output: %s\n",
                 what, std::strerror(errno));
    return false;
  }
  return true;
}

int translateText(const CompiledModel &model, const TrainOptions &options,
                  ModelState &memory) {
  if (isLanguageModel(model)) {
    std::fprintf(stderr, "error: %s is a language model (no source side): "
                         "--translate needs a model with one; --generate "
                         "continues text\n",
                 model.name);
    return 1;
  }
  if (!model.buckets[0].predict) {
    std::fprintf(stderr, "error: %s was compiled without @predict\n", model.name);
    return 1;
  }
  // A beam's hypotheses are rows of one batch: a sentence is decoded in a
  // bucket whose batch holds them. None: refused before the text is read
  // (it was, at the first sentence of a smaller bucket, after encoding).
  const int64_t beamWidth = options.greedy ? 1 : options.beam;
  int64_t largestBatch = 0;
  for (int b = 0; b < model.numBuckets; ++b)
    largestBatch = std::max(largestBatch, model.buckets[b].batchSize);
  if (beamWidth > largestBatch) {
    std::fprintf(stderr,
                 "error: --beam %lld exceeds the batch of every bucket (at "
                 "most %lld rows): a beam's hypotheses are rows of one "
                 "batch\n",
                 static_cast<long long>(beamWidth),
                 static_cast<long long>(largestBatch));
    return 2;
  }
  std::unique_ptr<VocabularyTool> vocabulary;
  std::vector<std::vector<int32_t>> sources;
  std::string name, error;
  if (!readEncodedLines(options.translate, options.vocabulary, model,
                        vocabulary, sources, name))
    return 1;
  size_t longest = 0;
  for (int b = 0; b < model.numBuckets; ++b)
    longest = std::max<size_t>(longest, model.buckets[b].sourceLength - 1);
  int64_t cut = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].size() <= longest)
      continue;
    if (cut++ < 5)
      std::fprintf(stderr, "%s:%zu: %zu tokens, cut to the longest bucket's "
                   "%zu\n", name.c_str(), i + 1, sources[i].size(), longest);
    sources[i].resize(longest);
  }
  // Buckets shrink their batch as lengths grow: a sentence longer than
  // every bucket with the beam's rows holds would fail the whole run after
  // the others were decoded. Refused before any is.
  size_t longestForBeam = 0;
  for (int b = 0; b < model.numBuckets; ++b)
    if (model.buckets[b].batchSize >= beamWidth)
      longestForBeam = std::max<size_t>(longestForBeam,
                                        model.buckets[b].sourceLength - 1);
  for (size_t i = 0; i < sources.size(); ++i)
    if (sources[i].size() > longestForBeam) {
      std::fprintf(stderr,
                   "error: %s:%zu: %zu tokens, but the buckets whose batch "
                   "holds --beam %lld hypotheses take at most %zu: give a "
                   "narrower beam\n",
                   name.c_str(), i + 1, sources[i].size(),
                   static_cast<long long>(beamWidth), longestForBeam);
      return 2;
    }

  // Ctrl-C or SIGTERM stops the translation within a batch (exit 128 + the
  // signal); --output is written only after it, so it stays as it was.
  installInterruptHandlers();
  InterruptScope scope("translating", /*returns=*/false);
  auto start = std::chrono::steady_clock::now();
  Decoding decoding =
      options.fullDecoding ? Decoding::Full : Decoding::Incremental;
  // Each line's hypotheses, best first: one without --nbest. With --nbest
  // greedy search is beam search of 1 (the same tokens), which scores them.
  // An empty line (or one of spaces) is an empty translation, not the
  // model's guess from EOS alone: only the others are decoded.
  std::vector<size_t> spoken;
  std::vector<std::vector<int32_t>> said;
  std::vector<int64_t> limits(sources.size());
  for (size_t i = 0; i < sources.size(); ++i)
    limits[i] = longestOutput(model, sources[i].size(), beamWidth);
  for (size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].empty()) {
      spoken.push_back(i);
      said.push_back(std::move(sources[i]));
    }
  std::vector<std::vector<ScoredHypothesis>> decoded;
  if (said.empty()) {
    // nothing to decode
  } else if (options.greedy && !options.nbest) {
    std::vector<SentencePair> pairs;
    for (std::vector<int32_t> &source : said)
      pairs.push_back({std::move(source), {}});
    for (std::vector<int32_t> &tokens :
         translateGreedy(model, memory.state(), memory.arena(), pairs,
                         decoding, options.translateBatch))
      decoded.push_back({ScoredHypothesis{std::move(tokens)}});
  } else {
    BeamOptions beam{options.greedy ? 1 : options.beam, options.alpha,
                     decoding, options.translateBatch};
    decoded = translateBeamNBest(model, memory.state(), memory.arena(), said,
                                 beam, std::max<int64_t>(options.nbest, 1),
                                 error);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::vector<std::vector<ScoredHypothesis>> lists(
      sources.size(), std::vector<ScoredHypothesis>{ScoredHypothesis{}});
  for (size_t j = 0; j < spoken.size() && j < decoded.size(); ++j)
    lists[spoken[j]] = std::move(decoded[j]);
  // An output as long as its bucket allows was ended there, not by the
  // model: it may be cut short.
  int64_t ended = 0;
  for (size_t i = 0; i < lists.size(); ++i)
    if (!lists[i].empty() && limits[i] > 0 &&
        static_cast<int64_t>(lists[i].front().tokens.size()) >= limits[i] &&
        ended++ < 5)
      std::fprintf(stderr,
                   "%s:%zu: the translation reached the longest output of "
                   "its bucket (%lld tokens), where it was ended: it may be "
                   "cut short\n",
                   name.c_str(), i + 1, static_cast<long long>(limits[i]));
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();

  std::vector<std::vector<int32_t>> outputs;
  for (std::vector<ScoredHypothesis> &list : lists)
    for (ScoredHypothesis &h : list)
      outputs.push_back(h.tokens);
  std::vector<std::string> text;
  bool detokenized = vocabulary->decode(outputs, text, error);
  // A signal during the detokenization (from a terminal it also ends
  // tgc-data) ends the run as interrupted, before --output is written.
  interruptRequested();
  if (!detokenized) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  int64_t tokens = 0;
  std::string written;
  size_t next = 0;
  for (size_t line = 0; line < lists.size(); ++line)
    for (size_t rank = 0; rank < lists[line].size(); ++rank, ++next) {
      const ScoredHypothesis &h = lists[line][rank];
      if (rank == 0)
        tokens += static_cast<int64_t>(h.tokens.size());
      if (options.nbest) {
        char scores[96];
        std::snprintf(scores, sizeof scores, "%zu\t%zu\t%.6f\t%.6f\t", line,
                      rank, h.logProbability, h.score);
        written += scores;
        // The text is the last of five tab-separated fields: a tab in it
        // (a vocabulary's piece may hold one) would make a sixth.
        std::replace(text[next].begin(), text[next].end(), '\t', ' ');
      }
      written += text[next];
      written += '\n';
    }
  if (!writeText(options.output, written, "the translations"))
    return 1;
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%.2f", options.alpha);
  // A beam of 1 takes no length penalty (Translate.cpp): said, as its
  // scores show.
  std::string search =
      options.greedy      ? std::string("greedy search")
      : options.beam == 1 ? std::string("beam 1 (no length penalty)")
                          : "beam " + std::to_string(options.beam) +
                                ", alpha " + alpha;
  bool incremental = !options.fullDecoding && model.buckets[0].decodeStep;
  double perLine = lists.empty() ? 0.0 : 1000.0 * seconds / lists.size();
  std::fprintf(stderr,
               "translated %zu lines (%lld tokens) in %.2fs (%.1f ms a line, "
               "%.0f tokens/s) with %s, %s decoder%s%s\n",
               lists.size(), static_cast<long long>(tokens), seconds, perLine,
               seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0,
               search.c_str(), incremental ? "incremental" : "full-prefix",
               cut ? (", " + std::to_string(cut) + " lines cut").c_str() : "",
               ended ? (", " + std::to_string(ended) +
                        " translations ended at their longest")
                           .c_str()
                     : "");
  return 0;
}

} // namespace tgc::runtime
