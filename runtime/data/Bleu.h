//===- Bleu.h - corpus BLEU as sacreBLEU computes it ------------*- C++ -*-===//
//
// Corpus BLEU with sacreBLEU 2.x's defaults, so that a score printed here is
// comparable with published ones: the 13a tokenizer (mteval-v13a), mixed
// case, n-grams up to 4, exp smoothing (NIST), brevity penalty, no effective
// order, one reference per hypothesis. Text is UTF-8 bytes; 13a only splits
// ASCII punctuation, and whitespace is Python's str.split() set (so U+00A0
// and the other Unicode spaces separate words, as in sacreBLEU).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_BLEU_H
#define TGC_RUNTIME_BLEU_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tgc::runtime {

/// sacreBLEU's 13a tokenizer: its tokens joined by single spaces.
std::string tokenize13a(std::string_view line);

struct BleuScore {
  double score = 0;          ///< 0..100
  double precisions[4] = {}; ///< percent, after smoothing
  double brevityPenalty = 0;
  double ratio = 0; ///< hypothesisLength / referenceLength
  int64_t hypothesisLength = 0, referenceLength = 0;
  int64_t matches[4] = {}, totals[4] = {};

  /// sacreBLEU's line: "BLEU = 28.45 60.0/33.3/21.4/15.4 (BP = 1.000 ratio =
  /// 1.000 hyp_len = 10 ref_len = 10)".
  std::string format() const;
};

/// The score of `hypotheses` against `references` (same count, sentence i
/// against reference i), both detokenized text.
BleuScore corpusBleu(std::span<const std::string> hypotheses,
                     std::span<const std::string> references);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_BLEU_H
