//===- Score.cpp - tgc-data bleu: sacreBLEU's corpus BLEU ------------------===//
#include "tools/tgc-data/Commands.h"

#include "runtime/data/Bleu.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/TokenFiles.h"
#include "runtime/data/Utf8.h"
#include "runtime/data/Vocabulary.h"

#include <fstream>
#include <unistd.h>

namespace cl = llvm::cl;

namespace tgc::data {

cl::SubCommand bleuCommand("bleu",
                           "Corpus BLEU of translations against references "
                           "(sacreBLEU's defaults: 13a, exp smoothing)");

namespace {

cl::opt<std::string> bleuReference("ref", cl::desc("Reference translations"),
                                   cl::value_desc("text file"), cl::Required,
                                   cl::sub(bleuCommand), cl::cat(dataCategory));
cl::opt<std::string> bleuHypotheses(cl::Positional, cl::Required,
                                    cl::desc("<translations>"),
                                    cl::sub(bleuCommand), cl::cat(dataCategory));

/// The most standard input a BLEU reads (a translation of 10^7 lines).
constexpr size_t kMaxStandardInputBytes = size_t(1) << 30;

/// Standard input's lines, as readLines reads a file's.
std::string readStandardInputLines(std::vector<std::string> &lines) {
  runtime::LineReader reader(STDIN_FILENO);
  std::string line;
  size_t bytes = 0;
  for (size_t number = 1;; ++number) {
    switch (reader.next(line)) {
    case runtime::LineRead::End:
      return {};
    case runtime::LineRead::TooLong:
      return "<stdin>:" + std::to_string(number) +
             ": the line is longer than 64 MiB";
    case runtime::LineRead::Failed:
      return "cannot read standard input: " + reader.error();
    case runtime::LineRead::Line:
      break;
    }
    if ((bytes += line.size() + 1) > kMaxStandardInputBytes)
      return "standard input is larger than the limit of 1 GiB";
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (std::string bad = runtime::checkUtf8(line, number); !bad.empty())
      return "<stdin>:" + bad;
    lines.push_back(std::move(line));
  }
}

/// Reads `path`'s lines (CRLF as LF; "-": standard input); an empty string or the problem:
/// "path: No such file...", "path is a directory...", "path:L:C: invalid
/// UTF-8 (byte 0xNN)".
std::string readLines(const std::string &path, std::vector<std::string> &lines) {
  if (path == "-")
    return readStandardInputLines(lines);
  if (std::string why = runtime::checkInputFile(path, /*emptyOk=*/true);
      !why.empty())
    return why;
  std::string text;
  if (std::string why = runtime::readFile(path, text); !why.empty())
    return why;
  if (std::string bad = runtime::checkUtf8(text); !bad.empty())
    return path + ":" + bad;
  for (std::string_view line : runtime::splitLines(text))
    lines.emplace_back(line);
  return {};
}

} // namespace

int runBleu() {
  std::vector<std::string> hypotheses, references;
  if (bleuHypotheses == "-" && bleuReference == "-")
    return fail("the translations and --ref cannot both be standard input "
                "(-)");
  if (std::string why = readLines(bleuHypotheses, hypotheses); !why.empty())
    return fail(why);
  if (std::string why = readLines(bleuReference, references); !why.empty())
    return fail(why);
  auto named = [](const std::string &path) {
    return path == "-" ? std::string("standard input") : path;
  };
  if (hypotheses.size() != references.size())
    return fail(named(bleuHypotheses) + " has " +
                std::to_string(hypotheses.size()) + " lines, " +
                named(bleuReference) + " " +
                std::to_string(references.size()));
  llvm::outs() << runtime::corpusBleu(hypotheses, references).format() << "\n";
  return 0;
}

} // namespace tgc::data
