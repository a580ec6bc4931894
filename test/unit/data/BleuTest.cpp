//===- BleuTest.cpp - sacreBLEU's 13a tokenizer and corpus BLEU -----------===//
//
// Expected values are derived by hand below; each also agrees with sacreBLEU's
// own Python source (BLEU() defaults) run on the same text.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/Bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace tgc::runtime;

namespace {

constexpr double kTolerance = 1e-9;

BleuScore bleu(std::vector<std::string> hypotheses,
               std::vector<std::string> references) {
  return corpusBleu(hypotheses, references);
}

TEST(Bleu, TokenizerSplitsPunctuation) {
  EXPECT_EQ(tokenize13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize13a("He said: \"no\"... (really?) [x]{y}~`^_|\\ #%*+=@/"),
            "He said : \" no \" . . . ( really ? ) [ x ] { y } ~ ` ^ _ | \\ "
            "# % * + = @ /");
  // The apostrophe and a dash between letters are not split.
  EXPECT_EQ(tokenize13a("don't be well-known"), "don't be well-known");
  EXPECT_EQ(tokenize13a("x-.y"), "x- . y");
  EXPECT_EQ(tokenize13a(""), "");
  EXPECT_EQ(tokenize13a(" \t "), "");
}

TEST(Bleu, TokenizerKeepsNumbersTogether) {
  EXPECT_EQ(tokenize13a("It costs $3.50, or 3,000 yen."),
            "It costs $ 3.50 , or 3,000 yen .");
  // A dash after a digit is split off; "-" itself is not 13a punctuation.
  EXPECT_EQ(tokenize13a("1990-2000 and 3-4-5"), "1990 - 2000 and 3 - 4 - 5");
  // Matches do not overlap: in ",,3" the second comma is consumed by the
  // first match of ([^0-9])([\.,]) and, followed by a digit, stays put.
  EXPECT_EQ(tokenize13a("e.g. U.S.A. 1.5. .5 and 5. a.b,c 2,b a,2 ,,3"),
            "e . g . U . S . A . 1.5 . . 5 and 5 . a . b , c 2 , b a , 2 , ,3");
  EXPECT_EQ(tokenize13a("a..b"), "a . . b");
}

TEST(Bleu, TokenizerUnescapesAndJoinsLines) {
  // Unescaped in turn: "&amp;lt;" becomes "<", "&amp;amp;" only "&amp;".
  EXPECT_EQ(tokenize13a("&quot;A&quot; &amp; B &lt;c&gt; &amp;lt; &amp;amp;"),
            "\" A \" & B < c > < & amp ;");
  // "<skipped>" goes first, in one pass, so a new one can appear.
  EXPECT_EQ(tokenize13a("<skipped>hello-\nworld\nbye <skip<skipped>ped>"),
            "helloworld bye < skipped >");
}

TEST(Bleu, TokenizerPassesUtf8Through) {
  EXPECT_EQ(tokenize13a("Größe: 5€, naïve… «ok»."),
            "Größe : 5€ , naïve… «ok» .");
  // Python's str.split() whitespace: U+00A0, U+2009, U+3000, \x1c, tab.
  EXPECT_EQ(tokenize13a("a\u00a0b\u2009c\u3000d\034e\tf"), "a b c d e f");
}

TEST(Bleu, IdenticalCorpusScores100) {
  // 7 tokens "The cat sat on the mat ."; every n-gram matches.
  BleuScore s = bleu({"The cat sat on the mat."}, {"The cat sat on the mat."});
  EXPECT_NEAR(s.score, 100.0, kTolerance);
  EXPECT_EQ(s.format(), "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 "
                        "ratio = 1.000 hyp_len = 7 ref_len = 7)");
  EXPECT_EQ(s.matches[3], 4);
  EXPECT_EQ(s.totals[3], 4);
}

TEST(Bleu, EmptyHypothesesScoreZero) {
  // No tokens: BP = 0 and, without any match, the precisions stay 0.
  BleuScore s = bleu({"", ""}, {"The cat sat.", "A dog."});
  EXPECT_EQ(s.score, 0.0);
  EXPECT_EQ(s.brevityPenalty, 0.0);
  EXPECT_EQ(s.format(), "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = "
                        "0.000 hyp_len = 0 ref_len = 7)");
}

TEST(Bleu, ExpSmoothingOfMissingOrders) {
  // "the cat sat on" vs "the cat sat in": 3/4, 2/3, 1/2, 0/1. The first
  // order without a match counts 100 / (2 * 1) = 50, so BLEU =
  // (75 * 200/3 * 50 * 50)^(1/4) = (2^5 * 5^8)^(1/4) = 50 * 2^(1/4).
  BleuScore s = bleu({"the cat sat on"}, {"the cat sat in"});
  EXPECT_NEAR(s.score, 50 * std::pow(2.0, 0.25), kTolerance);
  EXPECT_NEAR(s.precisions[3], 50.0, kTolerance);
  EXPECT_EQ(s.format(), "BLEU = 59.46 75.0/66.7/50.0/50.0 (BP = 1.000 ratio = "
                        "1.000 hyp_len = 4 ref_len = 4)");

  // "the cat sat in" vs "the dog sat in": 3/4, 1/3, 0/2, 0/1; the zeros
  // count 100 / (2 * 2) = 25 and 100 / (4 * 1) = 25, so BLEU =
  // (75 * 100/3 * 25 * 25)^(1/4) = (1250^2)^(1/4) = 25 * sqrt(2).
  s = bleu({"the cat sat in"}, {"the dog sat in"});
  EXPECT_NEAR(s.score, 25 * std::sqrt(2.0), kTolerance);
  EXPECT_EQ(s.format(), "BLEU = 35.36 75.0/33.3/25.0/25.0 (BP = 1.000 ratio = "
                        "1.000 hyp_len = 4 ref_len = 4)");
}

TEST(Bleu, OrderWithoutNgramsScoresZero) {
  // No 4-gram in 3 tokens: effective_order=False, as sacreBLEU's corpus
  // BLEU, so the empty order makes the score 0 despite 100% precisions.
  BleuScore s = bleu({"a b c"}, {"a b c"});
  EXPECT_EQ(s.score, 0.0);
  EXPECT_EQ(s.format(), "BLEU = 0.00 100.0/100.0/100.0/0.0 (BP = 1.000 ratio "
                        "= 1.000 hyp_len = 3 ref_len = 3)");
}

TEST(Bleu, BrevityPenalty) {
  // 6 hypothesis tokens, all n-grams found in the 7 reference tokens (with
  // "."): precisions 100, BP = exp(1 - 7/6), BLEU = 100 * exp(-1/6).
  BleuScore s = bleu({"The cat sat on the mat"}, {"The cat sat on the mat."});
  EXPECT_NEAR(s.brevityPenalty, std::exp(1 - 7.0 / 6.0), kTolerance);
  EXPECT_NEAR(s.score, 100 * std::exp(-1.0 / 6.0), kTolerance);
  EXPECT_EQ(s.format(), "BLEU = 84.65 100.0/100.0/100.0/100.0 (BP = 0.846 "
                        "ratio = 0.857 hyp_len = 6 ref_len = 7)");
}

TEST(Bleu, MultiSentenceCorpusSumsStatistics) {
  // Per sentence (matches/totals for n = 1..4, hyp/ref length):
  //   identical:             7/7 6/6 5/5 4/4, 7/7
  //   "A dog barked ." vs "The dog barked loudly .":
  //                          3/4 1/3 0/2 0/1, 4/5
  //   "It is 3.5 km away , I think ." vs "It is about 3.5 km away .":
  //                          6/9 3/8 1/7 0/6, 9/7
  //   "the the the" vs "the cat on the mat" ("the" clipped to 2):
  //                          2/3 0/2 0/1 0/0, 3/5
  // Corpus: 18/23 10/19 6/15 4/11, hyp_len 23 < ref_len 24, so BLEU =
  // exp(1 - 24/23) * 100 * (18/23 * 10/19 * 6/15 * 4/11)^(1/4).
  BleuScore s = bleu({"The cat sat on the mat.", "A dog barked.",
                      "It is 3.5 km away, I think.", "the the the"},
                     {"The cat sat on the mat.", "The dog barked loudly.",
                      "It is about 3.5 km away.", "the cat on the mat"});
  const int64_t matches[4] = {18, 10, 6, 4}, totals[4] = {23, 19, 15, 11};
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(s.matches[n], matches[n]) << "order " << n + 1;
    EXPECT_EQ(s.totals[n], totals[n]) << "order " << n + 1;
  }
  double expected = std::exp(1 - 24.0 / 23.0) * 100 *
                    std::pow(18.0 / 23 * 10.0 / 19 * 6.0 / 15 * 4.0 / 11, 0.25);
  EXPECT_NEAR(s.score, expected, kTolerance);
  EXPECT_EQ(s.format(), "BLEU = 47.37 78.3/52.6/40.0/36.4 (BP = 0.957 ratio = "
                        "0.958 hyp_len = 23 ref_len = 24)");
}

TEST(Bleu, TrailingWhitespaceIsStrippedBeforeTokenizing) {
  // sacreBLEU rstrips each line first, so a final "-\n" keeps its dash.
  BleuScore s = bleu({"a b c word-\n"}, {"a b c word-"});
  EXPECT_NEAR(s.score, 100.0, kTolerance);
}

TEST(Bleu, SacreBleuTestSuiteCases) {
  // sacreBLEU's test_sentence_bleu.py (issue #98) gives 8.493 (to 1e-3) for
  // exp smoothing and 13a; its 14 hypothesis tokens fill every order, so
  // effective order does not change it. Precisions 5/14, 2/13, then
  // 100/(2*12) and 100/(4*11).
  BleuScore s = bleu(
      {"Producția de zahăr primă va fi exprimată în ceea ce privește zahărul "
       "alb;"},
      {"producţia de zahăr brut se exprimă în zahăr alb;"});
  EXPECT_NEAR(s.score, 8.493, 1e-3);
  double expected =
      std::pow(500.0 / 14 * 200.0 / 13 * 100.0 / 24 * 100.0 / 44, 0.25);
  EXPECT_NEAR(s.score, expected, kTolerance);
  EXPECT_EQ(s.format(), "BLEU = 8.49 35.7/15.4/4.2/2.3 (BP = 1.000 ratio = "
                        "1.400 hyp_len = 14 ref_len = 10)");

  // sacreBLEU's test_bleu.py gives matches 4/2/1/0 of totals 6/5/4/3 here.
  s = bleu({"am I am a character sequence"},
           {"I am a symbol string sequence a a"});
  const int64_t matches[4] = {4, 2, 1, 0}, totals[4] = {6, 5, 4, 3};
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(s.matches[n], matches[n]) << "order " << n + 1;
    EXPECT_EQ(s.totals[n], totals[n]) << "order " << n + 1;
  }
  EXPECT_EQ(s.format(), "BLEU = 23.26 66.7/40.0/25.0/16.7 (BP = 0.717 ratio = "
                        "0.750 hyp_len = 6 ref_len = 8)");

  // Its issue #141 case: no match at all gives 0.
  EXPECT_EQ(bleu({"this is a cat"}, {"okay thanks"}).score, 0.0);
}

} // namespace
