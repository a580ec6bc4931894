//===- tgc-data.cpp - real translation data: BPE vocabularies, .tok files -===//
//
//   tgc-data vocab --size N -o PREFIX SRC_TEXT TGT_TEXT
//   tgc-data encode --vocab PREFIX.model --source S --target T
//                   [--max-length L] -o OUT.tok
//   tgc-data encode --vocab PREFIX.model --ids      (text from stdin)
//   tgc-data encode --vocab PREFIX.model --text F... -o OUT.tok
//                                                   (language-model text)
//   tgc-data decode --vocab PREFIX.model FILE.tok [--side source|target]
//   tgc-data decode --vocab PREFIX.model --ids      (ids from stdin)
//   tgc-data info FILE.tok
//   tgc-data sample [--split train|valid|test] --pairs N -o PREFIX
//   tgc-data bleu --ref REFERENCE TRANSLATIONS
//   tgc-data curves METRICS.jsonl... [--label NAME]... -o curves.svg
//   tgc-data average (--last N CHECKPOINT | A.ckpt B.ckpt ...) -o OUT
//
// Text is UTF-8, one sentence a line (a CRLF line ending counts as '\n').
// encode's rules, also in --help (kOverview):
//   refused, nothing written: a file that cannot be read, invalid UTF-8
//     (file:line:column and the byte), source and target of different line
//     counts (both files and counts);
//   skipped and counted: a pair with an empty or whitespace-only side (ASCII
//     space, tab, CR, VT, FF), a pair with a side of more than --max-length
//     tokens; the first 5 of each kind are warnings at file:line of the side
//     at fault, the summary line counts them all.
// Every error is "error: ..." on stderr naming the file (and line), exit 1.
//
//===----------------------------------------------------------------------===//
#include "common/CommandLineErrors.h"
#include "common/FileSizeLimit.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/TokenCorpus.h"
#include "runtime/data/TokenFiles.h"
#include "runtime/data/Vocabulary.h"
#include "tools/RepeatedFlags.h"
#include "tools/tgc-data/Commands.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <charconv>
#include <iostream>

namespace cl = llvm::cl;
using namespace tgc::runtime;
using namespace tgc::data;
using tgc::RunFile;

cl::OptionCategory tgc::data::dataCategory("tgc-data options");

namespace {

constexpr const char *kOverview =
    "tgc-data: real translation data for tgc\n\n"
    "  vocab   trains one SentencePiece BPE vocabulary over all the given text\n"
    "          (source and target: the paper's shared vocabulary; or a\n"
    "          language model's text); ids 0-2 are\n"
    "          pad, BOS, EOS, 3 unknown; byte fallback makes text -> ids ->\n"
    "          text lossless, so --size must be at least 260 + the distinct\n"
    "          characters of the text.\n"
    "  encode  writes a parallel text corpus (one sentence a line, paired by\n"
    "          line number) as a .tok file of token ids. Refused, nothing\n"
    "          written: an unreadable file, invalid UTF-8 (file:line:column),\n"
    "          files of different line counts. Skipped and counted: a pair\n"
    "          with an empty or whitespace-only side (ASCII whitespace), or\n"
    "          with a side longer than --max-length tokens (the first 5 of\n"
    "          each kind are warnings at file:line). With --ids: the ids of\n"
    "          each stdin line of text, one line each (for training binaries\n"
    "          and round-trip checks). With --text F...: monolingual text for\n"
    "          language models as a .tok of documents (blank lines separate\n"
    "          documents, each file ends one; a document's lines are encoded\n"
    "          one by one and joined); a program reads it as one token stream\n"
    "          with an end-of-document token after each document.\n"
    "  decode  writes the text of a .tok file's source or target side, one\n"
    "          line a pair (refusing a .tok encoded with another vocabulary),\n"
    "          or with --ids the text of each stdin line of ids (a decoded\n"
    "          line break or control byte other than tab, and U+0085,\n"
    "          U+2028 and U+2029, is written as a space: one line per\n"
    "          sentence).\n"
    "  info    pairs (or documents), tokens, vocabulary and lengths of a .tok\n"
    "          file.\n"
    "  sample  writes a generated parallel corpus to try tgc on: numbers as\n"
    "          digits (\"1,017\") and as words (\"one thousand seventeen\").\n"
    "  bleu    corpus BLEU of translations against references, as sacreBLEU\n"
    "          computes it by default (13a tokens, exp smoothing).\n"
    "  curves  draws training programs' --metrics files as one SVG:\n"
    "          training and validation loss (nats/token), validation BLEU\n"
    "          and the learning rate by update step, each panel with its\n"
    "          axis titles. The training loss includes label smoothing, the\n"
    "          validation loss is plain cross-entropy: a note says so (with\n"
    "          the \"run\" record's label_smoothing, none where 0). The\n"
    "          learning rate is the schedule's at every step (past 2000\n"
    "          steps, 2000 evenly spaced ones, the warmup's end and the\n"
    "          last) where a \"run\" record gives it, as a training program\n"
    "          writes first; else the log lines' samples. Several files are\n"
    "          overlaid on shared axes, a colour each, the legend naming\n"
    "          each run by its file name's stem or --label NAME (once per\n"
    "          file). A null value is a gap; blank lines and records of\n"
    "          other kinds are skipped; a step logged twice (a resumed run)\n"
    "          is drawn with its last record; a bad line is an error at\n"
    "          file:line, a file without records an error naming it.\n"
    "  average writes the element-wise mean of checkpoints of one model\n"
    "          (same model, config, tensor names and shapes): every tensor,\n"
    "          Adam's moments too; the step, seed and data are the newest\n"
    "          input's. Meant for translation (--translate --resume OUT).\n"
    "          --last N CHECKPOINT averages the N files CHECKPOINT.step<S>\n"
    "          of highest S that a run with --keep-last N keeps.\n"
    "\nText is UTF-8, one sentence a line; a CRLF line ending counts as one.\n"
    "Every error is \"error: ...\" on stderr naming the file, exit status 1.\n";


/// The overview --help prints: the whole tool's, or after a command
/// (`tgc-data bleu --help`) that command's paragraph of kOverview (its
/// first line starts "  <command>", the next ones are indented 10) and the
/// rules every command shares.
std::string overviewFor(int argc, char **argv) {
  llvm::StringRef all(kOverview);
  if (argc < 2)
    return all.str();
  // The shared rules: the last paragraph.
  llvm::StringRef command(argv[1]), rules = all.substr(all.rfind("\n\n") + 1);
  llvm::SmallVector<llvm::StringRef> lines;
  all.split(lines, '\n');
  std::string paragraph;
  for (llvm::StringRef line : lines) {
    bool first = line.starts_with("  ") && line.size() > 10 &&
                 line.substr(2, 8).rtrim() == command;
    if (first || (!paragraph.empty() && line.starts_with("          ")))
      paragraph += line.substr(10).str() + "\n";
    else if (!paragraph.empty())
      break;
  }
  if (paragraph.empty())
    return all.str();
  return "tgc-data " + command.str() + ": " + paragraph + rules.str();
}

cl::SubCommand vocabCommand("vocab", "Train a joint BPE vocabulary");
cl::SubCommand encodeCommand("encode", "Encode a parallel text corpus as .tok");
cl::SubCommand decodeCommand("decode", "Write the text of a .tok file or of ids");
cl::SubCommand infoCommand("info", "Describe a .tok file");

cl::opt<int> vocabSize("size",
                       cl::desc("Ids in the vocabulary (the 4 special ids and "
                                "256 byte pieces included)"),
                       cl::value_desc("N"), cl::Required, cl::sub(vocabCommand),
                       cl::cat(dataCategory));
cl::opt<std::string> vocabPrefix("o",
                                 cl::desc("Writes PREFIX.model and PREFIX.vocab"),
                                 cl::value_desc("PREFIX"), cl::Required,
                                 cl::sub(vocabCommand), cl::cat(dataCategory));
cl::list<std::string> vocabTexts(cl::Positional, cl::OneOrMore,
                                 cl::desc("<source text> <target text> ..."),
                                 cl::sub(vocabCommand), cl::cat(dataCategory));

cl::opt<std::string> encodeVocab("vocab", cl::desc("The vocabulary"),
                                 cl::value_desc("PREFIX.model"), cl::Required,
                                 cl::sub(encodeCommand), cl::cat(dataCategory));
cl::opt<std::string> encodeSource("source", cl::desc("Source sentences"),
                                  cl::value_desc("text file"),
                                  cl::sub(encodeCommand), cl::cat(dataCategory));
cl::opt<std::string> encodeTarget("target", cl::desc("Target sentences"),
                                  cl::value_desc("text file"),
                                  cl::sub(encodeCommand), cl::cat(dataCategory));
cl::opt<unsigned> maxLength("max-length",
                            cl::desc("Skip pairs with a side longer than this "
                                     "many tokens (default 256)"),
                            cl::value_desc("L"), cl::init(256),
                            cl::sub(encodeCommand), cl::cat(dataCategory));
cl::opt<std::string> encodeOutput("o", cl::desc("The .tok file to write"),
                                  cl::value_desc("OUT.tok"),
                                  cl::sub(encodeCommand), cl::cat(dataCategory));
cl::opt<bool> encodeText("text",
                         cl::desc("Encode the monolingual text files given "
                                  "after the options as documents for "
                                  "language models"),
                         cl::sub(encodeCommand), cl::cat(dataCategory));
cl::list<std::string> encodeTextFiles(cl::Positional,
                                      cl::desc("[<text file> ...] (--text)"),
                                      cl::sub(encodeCommand),
                                      cl::cat(dataCategory));
cl::opt<bool> encodeIds("ids",
                        cl::desc("Write the ids of each line of text read "
                                 "from stdin instead of a .tok file"),
                        cl::sub(encodeCommand), cl::cat(dataCategory));

cl::opt<std::string> decodeVocab("vocab", cl::desc("The vocabulary"),
                                 cl::value_desc("PREFIX.model"), cl::Required,
                                 cl::sub(decodeCommand), cl::cat(dataCategory));
cl::opt<std::string> decodeInput(cl::Positional, cl::desc("[<FILE.tok>]"),
                                 cl::sub(decodeCommand), cl::cat(dataCategory));
enum class Side { Source, Target };
cl::opt<Side> decodeSide("side", cl::desc("Which side of FILE.tok to write"),
                         cl::init(Side::Source),
                         cl::values(clEnumValN(Side::Source, "source", "sources (default)"),
                                    clEnumValN(Side::Target, "target", "targets")),
                         cl::sub(decodeCommand), cl::cat(dataCategory));
cl::opt<bool> decodeIds("ids",
                        cl::desc("Read lines of space-separated ids from stdin "
                                 "instead of a .tok file (0-2 decode to nothing)"),
                        cl::sub(decodeCommand), cl::cat(dataCategory));

cl::opt<std::string> infoInput(cl::Positional, cl::desc("<FILE.tok>"),
                               cl::Required, cl::sub(infoCommand),
                               cl::cat(dataCategory));

int runVocab() {
  std::vector<RunFile> files = {
      {"-o's model", vocabPrefix + ".model", true},
      {"-o's vocabulary", vocabPrefix + ".vocab", true}};
  for (const std::string &text : vocabTexts)
    files.push_back({"the text", text});
  if (!checkRunFiles(files))
    return 1;
  if (std::string error = trainVocabulary(vocabTexts, vocabSize, vocabPrefix);
      !error.empty())
    return fail(error);
  std::string error;
  std::unique_ptr<Vocabulary> vocabulary =
      Vocabulary::load(vocabPrefix + ".model", error);
  if (!vocabulary)
    return fail(error);
  llvm::outs() << vocabulary->path() << ": " << vocabulary->size()
               << " ids (BPE over " << vocabTexts.size()
               << (vocabTexts.size() == 1 ? " file" : " files") << "), hash "
               << hashText(vocabulary->hash()) << "\n";
  return 0;
}

bool isBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

/// The ids of each stdin line of text, or an error; all output waits for
/// the last line so that an error leaves none.
int encodeStdinText(const Vocabulary &vocabulary) {
  std::string input;
  if (std::string why = readFile("/dev/stdin", input); !why.empty())
    return fail(why);
  if (std::string bad = checkUtf8(input); !bad.empty())
    return fail("<stdin>:" + bad);
  std::string output;
  size_t number = 0;
  for (std::string_view line : splitLines(input)) {
    if (std::string why = encodedLineTooLong("<stdin>", ++number, line);
        !why.empty())
      return fail(why);
    const char *separator = "";
    for (int32_t id : vocabulary.encode(line)) {
      output += separator;
      output += std::to_string(id);
      separator = " ";
    }
    output += "\n";
  }
  llvm::outs() << output;
  return 0;
}

/// encode --text: the files after the options, as documents.
int runEncodeText() {
  if (encodeIds || !encodeSource.empty() || !encodeTarget.empty())
    return fail("encode --text reads text files of documents and writes -o: "
                "it excludes --ids, --source and --target");
  if (encodeTextFiles.empty() || encodeOutput.empty())
    return fail("encode --text needs the text files and -o OUT.tok");
  if (maxLength.getNumOccurrences())
    return fail("--max-length skips sentence pairs: a language model's "
                "documents are cut into windows when it trains");
  std::vector<RunFile> files = {{"--vocab", encodeVocab},
                                {"-o", encodeOutput, true}};
  for (const std::string &text : encodeTextFiles)
    files.push_back({"the text", text});
  if (!checkRunFiles(files))
    return 1;
  std::string error;
  std::unique_ptr<Vocabulary> vocabulary = Vocabulary::load(encodeVocab, error);
  if (!vocabulary)
    return fail(error);
  return encodeDocuments(*vocabulary, encodeTextFiles, encodeOutput);
}

int runEncode() {
  if (encodeText)
    return runEncodeText();
  if (!encodeTextFiles.empty())
    return fail("encode takes files after the options only with --text (" +
                encodeTextFiles.front() + ")");
  bool files = !encodeSource.empty() || !encodeTarget.empty() || !encodeOutput.empty();
  if (encodeIds == files)
    return fail("encode reads --source, --target and writes -o, or with --ids "
                "reads stdin: give one of them");
  if (!encodeIds && (encodeSource.empty() || encodeTarget.empty() ||
                     encodeOutput.empty()))
    return fail("encode needs --source, --target and -o");
  if (maxLength < 1)
    return fail("--max-length must be at least 1");
  if (!encodeIds && !checkRunFiles({{"--vocab", encodeVocab},
                                    {"--source", encodeSource},
                                    {"--target", encodeTarget},
                                    {"-o", encodeOutput, true}}))
    return 1;
  std::string error;
  std::unique_ptr<Vocabulary> vocabulary = Vocabulary::load(encodeVocab, error);
  if (!vocabulary)
    return fail(error);
  if (encodeIds)
    return encodeStdinText(*vocabulary);
  const std::string *paths[2] = {&encodeSource.getValue(), &encodeTarget.getValue()};
  std::string texts[2];
  std::vector<std::string_view> lines[2];
  for (int side = 0; side < 2; ++side) {
    if (error = readFile(*paths[side], texts[side]); !error.empty())
      return fail(error);
    if (error = checkUtf8(texts[side]); !error.empty())
      return fail(*paths[side] + ":" + error);
    lines[side] = splitLines(texts[side]);
  }
  if (lines[0].size() != lines[1].size())
    return fail("the parallel files have different line counts: " + *paths[0] +
                " has " + std::to_string(lines[0].size()) + ", " + *paths[1] +
                " has " + std::to_string(lines[1].size()));

  constexpr int kWarningsPerKind = 5;
  int64_t skippedEmpty = 0, skippedLong = 0;
  uint64_t tokens[2] = {0, 0};
  std::vector<SentencePair> pairs;
  for (size_t i = 0; i < lines[0].size(); ++i) {
    auto warn = [&](int side, int64_t count, const std::string &why) {
      if (count <= kWarningsPerKind)
        llvm::errs() << "warning: " << *paths[side] << ":" << i + 1
                     << ": skipped: " << why << "\n";
    };
    if (isBlank(lines[0][i]) || isBlank(lines[1][i])) {
      warn(isBlank(lines[0][i]) ? 0 : 1, ++skippedEmpty,
           "empty or whitespace-only sentence");
      continue;
    }
    if (lines[0][i].size() > kMaxEncodedLineBytes ||
        lines[1][i].size() > kMaxEncodedLineBytes) {
      int side = lines[0][i].size() > kMaxEncodedLineBytes ? 0 : 1;
      warn(side, ++skippedLong,
           std::to_string(lines[side][i].size()) +
               " bytes, more than a sentence to encode may have (4 MiB)");
      continue;
    }
    SentencePair pair{vocabulary->encode(lines[0][i]), vocabulary->encode(lines[1][i])};
    size_t lengths[2] = {pair.source.size(), pair.target.size()};
    if (lengths[0] == 0 || lengths[1] == 0) { // no piece: a corpus refuses it
      warn(lengths[0] == 0 ? 0 : 1, ++skippedEmpty, "no token after encoding");
      continue;
    }
    if (lengths[0] > maxLength || lengths[1] > maxLength) {
      int side = lengths[0] > maxLength ? 0 : 1;
      warn(side, ++skippedLong,
           std::to_string(lengths[side]) + " tokens, more than --max-length " +
               std::to_string(maxLength));
      continue;
    }
    tokens[0] += lengths[0];
    tokens[1] += lengths[1];
    pairs.push_back(std::move(pair));
  }
  // A corpus of no pair trains nothing; the program's message came much
  // later ("no pair fits the model's buckets").
  if (pairs.empty())
    return fail(
        "no sentence pair to encode: " + *paths[0] + " and " + *paths[1] +
        (lines[0].empty()
             ? " have no line"
             : " have every line skipped (" + std::to_string(skippedEmpty) +
                   " empty, " + std::to_string(skippedLong) + " too long)") +
        "; nothing written");
  if (error = writeTokenCorpus(encodeOutput, vocabulary->size(),
                               vocabulary->hash(), pairs);
      !error.empty())
    return fail(error);
  summaryStream(encodeOutput) << encodeOutput << ": " << pairs.size() << " pairs (skipped "
               << skippedEmpty << " empty, " << skippedLong << " longer than "
               << maxLength << " tokens), " << tokens[0] << " + " << tokens[1]
               << " tokens, vocabulary " << vocabulary->path() << " ("
               << vocabulary->size() << " ids, hash "
               << hashText(vocabulary->hash()) << ")\n";
  return 0;
}

/// The text of `ids` as one output line: whatever breaks a line inside it
/// (a model may emit byte pieces such as <0x0A> or <0x0D>, which no
/// training line contains) becomes a space, so that line N of the output is
/// still sentence N for any reader: the control bytes but tab, and U+0085,
/// U+2028 and U+2029, which Python's splitlines also splits at.
std::string decodeLine(const Vocabulary &vocabulary,
                       std::span<const int32_t> ids) {
  std::string text = vocabulary.decode(ids);
  std::string line;
  line.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size(); ++i) {
    auto byte = [&](size_t at) {
      return at < text.size() ? static_cast<unsigned char>(text[at]) : 0;
    };
    unsigned char c = byte(i);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      line += ' ';
    } else if (c == 0xc2 && byte(i + 1) == 0x85) {
      line += ' ';
      i += 1;
    } else if (c == 0xe2 && byte(i + 1) == 0x80 &&
               (byte(i + 2) == 0xa8 || byte(i + 2) == 0xa9)) {
      line += ' ';
      i += 2;
    } else {
      line += static_cast<char>(c);
    }
  }
  return line + "\n";
}

/// The text of each stdin line of ids, or an error at <stdin>:line; all
/// output waits for the last line so that an error leaves none, and so the
/// text it holds is bounded as a text file is.
int decodeStdinIds(const Vocabulary &vocabulary) {
  // As encode's: /dev/zero never ends (64 MiB were read before a refusal).
  if (std::string why = checkTextDescriptor(0, "<stdin>"); !why.empty())
    return fail(why);
  std::string text, line;
  LineReader in(0);
  for (int64_t number = 1;; ++number) {
    const std::string where = "<stdin>:" + std::to_string(number) + ": ";
    LineRead read = in.next(line);
    if (read == LineRead::End)
      break;
    if (read == LineRead::Failed)
      return fail(where + "cannot read: " + in.error());
    if (read == LineRead::TooLong)
      return fail(where + "the line is longer than " +
                  std::to_string(kMaxLineBytes >> 20) + " MiB");
    std::vector<int32_t> ids;
    for (std::string_view rest = line; !rest.empty();) {
      size_t start = rest.find_first_not_of(" \t\r");
      if (start == std::string_view::npos)
        break;
      rest.remove_prefix(start);
      std::string_view word = rest.substr(0, rest.find_first_of(" \t\r"));
      rest.remove_prefix(word.size());
      int64_t id = -1;
      auto [stop, bad] = std::from_chars(word.data(), word.data() + word.size(), id);
      if (bad != std::errc() || stop != word.data() + word.size())
        return fail(where + "'" + quoteInput(word) + "' is not a token id");
      if (id < 0 || id >= vocabulary.size())
        return fail(where + "id " + quoteInput(word) + " is outside [0, " +
                    std::to_string(vocabulary.size()) + ") of " +
                    vocabulary.path());
      ids.push_back(static_cast<int32_t>(id));
    }
    text += decodeLine(vocabulary, ids);
    if (text.size() > kMaxTextFileBytes)
      return fail(where + "more than " +
                  std::to_string(kMaxTextFileBytes >> 30) +
                  " GiB of text decoded, the most one run writes (split "
                  "the ids)");
  }
  llvm::outs() << text;
  return 0;
}

int runDecode() {
  if (decodeIds == !decodeInput.empty())
    return fail("decode reads either a .tok file or, with --ids, stdin: give "
                "one of them");
  std::string error;
  std::unique_ptr<Vocabulary> vocabulary = Vocabulary::load(decodeVocab, error);
  if (!vocabulary)
    return fail(error);
  if (decodeIds)
    return decodeStdinIds(*vocabulary);
  std::optional<TokenCorpus> corpus = TokenCorpus::open(decodeInput, error);
  if (!corpus)
    return fail(error);
  if (error = checkVocabulary(*corpus, vocabulary->hash(), vocabulary->size(),
                              vocabulary->path());
      !error.empty())
    return fail(error);
  bool documents = corpus->kind() == CorpusKind::Documents;
  if (documents && decodeSide.getNumOccurrences() && decodeSide == Side::Source)
    return fail(corpus->path() + " is a corpus of documents: it has no source "
                                 "side (its documents are written, one a line)");
  for (size_t i = 0; i < corpus->size(); ++i)
    llvm::outs() << decodeLine(*vocabulary,
                               decodeSide == Side::Source && !documents
                                   ? corpus->source(i)
                                   : corpus->target(i));
  return 0;
}

/// "mean 12.4, max 57; 50% <= 11, 90% <= 20, 99% <= 40 tokens"
std::string lengthSummary(const TokenCorpus &corpus, Side side) {
  std::vector<uint64_t> counts; // counts[n]: sentences of n tokens
  uint64_t total = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    size_t n = (side == Side::Source ? corpus.source(i) : corpus.target(i)).size();
    if (n >= counts.size())
      counts.resize(n + 1);
    ++counts[n];
    total += n;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  double mean = corpus.size() ? double(total) / double(corpus.size()) : 0.0;
  os << llvm::format("mean %.1f, max %zu", mean, counts.empty() ? 0 : counts.size() - 1);
  const char *separator = "; ";
  for (int percent : {50, 90, 99}) {
    // The smallest length that at least `percent`% of sentences do not exceed.
    uint64_t seen = 0, length = 0;
    while (length < counts.size() &&
           (seen += counts[length]) * 100 < percent * corpus.size())
      ++length;
    os << separator << percent << "% <= " << length;
    separator = ", ";
  }
  os << " tokens";
  return text;
}

int runInfo() {
  std::string error;
  std::optional<TokenCorpus> corpus = TokenCorpus::open(infoInput, error);
  if (!corpus)
    return fail(error);
  if (corpus->kind() == CorpusKind::Documents) {
    llvm::outs() << corpus->path() << ": " << corpus->size()
                 << " documents, " << corpus->targetTokens()
                 << " tokens (language-model text: a stream of "
                 << corpus->targetTokens() + corpus->size()
                 << " with an end-of-document token after each)\n"
                 << "vocabulary: " << corpus->vocabularySize() << " ids, hash "
                 << hashText(corpus->vocabularyHash()) << "\n"
                 << "document lengths: " << lengthSummary(*corpus, Side::Target)
                 << "\n";
    return 0;
  }
  llvm::outs() << corpus->path() << ": " << corpus->size() << " pairs, "
               << corpus->sourceTokens() << " + " << corpus->targetTokens()
               << " tokens\n"
               << "vocabulary: " << corpus->vocabularySize() << " ids, hash "
               << hashText(corpus->vocabularyHash()) << "\n"
               << "source lengths: " << lengthSummary(*corpus, Side::Source) << "\n"
               << "target lengths: " << lengthSummary(*corpus, Side::Target) << "\n";
  return 0;
}

} // namespace

int tgc::data::fail(const std::string &message) {
  llvm::errs() << "error: " << message << "\n";
  return 1;
}

std::string tgc::data::encodedLineTooLong(const std::string &where,
                                          size_t lineNumber,
                                          std::string_view line) {
  if (line.size() <= kMaxEncodedLineBytes)
    return {};
  return where + ":" + std::to_string(lineNumber) + ": the line has " +
         std::to_string(line.size()) +
         " bytes, more than the 4 MiB a line of text to encode may have "
         "(SentencePiece holds about 180 times a line's size as it encodes "
         "it): break it into lines";
}

llvm::raw_ostream &tgc::data::summaryStream(const std::string &output) {
  struct stat file, out;
  const bool same = ::stat(output.c_str(), &file) == 0 &&
                    ::fstat(STDOUT_FILENO, &out) == 0 &&
                    file.st_dev == out.st_dev && file.st_ino == out.st_ino;
  return same ? llvm::errs() : llvm::outs();
}

bool tgc::data::checkRunFiles(std::vector<RunFile> files) {
  files.push_back({"tgc-data", thisProgram()});
  if (std::string why = findClobberedFile(files); !why.empty()) {
    fail(why);
    return false;
  }
  return true;
}

int runCommand() {
  if (vocabCommand)
    return runVocab();
  if (encodeCommand)
    return runEncode();
  if (decodeCommand)
    return runDecode();
  if (infoCommand)
    return runInfo();
  if (sampleCommand)
    return runSample();
  if (bleuCommand)
    return runBleu();
  if (curvesCommand)
    return runCurves();
  if (averageCommand)
    return runAverage();
  return fail("give a command: vocab, encode, decode, info, sample, bleu, "
              "curves or average (--help says more)");
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // After InitLLVM, whose crash handlers would take SIGXFSZ.
  tgc::reportFileSizeLimitAsAnError();
  for (cl::SubCommand *sub : {&cl::SubCommand::getTopLevel(), &vocabCommand,
                              &encodeCommand, &decodeCommand, &infoCommand,
                              &sampleCommand, &bleuCommand, &curvesCommand,
                              &averageCommand})
    cl::HideUnrelatedOptions(dataCategory, *sub);
  if (!tgc::parseCommandLine(argc, argv, overviewFor(argc, argv), "",
                             "tgc-data --help (and tgc-data COMMAND --help)"))
    return 1;
  if (std::string flag = tgc::repeatedFlag(argc, argv, {"label"});
      !flag.empty())
    return fail(flag + " is given more than once: give it once (the last "
                       "one would replace the others without a word)");
  int status = runCommand();
  // A failed write to standard output (a full disk, a closed pipe) is an
  // error naming it, not LLVM's fatal report when the stream is destroyed.
  llvm::outs().flush();
  if (std::error_code error = llvm::outs().error()) {
    llvm::outs().clear_error();
    return fail("cannot write to standard output: " + error.message());
  }
  return status;
}
