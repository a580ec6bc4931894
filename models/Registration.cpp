//===- Registration.cpp - registers the built-in models ------------------===//
#include "models/Registration.h"

#include "models/ConfigFile.h"
#include "models/Transformer.h"

#include "frontend/ModelRegistry.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tgc::models {

static FailureOr<OwningOpRef<ModuleOp>>
buildTransformerModel(MLIRContext &context, const ModelOptions &options) {
  auto error = [&](const llvm::Twine &message) {
    emitError(UnknownLoc::get(&context)) << message;
    return failure();
  };
  std::optional<TransformerConfig> config = transformerPreset(options.preset);
  if (!config)
    return error("transformer has no preset '" + options.preset +
                 "' (presets: " + llvm::join(transformerPresets(), ", ") + ")");
  if (!options.configFile.empty()) {
    TransformerConfig overrides;
    if (auto bad = readConfigFile(options.configFile, overrides)) {
      emitError(FileLineColLoc::get(&context, options.configFile, bad->line,
                                    bad->column))
          << bad->message;
      return failure();
    }
    config->MergeFrom(overrides);
  }
  if (options.batchSize)
    config->set_batch_size(options.batchSize);
  if (options.sourceLength)
    config->set_source_length(options.sourceLength);
  if (options.targetLength)
    config->set_target_length(options.targetLength);
  if (options.vocabulary)
    config->set_vocab_size(options.vocabulary);
  if (auto message = validateTransformerConfig(*config))
    return error(options.configFile.empty()
                     ? "transformer preset '" + options.preset + "': " + *message
                     : "transformer preset '" + options.preset + "' with " +
                           options.configFile + ": " + *message);
  return buildGraph(context, "loss",
                    [&](Builder &b) { buildTransformer(b, *config); });
}

void registerBuiltinModels() {
  registerModel({"transformer",
                 "the Transformer of \"Attention Is All You Need\" "
                 "(post-LN encoder-decoder, shared embeddings)",
                 transformerPresets(), "base", buildTransformerModel});
}

} // namespace tgc::models
