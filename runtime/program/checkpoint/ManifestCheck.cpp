//===- ManifestCheck.cpp - does a checkpoint come from this program? ------===//
#include "runtime/program/checkpoint/ManifestCheck.h"

#include <algorithm>
#include <sstream>

namespace tgc::runtime {

namespace {

std::vector<std::string> linesOf(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      lines.push_back(line);
  return lines;
}

/// The lines of `a` that `b` does not have, in `a`'s order.
std::vector<std::string> missingFrom(const std::vector<std::string> &a,
                                     const std::vector<std::string> &b) {
  std::vector<std::string> out;
  for (const std::string &line : a)
    if (std::find(b.begin(), b.end(), line) == b.end())
      out.push_back(line);
  return out;
}

bool isConfig(const std::string &line) { return line.rfind("config ", 0) == 0; }

} // namespace

std::string ManifestDifference::format() const {
  std::string out;
  for (const std::string &line : checkpointOnly)
    out += "  checkpoint: " + line + "\n";
  for (const std::string &line : programOnly)
    out += "  program:    " + line + "\n";
  return out;
}

ManifestDifference compareManifests(const std::string &checkpoint,
                                    const std::string &program) {
  std::vector<std::string> a = linesOf(checkpoint), b = linesOf(program);
  ManifestDifference d{missingFrom(a, b), missingFrom(b, a)};
  d.configDiffers = std::any_of(d.checkpointOnly.begin(),
                                d.checkpointOnly.end(), isConfig) ||
                    std::any_of(d.programOnly.begin(), d.programOnly.end(),
                                isConfig);
  return d;
}

} // namespace tgc::runtime
