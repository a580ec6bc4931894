//===- EncodeText.cpp - monolingual text as a .tok of documents ----------===//
//
// `tgc-data encode --vocab V.model --text F... -o lm.tok`: the text a
// language model trains on. A document is a run of non-blank lines; blank
// (whitespace-only) lines separate documents, and every file ends one. Each
// line is encoded on its own and a document's ids follow one another (the
// vocabulary's word-start marker keeps the line break as a space). The
// training program reads the documents as one token stream with an
// end-of-document token after each (runtime/program/train/LmWindows.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/data/TokenCorpus.h"
#include "runtime/data/Vocabulary.h"
#include "tools/tgc-data/Commands.h"

#include "llvm/Support/raw_ostream.h"

namespace tgc::data {
namespace {

bool isBlankLine(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

} // namespace

int encodeDocuments(const runtime::Vocabulary &vocabulary,
                    const std::vector<std::string> &files,
                    const std::string &output) {
  std::vector<runtime::SentencePair> documents;
  uint64_t tokens = 0;
  for (const std::string &path : files) {
    std::string text;
    if (std::string why = runtime::readFile(path, text); !why.empty())
      return fail(why);
    if (std::string bad = runtime::checkUtf8(text); !bad.empty())
      return fail(path + ":" + bad);
    std::vector<int32_t> document;
    auto finish = [&] {
      if (document.empty())
        return;
      tokens += document.size();
      documents.push_back({{}, std::move(document)});
      document.clear();
    };
    size_t number = 0;
    for (std::string_view line : runtime::splitLines(text)) {
      if (std::string why = encodedLineTooLong(path, ++number, line);
          !why.empty())
        return fail(why);
      if (isBlankLine(line)) {
        finish();
        continue;
      }
      std::vector<int32_t> ids = vocabulary.encode(line);
      document.insert(document.end(), ids.begin(), ids.end());
    }
    finish();
  }
  if (documents.empty()) {
    std::string named;
    for (const std::string &file : files)
      named += (named.empty() ? "" : ", ") + file;
    return fail("no text to encode: " + named +
                (files.size() == 1 ? " holds" : " hold") +
                " blank lines only");
  }
  if (std::string why = runtime::writeTokenCorpus(
          output, vocabulary.size(), vocabulary.hash(), documents,
          runtime::CorpusKind::Documents);
      !why.empty())
    return fail(why);
  summaryStream(output) << output << ": " << documents.size()
               << (documents.size() == 1 ? " document, " : " documents, ")
               << tokens << " tokens (text for language models, from "
               << files.size() << (files.size() == 1 ? " file" : " files")
               << "), vocabulary " << vocabulary.path() << " ("
               << vocabulary.size() << " ids, hash "
               << runtime::hashText(vocabulary.hash()) << ")\n";
  return 0;
}

} // namespace tgc::data
