//===- Registration.cpp - registers the built-in models ------------------===//
#include "models/Registration.h"

#include "models/ConfigFile.h"
#include "models/Transformer.h"

#include "frontend/ModelRegistry.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"

#include <google/protobuf/text_format.h>

using namespace mlir;

namespace tgc::models {

/// The preset with the config file's fields and the corpus's vocabulary
/// (not yet a bucket's shape), or a diagnostic.
static FailureOr<TransformerConfig>
resolveConfig(MLIRContext &context, const ModelOptions &options) {
  std::optional<TransformerConfig> config = transformerPreset(options.preset);
  if (!config) {
    emitError(UnknownLoc::get(&context))
        << "transformer has no preset '" << options.preset << "' (presets: "
        << llvm::join(transformerPresets(), ", ") << ")";
    return failure();
  }
  if (!options.configFile.empty()) {
    TransformerConfig overrides;
    if (auto bad = readConfigFile(options.configFile, overrides)) {
      // An error without a position (the file cannot be opened) names the
      // file in its text: "FILE:0:0" would point at no line.
      if (bad->line == 0)
        emitError(UnknownLoc::get(&context))
            << "config file " << options.configFile.str() << ": "
            << bad->message;
      else
        emitError(FileLineColLoc::get(&context, options.configFile.str(),
                                      bad->line,
                                      bad->column))
            << bad->message;
      return failure();
    }
    config->MergeFrom(overrides);
  }
  if (options.vocabulary)
    config->set_vocab_size(options.vocabulary);
  return *config;
}

static FailureOr<OwningOpRef<ModuleOp>>
buildTransformerModel(MLIRContext &context, const ModelOptions &options) {
  FailureOr<TransformerConfig> config = resolveConfig(context, options);
  if (failed(config))
    return failure();
  if (options.batchSize)
    config->set_batch_size(options.batchSize);
  if (options.sourceLength)
    config->set_source_length(options.sourceLength);
  if (options.targetLength)
    config->set_target_length(options.targetLength);
  if (auto message = validateTransformerConfig(*config)) {
    emitError(UnknownLoc::get(&context))
        << (options.configFile.empty()
                ? "transformer preset '" + options.preset + "': " + *message
                : "transformer preset '" + options.preset + "' with " +
                      options.configFile.str() + ": " + *message);
    return failure();
  }
  return buildGraph(context, "loss",
                    [&](Builder &b) { buildTransformer(b, *config); });
}

/// The resolved config as text, one field a line, for the manifest.
static std::string describeTransformerConfig(MLIRContext &context,
                                             const ModelOptions &options) {
  FailureOr<TransformerConfig> config = resolveConfig(context, options);
  if (failed(config))
    return {};
  std::string fields;
  google::protobuf::TextFormat::PrintToString(*config, &fields);
  return "preset " + options.preset + "\n" + fields;
}

void registerBuiltinModels() {
  registerModel({"transformer",
                 "the Transformer of \"Attention Is All You Need\" "
                 "(post-LN encoder-decoder, shared embeddings)",
                 transformerPresets(), "base", buildTransformerModel,
                 describeTransformerConfig});
}

} // namespace tgc::models
