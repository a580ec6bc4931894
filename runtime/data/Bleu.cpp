//===- Bleu.cpp - corpus BLEU as sacreBLEU computes it --------------------===//
#include "runtime/data/Bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

namespace tgc::runtime {
namespace {

constexpr int kMaxOrder = 4;

/// Length in bytes of the character at s[i] if Python's str.split() splits
/// on it (ASCII \t-\r, \x1c-\x1f, space, and U+0085, U+00A0, U+1680,
/// U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 in UTF-8), else 0.
size_t whitespaceAt(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  unsigned c = at(0), c1 = at(1), c2 = at(2);
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f))
    return 1;
  if (c == 0xc2 && (c1 == 0x85 || c1 == 0xa0))
    return 2;
  bool wide = (c == 0xe1 && c1 == 0x9a && c2 == 0x80) ||
              (c == 0xe2 && c1 == 0x80 &&
               ((c2 >= 0x80 && c2 <= 0x8a) || c2 == 0xa8 || c2 == 0xa9 ||
                c2 == 0xaf)) ||
              (c == 0xe2 && c1 == 0x81 && c2 == 0x9f) ||
              (c == 0xe3 && c1 == 0x80 && c2 == 0x80);
  return wide ? 3 : 0;
}

/// Python's str.rstrip().
std::string_view rstrip(std::string_view s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = whitespaceAt(s, i);
    i += n ? n : 1;
    if (!n)
      end = i;
  }
  return s.substr(0, end);
}

/// Python's str.replace: one pass, left to right, without overlap.
std::string replaceAll(std::string_view s, std::string_view from,
                       std::string_view to) {
  std::string out;
  size_t i = 0;
  for (size_t at; (at = s.find(from, i)) != std::string_view::npos;
       i = at + from.size())
    out.append(s.substr(i, at - i)).append(to);
  return out.append(s.substr(i));
}

/// re.sub of a two-character pattern `(first)(second)`: matches are taken
/// left to right without overlap, and `ab` becomes " a b" or "a b ". On
/// bytes this equals Python's result on characters: no byte of a multibyte
/// UTF-8 character is a digit, '.', ',' or '-'.
template <typename First, typename Second>
std::string padPairs(std::string_view s, First first, Second second,
                     bool spaceBefore) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      out += spaceBefore ? " " : "";
      out += {s[i], ' ', s[i + 1]};
      out += spaceBefore ? "" : " ";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// Counts each n-gram (n <= 4) of a 13a-tokenized line under its own text:
/// tokens hold no spaces, so equal text means equal n-gram of equal order.
/// Returns the number of tokens.
int64_t countNgrams(std::string_view text,
                    std::unordered_map<std::string_view, int64_t> &counts) {
  if (text.empty())
    return 0;
  std::vector<size_t> starts = {0}; // of each token, then one past the end
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == ' ')
      starts.push_back(i + 1);
  starts.push_back(text.size() + 1);
  size_t tokens = starts.size() - 1;
  for (size_t n = 1; n <= kMaxOrder; ++n)
    for (size_t a = 0; a + n <= tokens; ++a)
      ++counts[text.substr(starts[a], starts[a + n] - 1 - starts[a])];
  return static_cast<int64_t>(tokens);
}

} // namespace

std::string tokenize13a(std::string_view line) {
  std::string s = replaceAll(line, "<skipped>", "");
  s = replaceAll(s, "-\n", "");
  s = replaceAll(s, "\n", " ");
  // In this order: "&amp;lt;" becomes "<", as in mteval-v13a.
  s = replaceAll(s, "&quot;", "\"");
  s = replaceAll(s, "&amp;", "&");
  s = replaceAll(s, "&lt;", "<");
  s = replaceAll(s, "&gt;", ">");

  // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 ", on the line padded with spaces
  // (which lets a leading "." or "," be split off below).
  std::string padded = " ";
  for (char c : s) {
    if ((c >= '{' && c <= '~') || (c >= '[' && c <= '`') ||
        (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
        (c >= ':' && c <= '@') || c == '/')
      padded += {' ', c, ' '};
    else
      padded += c;
  }
  padded += ' ';
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto notDigit = [&](char c) { return !digit(c); };
  auto stop = [](char c) { return c == '.' || c == ','; };
  auto dash = [](char c) { return c == '-'; };
  s = padPairs(padded, notDigit, stop, false); // ([^0-9])([\.,])
  s = padPairs(s, stop, notDigit, true);       // ([\.,])([^0-9])
  s = padPairs(s, digit, dash, false);         // ([0-9])(-)

  std::string out;
  bool gap = false;
  for (size_t i = 0; i < s.size();) {
    if (size_t n = whitespaceAt(s, i)) {
      gap = true;
      i += n;
      continue;
    }
    if (gap && !out.empty())
      out += ' ';
    gap = false;
    out += s[i++];
  }
  return out;
}

std::string BleuScore::format() const {
  char line[256];
  std::snprintf(line, sizeof(line),
                "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f "
                "hyp_len = %lld ref_len = %lld)",
                score, precisions[0], precisions[1], precisions[2],
                precisions[3], brevityPenalty, ratio,
                static_cast<long long>(hypothesisLength),
                static_cast<long long>(referenceLength));
  return line;
}

BleuScore corpusBleu(std::span<const std::string> hypotheses,
                     std::span<const std::string> references) {
  BleuScore r;
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    std::string hyp = tokenize13a(rstrip(hypotheses[s]));
    std::string ref = tokenize13a(rstrip(references[s]));
    std::unordered_map<std::string_view, int64_t> hypCounts, refCounts;
    r.hypothesisLength += countNgrams(hyp, hypCounts);
    r.referenceLength += countNgrams(ref, refCounts);
    for (const auto &[ngram, count] : hypCounts) {
      auto n = std::count(ngram.begin(), ngram.end(), ' ');
      r.totals[n] += count;
      if (auto it = refCounts.find(ngram); it != refCounts.end())
        r.matches[n] += std::min(count, it->second);
    }
  }

  // sacreBLEU's BLEU.compute_bleu, step by step, for bit-equal results.
  auto hypLen = static_cast<double>(r.hypothesisLength);
  auto refLen = static_cast<double>(r.referenceLength);
  r.ratio = r.referenceLength ? hypLen / refLen : 0.0;
  r.brevityPenalty = 1.0;
  if (r.hypothesisLength < r.referenceLength)
    r.brevityPenalty = r.hypothesisLength ? std::exp(1 - refLen / hypLen) : 0.0;
  // No match at all: 0, with precisions left at 0 (sacreBLEU #141).
  if (std::all_of(r.matches, r.matches + kMaxOrder,
                  [](int64_t m) { return m == 0; }))
    return r;
  // Exp smoothing: the k-th order without a match counts 1 / 2^k matches.
  // An order without n-grams stops the loop; its precision stays 0.
  double smooth = 1.0;
  for (int n = 0; n < kMaxOrder && r.totals[n]; ++n) {
    auto total = static_cast<double>(r.totals[n]);
    if (r.matches[n] == 0) {
      smooth *= 2;
      r.precisions[n] = 100.0 / (smooth * total);
    } else {
      r.precisions[n] = 100.0 * static_cast<double>(r.matches[n]) / total;
    }
  }
  // sacreBLEU's my_log takes log(0) as -9999999999, which makes the score 0.
  double logSum = 0;
  for (double p : r.precisions)
    logSum += p == 0.0 ? -9999999999.0 : std::log(p);
  r.score = r.brevityPenalty * std::exp(logSum / kMaxOrder);
  return r;
}

} // namespace tgc::runtime
