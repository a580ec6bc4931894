//===- ConfigFile.h - reads config overrides in Protobuf text format -*- C++ -*-===//
#ifndef TGC_MODELS_CONFIGFILE_H
#define TGC_MODELS_CONFIGFILE_H

#include "models/TransformerConfig.pb.h"

#include <optional>
#include <string>

namespace tgc::models {

struct ConfigError {
  int line = 0;   // 1-based; 0 when the error has no position
  int column = 0; // 1-based
  std::string message;
};

/// Parses `path` (text format) into `overrides`.
std::optional<ConfigError> readConfigFile(const std::string &path,
                                          TransformerConfig &overrides);

} // namespace tgc::models

#endif // TGC_MODELS_CONFIGFILE_H
