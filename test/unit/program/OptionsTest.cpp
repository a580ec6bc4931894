// The training programs' flags for the step's run-time hyperparameters
// (runtime/program/train/Options.cpp): what each accepts, and that a bad
// value stops the program with exit code 2.
#include "runtime/program/train/Options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace tgc::runtime {
namespace {

/// Parses `flags` after a program name; `exitCode` is set on failure.
bool parse(std::initializer_list<const char *> flags, TrainOptions &options,
           int &exitCode) {
  std::vector<std::string> words = {"train", "--task", "reverse"};
  words.insert(words.end(), flags.begin(), flags.end());
  std::vector<char *> argv;
  for (std::string &word : words)
    argv.push_back(word.data());
  argv.push_back(nullptr);
  return parseTrainOptions(static_cast<int>(words.size()), argv.data(),
                           options, exitCode);
}

TEST(TrainOptions, HyperparametersAreUnsetByDefault) {
  TrainOptions o;
  int code = 0;
  ASSERT_TRUE(parse({}, o, code));
  EXPECT_FALSE(o.dropout || o.attentionDropout || o.labelSmoothing ||
               o.adamBeta1 || o.adamBeta2 || o.adamEps);
}

TEST(TrainOptions, TakesEachHyperparameter) {
  TrainOptions o;
  int code = 0;
  ASSERT_TRUE(parse({"--dropout", "0.3", "--attention-dropout=0",
                     "--label-smoothing", "0.2", "--adam-eps", "1e-6"},
                    o, code));
  EXPECT_DOUBLE_EQ(*o.dropout, 0.3);
  EXPECT_DOUBLE_EQ(*o.attentionDropout, 0.0);
  EXPECT_DOUBLE_EQ(*o.labelSmoothing, 0.2);
  EXPECT_DOUBLE_EQ(*o.adamEps, 1e-6);
}

TEST(TrainOptions, AdamBetasInEverySpelling) {
  for (const char *text : {"0.8,0.99", "(0.8, 0.99)", "0.8 0.99", "[0.8,0.99]",
                           "0.8, 0.99"}) {
    TrainOptions o;
    int code = 0;
    ASSERT_TRUE(parse({"--adam-betas", text}, o, code)) << text;
    EXPECT_DOUBLE_EQ(*o.adamBeta1, 0.8) << text;
    EXPECT_DOUBLE_EQ(*o.adamBeta2, 0.99) << text;
  }
}

TEST(TrainOptions, BadHyperparametersStopWithExitCode2) {
  for (std::initializer_list<const char *> flags :
       {std::initializer_list<const char *>{"--dropout", "1"},
        {"--dropout", "-0.1"},
        {"--attention-dropout", "x"},
        {"--label-smoothing", "nan"},
        {"--adam-eps", "0"},
        {"--adam-eps", "1"},
        {"--adam-betas", "0.9"},
        {"--adam-betas", "0.9,1"},
        {"--adam-betas", "0.9,0.98,0.5"},
        {"--adam-betas", ""}}) {
    TrainOptions o;
    int code = 0;
    EXPECT_FALSE(parse(flags, o, code)) << *flags.begin() << " "
                                        << *(flags.begin() + 1);
    EXPECT_EQ(code, 2);
  }
}

TEST(TrainOptions, AFlagGivenTwiceStopsWithExitCode2) {
  // Also under another of its names (fairseq's --max-update is --steps);
  // the program's own words ("train --task reverse") count too.
  for (std::initializer_list<const char *> flags :
       {std::initializer_list<const char *>{"--steps", "3", "--steps", "4"},
        {"--steps=3", "--max-update", "4"},
        {"--task", "copy"}}) {
    TrainOptions o;
    int code = 0;
    EXPECT_FALSE(parse(flags, o, code)) << *flags.begin();
    EXPECT_EQ(code, 2);
  }
}

TEST(TrainOptions, MaxNewTokensIsBoundedAtAMillion) {
  // --generate's flags alone (a training flag such as --task is refused
  // beside it).
  auto generate = [](const char *count, TrainOptions &o, int &code) {
    std::vector<std::string> words = {
        "train",   "--generate", "p.txt",   "--resume",         "lm.ckpt",
        "--vocab", "bpe.model",  "--max-new-tokens", count};
    std::vector<char *> argv;
    for (std::string &word : words)
      argv.push_back(word.data());
    argv.push_back(nullptr);
    return parseTrainOptions(static_cast<int>(words.size()), argv.data(), o,
                             code);
  };
  TrainOptions o;
  int code = 0;
  ASSERT_TRUE(generate("1000000", o, code));
  EXPECT_EQ(o.maxNewTokens, kMaxNewTokens);
  for (const char *count : {"1000001", "0", "-1"}) {
    TrainOptions refused;
    EXPECT_FALSE(generate(count, refused, code)) << count;
    EXPECT_EQ(code, 2) << count;
  }
}

TEST(TrainOptions, AlphaIsBoundedAtTen) {
  // Past 10 the length penalty's power overflows for long outputs: 1e308
  // made every hypothesis score 0 (and the log said "alpha 1000").
  TrainOptions o;
  int code = 0;
  ASSERT_TRUE(parse({"--alpha", "10"}, o, code));
  EXPECT_EQ(o.alpha, kMaxAlpha);
  for (const char *alpha : {"10.5", "1e308", "-1", "nan"}) {
    TrainOptions refused;
    EXPECT_FALSE(parse({"--alpha", alpha}, refused, code)) << alpha;
    EXPECT_EQ(code, 2) << alpha;
  }
}

TEST(TrainOptions, StepsFitTheStepCounters) {
  // The compiled step reads its step as a 32-bit integer (step 2^31 was
  // INT32_MIN: Adam made every parameter NaN), and dropout's key counts the
  // batches drawn in 32 bits.
  TrainOptions o;
  int code = 0;
  ASSERT_TRUE(parse({"--steps", "2147483647"}, o, code));
  EXPECT_EQ(o.steps, kMaxSteps);
  ASSERT_TRUE(parse({"--steps", "1048575", "--update-freq", "4096"}, o, code));
  for (std::initializer_list<const char *> flags :
       {std::initializer_list<const char *>{"--steps", "2147483648"},
        {"--steps", "2000000000", "--update-freq", "4"},
        {"--steps", "1048576", "--update-freq", "4096"}}) {
    TrainOptions refused;
    EXPECT_FALSE(parse(flags, refused, code)) << *(flags.begin() + 1);
    EXPECT_EQ(code, 2);
  }
}

TEST(TrainOptions, AnEmptyFileNameIsRefused) {
  // `--score ""` (a script's unset variable) read as not given: the program
  // trained the model it was to score and replaced its checkpoint. (An
  // empty --resume is a new run, as documented.)
  for (const char *flag :
       {"--score", "--translate", "--generate", "--checkpoint",
        "--train-data", "--metrics", "--loss-log", "--dump-params"}) {
    TrainOptions o;
    int code = 0;
    EXPECT_FALSE(parse({flag, ""}, o, code)) << flag;
    EXPECT_EQ(code, 2) << flag;
  }
}

} // namespace
} // namespace tgc::runtime
