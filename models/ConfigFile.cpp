//===- ConfigFile.cpp - reads config overrides in Protobuf text format ---===//
#include "models/ConfigFile.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tgc::models {

namespace {
/// Keeps the first parse error with its position (protobuf counts from 0).
class FirstError : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string &message) override {
    if (!first)
      first = ConfigError{line + 1, column + 1, message};
  }
  std::optional<ConfigError> first;
};
} // namespace

std::optional<ConfigError> readConfigFile(const std::string &path,
                                          TransformerConfig &overrides) {
  std::ifstream file(path);
  if (!file)
    return ConfigError{0, 0,
                       std::string("cannot open it: ") + std::strerror(errno)};
  std::stringstream contents;
  contents << file.rdbuf();

  FirstError error;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&error);
  if (!parser.ParseFromString(contents.str(), &overrides))
    return error.first ? *error.first
                       : ConfigError{0, 0, "not a valid TransformerConfig"};
  return std::nullopt;
}

} // namespace tgc::models
