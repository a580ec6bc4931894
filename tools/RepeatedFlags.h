//===- RepeatedFlags.h - a flag given twice is an error ------------*- C++ -*-===//
//
// LLVM's command line takes the last of a flag given twice (`--pairs 3
// --pairs 4` is 4): a typo or a script that appends flags then changes a run
// without a word. The tools (tgc, tgc-data) ask this after parsing and
// refuse such a flag by name; flags that take several values may repeat.
// It reads the words themselves: the options LLVM's and MLIR's libraries
// register are objects without RTTI, which UBSan's checks take for bad
// ones when they are looked at.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_REPEATEDFLAGS_H
#define TGC_TOOLS_REPEATEDFLAGS_H

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// "--pairs" for the first flag among argv[1..] given more than once (by
/// any number of leading dashes, with or without "=value"), those in
/// `repeatable` aside; empty when there is none. A word after "--", a
/// lone "-" and a negative number are values.
inline std::string repeatedFlag(int argc, char **argv,
                                std::initializer_list<std::string_view>
                                    repeatable = {}) {
  std::vector<std::string_view> seen;
  for (int i = 1; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word == "--")
      break;
    if (word.size() < 2 || word[0] != '-' ||
        std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.')
      continue;
    std::string_view name = word.substr(word.find_first_not_of('-'));
    name = name.substr(0, name.find('='));
    if (name.empty() || std::find(repeatable.begin(), repeatable.end(),
                                  name) != repeatable.end())
      continue;
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      return "--" + std::string(name);
    seen.push_back(name);
  }
  return {};
}

} // namespace tgc

#endif // TGC_TOOLS_REPEATEDFLAGS_H
