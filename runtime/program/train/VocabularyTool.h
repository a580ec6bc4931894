//===- VocabularyTool.h - SentencePiece through tgc-data ---------*- C++ -*-===//
//
// Training binaries encode and decode text with the corpus's SentencePiece
// model by running `tgc-data` (tools/tgc-data) in a child process, not
// in-process: Debian's libsentencepiece carries its own Protobuf 3.14, which
// aborts when it shares a process with the Protobuf 3.21 that checkpoints
// use. One child runs per call, for a whole list of sentences.
//
// The tool is found when the program runs: $TGC_DATA, else the tgc-data
// beside the tgc that compiled the program (CompiledModel::toolsDirectory),
// else tgc-data on $PATH.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_VOCABULARYTOOL_H
#define TGC_RUNTIME_TRAIN_VOCABULARYTOOL_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tgc::runtime {

class VocabularyTool {
public:
  /// Reads the .model file (for its hash); null and `error` on failure.
  /// `toolsDirectory` is where the compiling tgc's tools are (may be
  /// empty); `modelIds` the model's vocabulary, which encode's ids must stay
  /// below.
  static std::unique_ptr<VocabularyTool> open(const std::string &path,
                                              const std::string &toolsDirectory,
                                              int64_t modelIds,
                                              std::string &error);

  /// FNV-1a of the .model file, as tgc-data records it in corpora.
  uint64_t hash() const { return modelHash; }
  /// Its ids (SentencePiece's pieces).
  int64_t ids() const { return pieces; }
  const std::string &path() const { return modelPath; }

  /// The symbols of each line (ids >= 3). False with `error` (invalid
  /// UTF-8 names its line; an id the model does not have, from a
  /// vocabulary larger than the model's, too) on failure.
  bool encode(const std::vector<std::string> &lines,
              std::vector<std::vector<int32_t>> &ids, std::string &error) const;
  /// The detokenized text of each id sequence.
  bool decode(const std::vector<std::vector<int32_t>> &ids,
              std::vector<std::string> &lines, std::string &error) const;

private:
  VocabularyTool(std::string path, uint64_t hash, std::string tool,
                 int64_t modelIds, int64_t pieces)
      : modelPath(std::move(path)), modelHash(hash), tool(std::move(tool)),
        modelIds(modelIds), pieces(pieces) {}
  /// Runs `tgc-data <mode> --vocab <model> --ids` with `input` on stdin;
  /// its stdout lines into `output`.
  bool run(const char *mode, const std::string &input,
           std::vector<std::string> &output, std::string &error) const;

  std::string modelPath;
  uint64_t modelHash;
  std::string tool; ///< the tgc-data to run: a path, or a name for $PATH
  int64_t modelIds; ///< the model's vocabulary
  int64_t pieces;   ///< its own
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_VOCABULARYTOOL_H
