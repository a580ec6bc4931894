//===- Score.cpp - tgc-data bleu: sacreBLEU's corpus BLEU ------------------===//
#include "tools/tgc-data/Commands.h"

#include "runtime/data/Bleu.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/Vocabulary.h"

#include <fstream>

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

/// Reads `path`'s lines (CRLF as LF); an empty string or the problem:
/// "path: No such file...", "path is a directory...", "path:L:C: invalid
/// UTF-8 (byte 0xNN)".
std::string readLines(const std::string &path, std::vector<std::string> &lines) {
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
  if (std::string why = readLines(bleuHypotheses, hypotheses); !why.empty())
    return fail(why);
  if (std::string why = readLines(bleuReference, references); !why.empty())
    return fail(why);
  if (hypotheses.size() != references.size())
    return fail(bleuHypotheses + " has " + std::to_string(hypotheses.size()) +
                " lines, " + bleuReference + " " +
                std::to_string(references.size()));
  llvm::outs() << runtime::corpusBleu(hypotheses, references).format() << "\n";
  return 0;
}

} // namespace tgc::data
