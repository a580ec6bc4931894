//===- Score.cpp - tgc-data bleu: sacreBLEU's corpus BLEU ------------------===//
#include "tools/tgc-data/Commands.h"

#include "runtime/data/Bleu.h"

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

bool readLines(const std::string &path, std::vector<std::string> &lines) {
  std::ifstream file(path);
  if (!file)
    return false;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(line);
  }
  return true;
}

} // namespace

int runBleu() {
  std::vector<std::string> hypotheses, references;
  if (!readLines(bleuHypotheses, hypotheses))
    return fail("cannot read " + bleuHypotheses);
  if (!readLines(bleuReference, references))
    return fail("cannot read " + bleuReference);
  if (hypotheses.size() != references.size())
    return fail(bleuHypotheses + " has " + std::to_string(hypotheses.size()) +
                " lines, " + bleuReference + " " +
                std::to_string(references.size()));
  llvm::outs() << runtime::corpusBleu(hypotheses, references).format() << "\n";
  return 0;
}

} // namespace tgc::data
