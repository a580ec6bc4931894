//===- Nesting.h - bracket depth before a recursive parser -------*- C++ -*-===//
//
// The parsers of tgc's inputs recurse once per bracket level: MLIR's parser
// (.mlir files, graph files' attributes), its pass-pipeline parser
// (tgc-opt --pass-pipeline) and LLVM's JSON parser (tgc-data curves). 100k
// nested brackets overflow the stack of each, so the text is checked first.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_COMMON_NESTING_H
#define TGC_COMMON_NESTING_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tgc {

/// The deepest bracket nesting ([ { ( <) an input may have.
inline constexpr int kMaxNestingDepth = 512;

/// The offset of the first bracket that opens level `limit` + 1, or nothing
/// when the text nests no deeper. Brackets in string literals and //
/// comments do not count; a `>` closes only an open `<` (`->` closes
/// nothing), and `)`, `]`, `}` only their own opener.
inline std::optional<size_t> findDeepNesting(std::string_view text,
                                             int limit = kMaxNestingDepth) {
  // The open brackets, innermost last. A `>` closes only a `<` and a closer
  // only its own opener (and the `<`s left open inside it), so a stray `>`
  // (an integer set's `d0 >= 0`) hides no level. Every step is O(1)
  // amortized.
  std::string open;
  size_t size = text.size();
  auto close = [&](char opener) {
    while (!open.empty() && open.back() == '<')
      open.pop_back();
    if (!open.empty() && open.back() == opener)
      open.pop_back();
  };
  for (size_t i = 0; i < size; ++i) {
    char c = text[i];
    switch (c) {
    case '"': // a string literal, with backslash escapes
      for (++i; i < size && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < size && text[i + 1] == '/')
        while (i < size && text[i] != '\n')
          ++i;
      break;
    case '[':
    case '{':
    case '(':
    case '<':
      open.push_back(c);
      if (open.size() > static_cast<size_t>(limit))
        return i;
      break;
    case '>':
      // A function type's arrow closes nothing; nor does a `>` whose
      // innermost open bracket is not a `<`.
      if ((i == 0 || text[i - 1] != '-') && !open.empty() && open.back() == '<')
        open.pop_back();
      break;
    case ']':
      close('[');
      break;
    case '}':
      close('{');
      break;
    case ')':
      close('(');
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

} // namespace tgc

#endif // TGC_COMMON_NESTING_H
