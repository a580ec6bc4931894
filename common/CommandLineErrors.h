//===- CommandLineErrors.h - LLVM's flag errors in tgc's form ---*- C++ -*-===//
//
// LLVM's command-line parser reports a bad flag as "tgc-data: for the
// --vocab option: must be specified at least once!": not the "error: ..."
// every other message of the tools has, and with no word of where the
// flags are listed. The tools parse through parseCommandLine, which takes
// what the parser writes (to its error stream, and to standard error,
// where an option's own errors go) and prints each line in the tools' form.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_COMMON_COMMANDLINEERRORS_H
#define TGC_COMMON_COMMANDLINEERRORS_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <unistd.h>

namespace tgc {

/// `text` (what the parser wrote) as lines "<prefix>error: ...", each
/// without the parser's "<program>: " and its "!", ending with "note: <help>
/// lists the flags". A line of the parser's own advice ("See: ... --help")
/// gives way to the note.
inline std::string formatCommandLineErrors(std::string_view text,
                                           std::string_view prefix,
                                           std::string_view help) {
  std::string out;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    for (std::string_view advice : {"See: ", "Try: "})
      if (size_t at = line.find(advice); at != std::string_view::npos)
        line = line.substr(0, at);
    // "tgc-data: for the ..." (the program's file name, no spaces).
    if (size_t colon = line.find(": "); colon != std::string_view::npos &&
                                        line.substr(0, colon).find(' ') ==
                                            std::string_view::npos)
      line = line.substr(colon + 2);
    while (!line.empty() && (line.back() == ' ' || line.back() == ':' ||
                             line.back() == '!'))
      line.remove_suffix(1);
    if (line.empty())
      continue;
    const bool hint = line.starts_with("Did you mean");
    out += std::string(prefix) + (hint ? "note: d" : "error: ") +
           std::string(hint ? line.substr(1) : line) + "\n";
  }
  if (out.empty())
    out = std::string(prefix) + "error: the command line cannot be read\n";
  return out + std::string(prefix) + "note: " + std::string(help) +
         " lists the flags and their values\n";
}

/// cl::ParseCommandLineOptions, its errors printed by
/// formatCommandLineErrors; false after them.
inline bool parseCommandLine(int argc, const char *const *argv,
                             llvm::StringRef overview, std::string_view prefix,
                             std::string_view help) {
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  // An option's own errors go to standard error, not to errorStream: it
  // is a temporary file while the parser runs (--help writes to standard
  // output).
  llvm::errs().flush();
  FILE *captured = std::tmpfile();
  int saved = captured ? ::dup(STDERR_FILENO) : -1;
  if (saved >= 0)
    ::dup2(::fileno(captured), STDERR_FILENO);
  bool parsed =
      llvm::cl::ParseCommandLineOptions(argc, argv, overview, &errorStream);
  llvm::errs().flush();
  if (saved >= 0) {
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    std::rewind(captured);
    char buffer[4096];
    std::string written;
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, captured)) > 0;)
      written.append(buffer, n);
    errors = written + errorStream.str();
  }
  if (captured)
    std::fclose(captured);
  if (parsed) {
    // Nothing went wrong: whatever the parser said stays said.
    if (!errors.empty())
      llvm::errs() << errors;
    return true;
  }
  llvm::errs() << formatCommandLineErrors(errors, prefix, help);
  return false;
}

} // namespace tgc

#endif // TGC_COMMON_COMMANDLINEERRORS_H
