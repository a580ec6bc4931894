//===- RepeatedFlags.h - a flag given twice is an error ------------*- C++ -*-===//
//
// LLVM's command line takes the last of a flag given twice (`--pairs 3
// --pairs 4` is 4): a typo or a script that appends flags then changes a run
// without a word. The tools (tgc, tgc-data) ask this after parsing and
// refuse such a flag by name; flags that take several values (cl::list) may
// repeat.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_REPEATEDFLAGS_H
#define TGC_TOOLS_REPEATEDFLAGS_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace tgc {

/// "--pairs" for the first flag of one value given more than once, at the
/// top level or in the subcommand given; empty when there is none.
inline std::string repeatedFlag() {
  namespace cl = llvm::cl;
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands()) {
    if (sub != &cl::SubCommand::getTopLevel() && !*sub)
      continue;
    for (const auto &entry : cl::getRegisteredOptions(*sub)) {
      const cl::Option *option = entry.second;
      const bool oneValue =
          option->getNumOccurrencesFlag() == cl::Optional ||
          option->getNumOccurrencesFlag() == cl::Required;
      if (oneValue && !option->isPositional() &&
          option->getNumOccurrences() > 1)
        return "--" + option->ArgStr.str();
    }
  }
  return {};
}

} // namespace tgc

#endif // TGC_TOOLS_REPEATEDFLAGS_H
