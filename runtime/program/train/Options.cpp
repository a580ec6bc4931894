//===- Options.cpp - parsing a training binary's flags --------------------===//
#include "runtime/program/train/Options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tgc::runtime {

namespace {

const char *kUsage =
    "usage: %s [options]\n"
    "Trains the compiled model, then translates held-out sentences greedily;\n"
    "or, with --translate, translates text with beam search.\n"
    "data:\n"
    "  --task copy|reverse|digits  a built-in task (default reverse)\n"
    "  --train-data F.tok    a corpus written by tgc-data encode\n"
    "  --valid-data F.tok    its validation set\n"
    "  --vocab F.model       the SentencePiece model: detokenized samples and "
    "BLEU\n"
    "  --train-source F --train-target F\n"
    "                        parallel token-id files, one sentence per line\n"
    "  --valid-source F --valid-target F\n"
    "                        held-out token-id files for the accuracy\n"
    "training:\n"
    "  --steps N             train until step N (default 1000)\n"
    "  --max-epochs N        or stop after N passes over the --train-data or\n"
    "                        --train-source pairs, if sooner (0: no limit)\n"
    "  --max-time T          or stop after T of training (H:MM, H:MM:SS or\n"
    "                        minutes), if sooner; saved as at the end\n"
    "  --seed S              parameters, data order, dropout (default 1, or\n"
    "                        the checkpoint's with --resume)\n"
    "  --log-every K         a log line every K steps (default 100)\n"
    "  --loss-log F          each step's loss (with any extra terms) and\n"
    "                        token count to F\n"
    "  --metrics F           one JSON record per log line and validation to F\n"
    "  --update-freq K       accumulate K batches' gradients into each "
    "update,\n"
    "                        as one K times larger batch (default 1)\n"
    "  --max-tokens N        fill at most N tokens a batch (rows x the bucket's\n"
    "                        longer length) within the compiled buckets; the\n"
    "                        rows left are padding: the step's cost stays that\n"
    "                        of its compiled shape (default: every row)\n"
    "  --clip-norm C         scale the gradient to global norm C when above "
    "it\n"
    "                        (default 0: off, as in the paper)\n"
    "  --weight-decay X      AdamW's decoupled weight decay, 0 to 1, on the\n"
    "                        parameters that decay (default: the model's;\n"
    "                        0: Adam)\n"
    "  --adam-betas B1,B2    Adam's betas, each 0 <= b < 1 (also written\n"
    "                        '(0.9, 0.98)'; default: the model's)\n"
    "  --adam-eps E          Adam's epsilon, 0 < E < 1 (default: the model's)\n"
    "  --label-smoothing E   the loss's label smoothing, 0 <= E < 1 (default:\n"
    "                        the model's)\n"
    "  --dropout P           the rate of every dropout but attention's,\n"
    "                        0 <= P < 1 (default: the model's; a model\n"
    "                        compiled without dropout has none to set)\n"
    "  --attention-dropout P the rate of dropout on attention's\n"
    "                        probabilities, 0 <= P < 1 (default: the model's)\n"
    "learning rate (default: the model's schedule, the paper's inverse_sqrt):\n"
    "  --lr-scheduler inverse_sqrt|cosine|linear|constant\n"
    "                        the shape after a linear warmup: ~ step^-0.5, half\n"
    "                        a cosine or a line down to --min-lr at --steps, or\n"
    "                        flat\n"
    "  --lr X                the peak rate, reached at the end of the warmup\n"
    "                        (default: the model's peak, or the paper's,\n"
    "                        factor / sqrt(d_model * warmup))\n"
    "  --lr-factor F         the paper's schedule's factor (default: the\n"
    "                        model's; instead of --lr; not for a schedule\n"
    "                        with a peak of its own)\n"
    "  --warmup N            warmup steps (default: the model's)\n"
    "  --min-lr X            cosine and linear: the rate at --steps\n"
    "                        (default: the model's, 0 for the paper's)\n"
    "  --profile             time each op of the step; print the time per op\n"
    "                        kind (with its bytes and its products' operations\n"
    "                        a second) and the costliest ones after training\n"
    "                        (a GPU program: by its kernels; and the costliest\n"
    "                        kernels)\n"
    "  --cuda-graphs[=false] a GPU program captures its step as one CUDA graph\n"
    "                        and replays it (one launch a step): the default\n"
    "                        of one process, but for --profile alone; =false\n"
    "                        runs the ops one by one\n"
    "  --fused-attention     a GPU program's bf16 attention runs as one kernel\n"
    "                        forward and two backward (no scores in memory)\n"
    "  --shard-optimizer     under mpirun (CPU): each of the N processes "
    "keeps\n"
    "                        Adam's moments (and --update-freq's gradient\n"
    "                        accumulator) of 1/N of the parameters\n"
    "validation (on the whole --valid-data / --valid-source set):\n"
    "  --valid-every K       every K steps: validation loss, perplexity and\n"
    "                        BLEU; the best checkpoint is kept as\n"
    "                        <checkpoint>.best (default 0: off)\n"
    "  --valid-sentences N   validate on the first N pairs only (default: "
    "all;\n"
    "                        a task's held-out set has 256)\n"
    "  --valid-beam K        BLEU of beam search with K hypotheses (default:\n"
    "                        greedy)\n"
    "  --best-by bleu|loss   what makes a validation the best (default bleu)\n"
    "  --patience N          stop after N validations without a better one\n"
    "                        (-1: never, the default)\n"
    "checkpoints:\n"
    "  --checkpoint F        where to save (default <program>.ckpt, or the\n"
    "                        --resume file: X for X, X.best and X.step<S>);\n"
    "                        saved at the end and on Ctrl-C\n"
    "  --save-every N        also save every N steps\n"
    "  --keep-last N         keep the last N saves as <checkpoint>.step<S> "
    "too\n"
    "                        (for tgc-data average --last N; -1: all)\n"
    "  --resume F            continue from checkpoint F (refused when F's "
    "config\n"
    "                        differs from this program's)\n"
    "  --force-resume        resume it anyway\n"
    "  --overwrite           start over and replace existing checkpoints (a\n"
    "                        run without it refuses to replace any but the\n"
    "                        --resume file it continues)\n"
    "evaluation:\n"
    "  --eval-sentences N    held-out sentences to translate (default 256, 0 "
    "off)\n"
    "  --samples N           translations to print (default 3)\n"
    "  --dump-params F       every variable as raw f32 to F at the end\n"
    "  --version             what made this program (tgc, model, config, "
    "code,\n"
    "                        compiler), as its checkpoints record it\n"
    "translation (needs --resume and --vocab):\n"
    "  --translate F         translate F's lines (- for stdin), write text\n"
    "  --output F            where to write them (default stdout)\n"
    "  --beam K              beam size (default 4; 1 is greedy)\n"
    "  --alpha A             length penalty ((5+|Y|)/6)^A (default 0.6)\n"
    "  --search beam|greedy  the search (default beam)\n"
    "  --nbest N             the N best hypotheses of each line (N <= --beam),\n"
    "                        one a line: LINE<tab>RANK<tab>LOG-PROBABILITY<tab>\n"
    "                        SCORE<tab>TEXT, LINE and RANK from 0, SCORE the\n"
    "                        log-probability over the length penalty\n"
    "  --batch-size N        at most N sentences a decoder call (default: as\n"
    "                        many as the compiled batch holds)\n"
    "generation (a language model; needs --resume and --vocab):\n"
    "  --generate F          continue F's lines (- for stdin) as prompts; writes\n"
    "                        each prompt with its continuation, one a line\n"
    "                        (--output, default stdout)\n"
    "  --max-new-tokens N    at most N tokens a prompt (default 64; also the\n"
    "                        end of the context, or EOS)\n"
    "  --temperature T       sample from softmax(logits / T) (default 1; 0:\n"
    "                        greedy)\n"
    "  --top-k K             among the K most likely tokens (default 0: all)\n"
    "  --top-p P             among the fewest most likely tokens holding P of\n"
    "                        the probability (default 1: all)\n"
    "                        --seed S: the same seed gives the same text\n"
    "scoring (needs --resume):\n"
    "  --score F.tok         loss and perplexity per token of a corpus under\n"
    "                        the checkpoint's parameters (a language model:\n"
    "                        every window of its stream, as validation; a\n"
    "                        translation model: every pair that fits a bucket),\n"
    "                        nothing trained\n"
    "decoding (translation, validation, evaluation):\n"
    "  --decoder incremental|full\n"
    "                        incremental: the compiled decoder step with "
    "cached\n"
    "                        keys and values (default, where compiled); full:\n"
    "                        recompute the whole prefix per token\n"
    "fairseq's and Marian's names for the same flags are accepted too:\n"
    "  --max-update, --after-batches (--steps); --max-epoch, --after-epochs\n"
    "  (--max-epochs); --log-interval, --disp-freq (--log-every);\n"
    "  --save-interval-updates, --save-freq (--save-every);\n"
    "  --keep-interval-updates (--keep-last); --validate-interval-updates,\n"
    "  --valid-freq (--valid-every); --early-stopping (--patience);\n"
    "  --optimizer-delay (--update-freq); --mini-batch-words (--max-tokens);\n"
    "  --beam-size (--beam); --warmup-updates, --lr-warmup (--warmup);\n"
    "  --learn-rate (--lr). Their special values mean the same here:\n"
    "  --max-epochs 0 (no limit), --patience -1 (none), --keep-last -1 (all).\n"
    "  --steps is 1000 unless given, with --max-epochs too (fairseq's\n"
    "  --max-update has no limit by default).\n";

/// Other trainers' names for flags that mean the same here (a length
/// penalty or a checkpoint directory means something else, so those have
/// none).
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"--max-update", "--steps"},
    {"--after-batches", "--steps"},
    {"--max-epoch", "--max-epochs"},
    {"--after-epochs", "--max-epochs"},
    {"--log-interval", "--log-every"},
    {"--disp-freq", "--log-every"},
    {"--save-interval-updates", "--save-every"},
    {"--save-freq", "--save-every"},
    {"--keep-interval-updates", "--keep-last"},
    {"--validate-interval-updates", "--valid-every"},
    {"--valid-freq", "--valid-every"},
    {"--early-stopping", "--patience"},
    {"--optimizer-delay", "--update-freq"},
    {"--mini-batch-words", "--max-tokens"},
    {"--beam-size", "--beam"},
    {"--warmup-updates", "--warmup"},
    {"--lr-warmup", "--warmup"},
    {"--learn-rate", "--lr"},
};

/// `flag`, or the flag it is another trainer's name for.
std::string_view canonicalFlag(std::string_view flag) {
  for (auto [alias, canonical] : kAliases)
    if (flag == alias)
      return canonical;
  return flag;
}

/// An integer in [minimum, maximum]; `maximum` only where the value sizes
/// an allocation or an amount of work (Options.h's kMax*).
template <typename T>
bool parseNumber(std::string_view flag, std::string_view text, T &out,
                 T minimum, T maximum = std::numeric_limits<T>::max()) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error != std::errc() || end != text.data() + text.size() ||
      out < minimum || out > maximum) {
    // A type's own bound is said where a number could pass it (a seed of
    // 2^32 was told "needs an integer >= 0").
    std::string range = maximum == std::numeric_limits<T>::max() &&
                                sizeof(T) >= sizeof(int64_t)
                            ? ">= " + std::to_string(minimum)
                            : "from " + std::to_string(minimum) + " to " +
                                  std::to_string(maximum);
    std::fprintf(stderr, "error: %.*s needs an integer %s, not '%.*s'\n",
                 static_cast<int>(flag.size()), flag.data(), range.c_str(),
                 static_cast<int>(text.size()), text.data());
    return false;
  }
  return true;
}

/// A finite number >= 0.
bool parseNonNegative(std::string_view flag, std::string_view text,
                      double &out) {
  std::string copy(text);
  char *end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  if (copy.empty() || *end != '\0' || !(out >= 0) || !std::isfinite(out)) {
    std::fprintf(stderr, "error: %.*s needs a number >= 0, not '%s'\n",
                 static_cast<int>(flag.size()), flag.data(), copy.c_str());
    return false;
  }
  return true;
}

/// `text` as a number when it is 1 to 9 decimal digits (no sign, no
/// overflow).
bool parseDigits(std::string_view text, int64_t &out) {
  if (text.empty() || text.size() > 9)
    return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

/// --max-time: H:MM, H:MM:SS or plain minutes, as seconds (1s to
/// kMaxTimeHours).
bool parseDuration(std::string_view flag, std::string_view text,
                   int64_t &seconds) {
  int64_t hours = 0, minutes = 0, secs = 0;
  bool ok;
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    ok = parseDigits(text, minutes);
  } else {
    std::string_view mm = text.substr(colon + 1), ss;
    size_t second = mm.find(':');
    if (second != std::string_view::npos) {
      ss = mm.substr(second + 1);
      mm = mm.substr(0, second);
    }
    auto belowSixty = [](std::string_view field, int64_t &value) {
      return field.size() == 2 && parseDigits(field, value) && value < 60;
    };
    ok = parseDigits(text.substr(0, colon), hours) && belowSixty(mm, minutes) &&
         (second == std::string_view::npos || belowSixty(ss, secs));
  }
  seconds = hours * 3600 + minutes * 60 + secs;
  if (ok && seconds > 0 && seconds <= kMaxTimeHours * 3600)
    return true;
  std::fprintf(stderr,
               "error: %.*s needs H:MM, H:MM:SS or minutes, above 0 and at "
               "most %lld:00, not '%.*s'\n",
               static_cast<int>(flag.size()), flag.data(),
               static_cast<long long>(kMaxTimeHours),
               static_cast<int>(text.size()), text.data());
  return false;
}

/// Applies one known flag; false (with a message) when `value` is bad.
bool applyFlag(std::string_view flag, std::string_view value,
                              TrainOptions &o) {
  // Every text flag but --resume names a file (or standard input/output):
  // an empty one (a script's unset "$F") would read as not given, and
  // `--score ""` trained the model it was to score, replacing its
  // checkpoint.
  auto text = [&](std::string &out) {
    if (value.empty()) {
      std::fprintf(stderr, "error: %.*s needs a file name, not an empty "
                           "string\n",
                   static_cast<int>(flag.size()), flag.data());
      return false;
    }
    out = value;
    return true;
  };
  // After parseNumber's error, for a flag that also takes -1.
  auto minusOneMeans = [&](const char *meaning) {
    std::fprintf(stderr, "note: %.*s -1 means %s\n",
                 static_cast<int>(flag.size()), flag.data(), meaning);
    return false;
  };
  if (flag == "--task") {
    o.task = parseTask(value);
    if (!o.task)
      std::fprintf(stderr, "error: unknown task '%.*s' (known: %s)\n",
                   static_cast<int>(value.size()), value.data(), taskNames());
    return o.task.has_value();
  }
  if (flag == "--seed") {
    uint32_t seed = 0;
    bool ok = parseNumber(flag, value, seed, uint32_t{0});
    o.seed = seed;
    return ok;
  }
  if (flag == "--steps")
    return parseNumber(flag, value, o.steps, int64_t{1}, kMaxSteps);
  // 0: no limit, as in fairseq and Marian (and the default).
  if (flag == "--max-epochs")
    return parseNumber(flag, value, o.maxEpochs, int64_t{0}, kMaxEpochs);
  if (flag == "--max-time")
    return parseDuration(flag, value, o.maxSeconds);
  if (flag == "--log-every")
    return parseNumber(flag, value, o.logEvery, int64_t{1});
  if (flag == "--save-every")
    return parseNumber(flag, value, o.saveEvery, int64_t{0});
  if (flag == "--keep-last") {
    // -1: every save, fairseq's --keep-interval-updates default.
    if (value == "-1") {
      o.keepLast = std::numeric_limits<int64_t>::max();
      return true;
    }
    return parseNumber(flag, value, o.keepLast, int64_t{1}) ||
           minusOneMeans("every save");
  }
  if (flag == "--eval-sentences")
    return parseNumber(flag, value, o.evalSentences, int64_t{0},
                       kMaxSentences);
  if (flag == "--samples")
    return parseNumber(flag, value, o.samples, int64_t{0}, kMaxSentences);
  if (flag == "--alpha") {
    if (!parseNonNegative(flag, value, o.alpha))
      return false;
    if (o.alpha > kMaxAlpha) {
      std::fprintf(stderr, "error: --alpha needs a number from 0 to %g, not "
                           "'%.*s'\n",
                   kMaxAlpha, static_cast<int>(value.size()), value.data());
      return false;
    }
    return true;
  }
  if (flag == "--clip-norm") {
    double clip = 0;
    bool ok = parseNonNegative(flag, value, clip);
    o.clipNorm = static_cast<float>(clip);
    return ok;
  }
  if (flag == "--update-freq")
    return parseNumber(flag, value, o.updateFreq, int64_t{1}, kMaxUpdateFreq);
  if (flag == "--max-tokens")
    return parseNumber(flag, value, o.maxTokens, int64_t{1});
  if (flag == "--beam") {
    o.beamGiven = true;
    return parseNumber(flag, value, o.beam, int64_t{1}, kMaxBeam);
  }
  if (flag == "--lr-scheduler") {
    for (LrScheduler kind : {LrScheduler::InverseSqrt, LrScheduler::Cosine,
                             LrScheduler::Linear, LrScheduler::Constant})
      if (value == lrSchedulerName(kind)) {
        o.lrScheduler = kind;
        return true;
      }
    std::fprintf(stderr, "error: --lr-scheduler needs inverse_sqrt, cosine, "
                         "linear or constant, not '%.*s'\n",
                 static_cast<int>(value.size()), value.data());
    return false;
  }
  // Rates: positive (the minimum may be 0) and at most 10, beyond which a
  // typo is likelier than a schedule.
  auto rate = [&](std::optional<double> &out, bool zeroOk) {
    double x = 0;
    if (!parseNonNegative(flag, value, x))
      return false;
    if ((!zeroOk && x == 0) || x > 10) {
      std::fprintf(stderr, "error: %.*s needs a rate %s 10, not '%.*s'\n",
                   static_cast<int>(flag.size()), flag.data(),
                   zeroOk ? "from 0 to" : "above 0 and at most",
                   static_cast<int>(value.size()), value.data());
      return false;
    }
    out = x;
    return true;
  };
  if (flag == "--weight-decay") {
    double x = 0;
    if (!parseNonNegative(flag, value, x))
      return false;
    if (x > 1) {
      std::fprintf(stderr, "error: --weight-decay needs a number from 0 to "
                           "1, not '%.*s'\n",
                   static_cast<int>(value.size()), value.data());
      return false;
    }
    o.weightDecay = x;
    return true;
  }
  // Probabilities: 0 <= x < 1 (Adam's epsilon: above 0).
  auto fraction = [&](std::string_view text, std::optional<double> &out,
                      bool zeroOk) {
    std::string copy(text);
    char *end = nullptr;
    double x = std::strtod(copy.c_str(), &end);
    if (copy.empty() || *end != '\0' || !(x >= 0 && x < 1) ||
        (!zeroOk && x == 0)) {
      std::fprintf(stderr, "error: %.*s needs a number %s 1, not '%.*s'\n",
                   static_cast<int>(flag.size()), flag.data(),
                   zeroOk ? "from 0 to below" : "above 0 and below",
                   static_cast<int>(text.size()), text.data());
      return false;
    }
    out = x;
    return true;
  };
  if (flag == "--dropout")
    return fraction(value, o.dropout, true);
  if (flag == "--attention-dropout")
    return fraction(value, o.attentionDropout, true);
  if (flag == "--label-smoothing")
    return fraction(value, o.labelSmoothing, true);
  if (flag == "--adam-eps")
    return fraction(value, o.adamEps, false);
  if (flag == "--adam-betas") {
    // "0.9,0.98", fairseq's "(0.9, 0.98)" or "0.9 0.98".
    std::string text(value);
    for (char &c : text)
      if (c == '(' || c == ')' || c == '[' || c == ']')
        c = ' ';
    auto trim = [](std::string_view s) {
      while (!s.empty() && s.front() == ' ')
        s.remove_prefix(1);
      while (!s.empty() && s.back() == ' ')
        s.remove_suffix(1);
      return s;
    };
    std::string_view all = trim(text);
    size_t split = all.find_first_of(", ");
    if (split == std::string_view::npos) {
      std::fprintf(stderr, "error: --adam-betas needs two numbers B1,B2 "
                           "(each from 0 to below 1), not '%.*s'\n",
                   static_cast<int>(value.size()), value.data());
      return false;
    }
    std::string_view first = trim(all.substr(0, split));
    std::string_view second = all.substr(split + 1);
    if (!second.empty() && second.front() == ',')
      second.remove_prefix(1);
    second = trim(second);
    if (!second.empty() && second.front() == ',')
      second = trim(second.substr(1));
    return fraction(first, o.adamBeta1, true) &&
           fraction(second, o.adamBeta2, true);
  }
  if (flag == "--lr")
    return rate(o.lr, false);
  if (flag == "--min-lr")
    return rate(o.minLr, true);
  if (flag == "--lr-factor") {
    double x = 0;
    if (!parseNonNegative(flag, value, x))
      return false;
    if (x == 0 || x > 1000) {
      std::fprintf(stderr, "error: --lr-factor needs a number above 0 and "
                           "at most 1000, not '%.*s'\n",
                   static_cast<int>(value.size()), value.data());
      return false;
    }
    o.lrFactor = x;
    return true;
  }
  if (flag == "--warmup") {
    int64_t steps = 0;
    if (!parseNumber(flag, value, steps, int64_t{0}))
      return false;
    o.warmup = steps;
    return true;
  }
  if (flag == "--nbest")
    return parseNumber(flag, value, o.nbest, int64_t{1}, kMaxBeam);
  if (flag == "--batch-size")
    return parseNumber(flag, value, o.translateBatch, int64_t{1},
                       kMaxSentences);
  auto choice = [&](const char *a, const char *b, bool &isB) {
    if (value != a && value != b) {
      std::fprintf(stderr, "error: %.*s needs %s or %s, not '%.*s'\n",
                   static_cast<int>(flag.size()), flag.data(), a, b,
                   static_cast<int>(value.size()), value.data());
      return false;
    }
    isB = value == b;
    return true;
  };
  if (flag == "--search")
    return choice("beam", "greedy", o.greedy);
  if (flag == "--decoder")
    return choice("incremental", "full", o.fullDecoding);
  if (flag == "--valid-every")
    return parseNumber(flag, value, o.validEvery, int64_t{0});
  auto optionalNumber = [&](std::optional<int64_t> &out, int64_t minimum,
                            int64_t maximum) {
    int64_t number;
    if (!parseNumber(flag, value, number, minimum, maximum))
      return false;
    out = number;
    return true;
  };
  if (flag == "--valid-sentences")
    return optionalNumber(o.validSentences, 1, kMaxSentences);
  if (flag == "--valid-beam")
    return optionalNumber(o.validBeam, 1, kMaxBeam);
  if (flag == "--patience") {
    // -1: no early stopping, fairseq's default (and tgc's, unset).
    if (value == "-1") {
      o.patience.reset();
      return true;
    }
    return optionalNumber(o.patience, 1, std::numeric_limits<int64_t>::max()) ||
           minusOneMeans("no early stopping");
  }
  if (flag == "--best-by") {
    bool byLoss = false;
    if (!choice("bleu", "loss", byLoss))
      return false;
    o.bestBy = byLoss ? TrainOptions::BestBy::Loss : TrainOptions::BestBy::Bleu;
    return true;
  }
  if (flag == "--metrics")
    return text(o.metrics);
  if (flag == "--train-data")
    return text(o.trainData);
  if (flag == "--valid-data")
    return text(o.validData);
  if (flag == "--vocab")
    return text(o.vocabulary);
  if (flag == "--translate")
    return text(o.translate);
  if (flag == "--generate")
    return text(o.generate);
  if (flag == "--score")
    return text(o.score);
  if (flag == "--max-new-tokens")
    return parseNumber(flag, value, o.maxNewTokens, int64_t{1}, kMaxNewTokens);
  if (flag == "--temperature") {
    o.samplingFlags = true;
    return parseNonNegative(flag, value, o.temperature);
  }
  if (flag == "--top-k") {
    o.samplingFlags = true;
    return parseNumber(flag, value, o.topK, int64_t{0});
  }
  if (flag == "--top-p") {
    o.samplingFlags = true;
    std::string copy(value);
    char *end = nullptr;
    o.topP = std::strtod(copy.c_str(), &end);
    if (!copy.empty() && *end == '\0' && o.topP > 0 && o.topP <= 1)
      return true;
    std::fprintf(stderr, "error: --top-p needs a number above 0 and at most 1, "
                         "not '%.*s'\n",
                 static_cast<int>(value.size()), value.data());
    return false;
  }
  if (flag == "--output")
    return text(o.output);
  if (flag == "--train-source")
    return text(o.trainSource);
  if (flag == "--train-target")
    return text(o.trainTarget);
  if (flag == "--valid-source")
    return text(o.validSource);
  if (flag == "--valid-target")
    return text(o.validTarget);
  if (flag == "--checkpoint")
    return text(o.checkpoint);
  if (flag == "--resume") { // "" is a new run (docs/limits.md), as without it
    o.resume = value;
    return true;
  }
  if (flag == "--dump-params")
    return text(o.dumpParameters);
  return text(o.lossLog); // --loss-log: kFlags has no other flag left
}

/// The flags that only make sense together, and a task with files.
bool checkCombinations(const TrainOptions &o) {
  auto problem = [](const std::string &message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return false;
  };
  if (o.trainSource.empty() != o.trainTarget.empty())
    return problem("--train-source and --train-target go together");
  if (o.validSource.empty() != o.validTarget.empty())
    return problem("--valid-source and --valid-target go together");
  if (!o.validSource.empty() && o.trainSource.empty())
    return problem("--valid-source needs --train-source (a task has its own "
                   "held-out set)");
  if (o.task && !o.trainSource.empty())
    return problem("--task and --train-source exclude each other");
  if (!o.trainData.empty() && (o.task || !o.trainSource.empty()))
    return problem("--train-data excludes --task and --train-source");
  if (!o.validData.empty() && o.trainData.empty())
    return problem("--valid-data needs --train-data");
  if (!o.translate.empty() && (o.resume.empty() || o.vocabulary.empty()))
    return problem("--translate needs --resume (the trained model) and "
                   "--vocab (its SentencePiece model)");
  if (o.forceResume && o.resume.empty())
    return problem("--force-resume goes with --resume");
  if (!o.generate.empty() && (o.resume.empty() || o.vocabulary.empty()))
    return problem("--generate needs --resume (the trained model) and --vocab "
                   "(its SentencePiece model)");
  if (!o.generate.empty() && !o.translate.empty())
    return problem("--generate and --translate exclude each other");
  if (o.score == "-")
    return problem("--score reads a .tok corpus file (mapped into memory), "
                   "not standard input");
  if (!o.score.empty() && o.resume.empty())
    return problem("--score needs --resume (the trained model whose loss it "
                   "measures)");
  if (!o.score.empty() && (!o.translate.empty() || !o.generate.empty()))
    return problem("--score excludes --translate and --generate");
  if (o.samplingFlags && o.generate.empty())
    return problem("--temperature, --top-k and --top-p go with --generate");
  if (!o.output.empty() && o.translate.empty() && o.generate.empty())
    return problem("--output goes with --translate or --generate");
  // Dropout's key counts the batches drawn (steps x --update-freq) in 32
  // bits: past 2^32 the masks of later batches repeat earlier ones.
  if (o.steps > 0 && o.updateFreq > 0 &&
      static_cast<uint64_t>(o.steps) * static_cast<uint64_t>(o.updateFreq) >
          kMaxBatchesDrawn)
    return problem("--steps " + std::to_string(o.steps) +
                   " with --update-freq " + std::to_string(o.updateFreq) +
                   " draws more than 2^32 - 1 batches (dropout's counter): give "
                   "fewer steps");
  if (o.lr && o.lrFactor)
    return problem("--lr and --lr-factor exclude each other (--lr is the "
                   "peak; --lr-factor scales the paper's schedule)");
  // The schedule's other rules depend on the model's schedule
  // (scheduleProblem, main/RunTraining.cpp).
  if ((o.nbest || o.translateBatch) && o.translate.empty())
    return problem("--nbest and --batch-size go with --translate");
  if (o.greedy && o.beamGiven)
    return problem("--search greedy keeps one hypothesis: --beam goes with "
                   "--search beam");
  if (o.nbest > (o.greedy ? 1 : o.beam))
    return problem("--nbest cannot exceed --beam (the hypotheses the search "
                   "keeps; greedy search keeps 1)");
  if (o.validEvery == 0 && (o.validSentences || o.validBeam || o.bestBy ||
                           o.patience))
    return problem("--valid-sentences, --valid-beam, --best-by and "
                   "--patience shape validation: give --valid-every K");
  if (o.maxTokens > 0 && o.trainData.empty() && o.trainSource.empty())
    return problem("--max-tokens needs --train-data or --train-source (a "
                   "task fills every row of the compiled batch)");
  if (o.maxEpochs > 0 && o.trainData.empty() && o.trainSource.empty())
    return problem("--max-epochs needs --train-data or --train-source (a "
                   "task's batches have no epochs)");
  if (!o.checkpoint.empty() && o.checkpoint.back() == '/')
    return problem("--checkpoint needs a file name, not a directory");
  return true;
}

/// Translating, generating and scoring run the model of --resume and train
/// nothing: a training flag given with them did nothing, without a word
/// (--steps, --checkpoint, --metrics, --lr...). Each mode takes its own.
bool checkModeFlags(const TrainOptions &o,
                    const std::vector<std::string_view> &given) {
  struct Mode {
    std::string_view flag;
    std::vector<std::string_view> takes;
  };
  const Mode modes[] = {
      {"--translate",
       {"--translate", "--resume", "--vocab", "--output", "--beam", "--alpha",
        "--search", "--nbest", "--batch-size", "--decoder"}},
      {"--generate",
       {"--generate", "--resume", "--vocab", "--output", "--max-new-tokens",
        "--temperature", "--top-k", "--top-p", "--seed", "--decoder"}},
      // The corpus records its vocabulary: --vocab would check nothing.
      {"--score", {"--score", "--resume"}}};
  const Mode *mode = !o.translate.empty() ? &modes[0]
                     : !o.generate.empty() ? &modes[1]
                     : !o.score.empty()    ? &modes[2]
                                           : nullptr;
  auto refuse = [](std::string_view flag, std::string_view why) {
    std::fprintf(stderr, "error: %.*s %.*s\n", static_cast<int>(flag.size()),
                 flag.data(), static_cast<int>(why.size()), why.data());
    return false;
  };
  if (!mode) {
    for (std::string_view flag : given)
      if (flag == "--max-new-tokens")
        return refuse(flag, "goes with --generate");
    return true;
  }
  std::string why = "does not go with " + std::string(mode->flag) +
                    ", which runs the model of --resume and trains nothing "
                    "(nothing was run)";
  for (std::string_view flag : given)
    if (std::find(mode->takes.begin(), mode->takes.end(), flag) ==
            mode->takes.end() &&
        flag != "--translate" && flag != "--generate" && flag != "--score")
      return refuse(flag, why);
  if (o.profile)
    return refuse("--profile", why);
  if (o.shardOptimizer)
    return refuse("--shard-optimizer", why);
  if (o.overwrite)
    return refuse("--overwrite", why);
  return true;
}

} // namespace

bool parseTrainOptions(int argc, char **argv, TrainOptions &options,
                       int &exitCode) {
  static constexpr std::string_view kFlags[] = {
      "--task",           "--train-source",    "--train-target",
      "--valid-source",   "--valid-target",    "--steps",
      "--seed",           "--log-every",       "--loss-log",
      "--checkpoint",     "--save-every",      "--resume",
      "--eval-sentences", "--samples",         "--dump-params",
      "--train-data",     "--valid-data",      "--vocab",
      "--valid-every",    "--translate",       "--output",
      "--beam",           "--alpha",           "--search",
      "--decoder",        "--valid-sentences", "--valid-beam",
      "--best-by",        "--patience",        "--metrics",
      "--keep-last",      "--update-freq",     "--clip-norm",
      "--max-epochs",     "--max-time",        "--nbest",
      "--batch-size",     "--lr-scheduler",    "--lr",
      "--lr-factor",      "--warmup",          "--min-lr",
      "--weight-decay",   "--max-tokens",      "--generate",
      "--score",
      "--max-new-tokens", "--temperature",     "--top-k",
      "--top-p",          "--dropout",         "--attention-dropout",
      "--label-smoothing", "--adam-betas",     "--adam-eps"};
  exitCode = 2;
  // Each flag of a value once: a second one would replace the first without
  // a word (a typo, or a script that appends flags).
  std::vector<std::string_view> given;
  std::vector<std::string_view> spellings; // as given, beside `given`
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::printf(kUsage, argv[0]);
      exitCode = 0;
      return false;
    }
    if (arg == "--version") {
      options.printVersion = true;
      continue;
    }
    if (arg == "--force-resume") {
      options.forceResume = true;
      continue;
    }
    if (arg == "--overwrite") {
      options.overwrite = true;
      continue;
    }
    if (arg == "--profile") {
      options.profile = true;
      continue;
    }
    if (arg == "--cuda-graphs" || arg == "--cuda-graphs=true") {
      options.cudaGraphs = true;
      continue;
    }
    if (arg == "--cuda-graphs=false") {
      options.cudaGraphs = false;
      continue;
    }
    if (arg.substr(0, 14) == "--cuda-graphs=") {
      std::fprintf(stderr, "error: --cuda-graphs is =true or =false, not '%.*s'\n",
                   static_cast<int>(arg.size() - 14), arg.data() + 14);
      return false;
    }
    if (arg == "--fused-attention") {
      options.fusedAttention = true;
      continue;
    }
    if (arg == "--shard-optimizer") {
      options.shardOptimizer = true;
      continue;
    }
    size_t eq = arg.find('=');
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    std::string_view spelled = arg;
    arg = canonicalFlag(arg);
    if (std::find(std::begin(kFlags), std::end(kFlags), arg) == std::end(kFlags)) {
      std::fprintf(stderr, "error: unknown flag '%.*s'\n",
                   static_cast<int>(arg.size()), arg.data());
      std::fprintf(stderr, kUsage, argv[0]);
      return false;
    }
    if (auto first = std::find(given.begin(), given.end(), arg);
        first != given.end()) {
      // Under two names, both are said (--steps and fairseq's --max-update).
      std::string_view before = spellings[first - given.begin()];
      std::string names =
          before == spelled ? std::string(spelled)
                            : std::string(arg) + " (as " + std::string(before) +
                                  " and " + std::string(spelled) + ")";
      std::fprintf(stderr,
                   "error: %s is given more than once: give it once (the "
                   "last one would replace the others without a word)\n",
                   names.c_str());
      return false;
    }
    given.push_back(arg);
    spellings.push_back(spelled);
    if (eq == std::string_view::npos) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", argv[i]);
        return false;
      }
      value = argv[++i];
    }
    if (!applyFlag(arg, value, options)) {
      if (spelled != arg)
        std::fprintf(stderr, "note: %.*s is %.*s here\n",
                     static_cast<int>(spelled.size()), spelled.data(),
                     static_cast<int>(arg.size()), arg.data());
      return false;
    }
  }
  return checkModeFlags(options, given) && checkCombinations(options);
}

} // namespace tgc::runtime
