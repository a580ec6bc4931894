//===- Commands.h - tgc-data's subcommands beyond the data formats -*- C++ -*-===//
#ifndef TGC_TOOLS_TGCDATA_COMMANDS_H
#define TGC_TOOLS_TGCDATA_COMMANDS_H

#include "common/RunFiles.h"

#include "llvm/Support/CommandLine.h"

#include <vector>

namespace tgc::runtime {
class Vocabulary;
} // namespace tgc::runtime

namespace tgc::data {

extern llvm::cl::OptionCategory dataCategory;

/// `tgc-data sample`: a generated parallel text corpus (Sample.cpp).
extern llvm::cl::SubCommand sampleCommand;
int runSample();

/// `tgc-data bleu`: corpus BLEU of a translation file (Score.cpp).
extern llvm::cl::SubCommand bleuCommand;
int runBleu();

/// `tgc-data curves`: a --metrics file drawn as an SVG (Curves.cpp).
extern llvm::cl::SubCommand curvesCommand;
int runCurves();

/// `tgc-data average`: the element-wise mean of checkpoints (Average.cpp).
extern llvm::cl::SubCommand averageCommand;
int runAverage();

/// `tgc-data encode --text`: documents of monolingual text as a .tok
/// corpus of documents (EncodeText.cpp).
int encodeDocuments(const runtime::Vocabulary &vocabulary,
                    const std::vector<std::string> &files,
                    const std::string &output);

/// Prints "error: message" and returns 1.
int fail(const std::string &message);

/// The longest line of text encode takes: SentencePiece holds about 180
/// times a line's bytes while it encodes it (a 12 MB line took 2.2 GB).
constexpr size_t kMaxEncodedLineBytes = size_t(4) << 20;

/// Empty, or "WHERE:LINE: the line has N bytes, more than ..." when `line`
/// is past kMaxEncodedLineBytes.
std::string encodedLineTooLong(const std::string &where, size_t lineNumber,
                               std::string_view line);

/// False after an error when an output of the command is the same file as
/// one of its inputs (tgc-data itself included) or as another output
/// (common/RunFiles.h): checked before anything is written.
bool checkRunFiles(std::vector<RunFile> files);

/// Where a command that writes `output` says what it wrote: standard
/// output, or standard error when `output` is standard output's file
/// (-o /dev/stdout), whose bytes the line would end.
llvm::raw_ostream &summaryStream(const std::string &output);

} // namespace tgc::data

#endif // TGC_TOOLS_TGCDATA_COMMANDS_H
