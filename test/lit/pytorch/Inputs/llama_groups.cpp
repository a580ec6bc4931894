// models/examples/Llama.cpp's model, its own code included as it is, with
// two more groupings of query heads than its presets have (llama-groups.test):
//   mqa  multi-query attention: 4 query heads share 1 key and value head
//   g4   8 query heads of width 4 in groups of 4 on 2 key and value heads
// Otherwise its tiny preset. The file registers Llama.cpp's `llama` too:
// `tgc --model llama-groups` picks this one.
#include "models/examples/Llama.cpp"

namespace {

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildGrouped(mlir::MLIRContext &context, const ModelOptions &options) {
  std::optional<Config> config = preset("tiny");
  if (options.preset == "mqa") {
    config->kvHeads = 1;
  } else if (options.preset == "g4") {
    config->heads = 8;
    config->kvHeads = 2;
  } else {
    mlir::emitError(mlir::UnknownLoc::get(&context))
        << "llama-groups has no preset '" << options.preset << "' (presets: mqa, g4)";
    return mlir::failure();
  }
  // As Llama.cpp: tgc --buckets and --corpus set the batch, the context and
  // the vocabulary.
  if (options.batchSize)
    config->batch = options.batchSize;
  if (options.targetLength)
    config->context = options.targetLength;
  if (options.vocabulary)
    config->vocab = options.vocabulary;
  return buildGraph(context, "loss", [&](Builder &b) { Llama(b, *config).build(); });
}

} // namespace

TGC_REGISTER_MODEL({"llama-groups",
                    "Llama.cpp with multi-query attention (mqa) or groups of 4 (g4)",
                    {"mqa", "g4"}, "mqa", buildGrouped});
