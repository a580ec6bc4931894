//===- Transformer.h - the Transformer of "Attention Is All You Need" -*- C++ -*-===//
#ifndef TGC_MODELS_TRANSFORMER_H
#define TGC_MODELS_TRANSFORMER_H

#include "models/TransformerConfig.pb.h"

#include "frontend/Builder.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <vector>

namespace tgc::models {

/// Names of the built-in presets: tiny, small, base, big.
std::vector<std::string> transformerPresets();

/// The preset's complete config, or nothing for an unknown name.
std::optional<TransformerConfig> transformerPreset(llvm::StringRef name);

/// Checks a complete config; on a violated rule returns a message naming the
/// field, e.g. "d_model (512) must be divisible by num_heads (7)".
std::optional<std::string> validateTransformerConfig(const TransformerConfig &config);

/// The largest batch_size (sentence pairs a step) a config may have.
inline constexpr int64_t kMaxBatchSize = 65536;

/// Builds the forward pass and loss of one batch into `b` (function inputs:
/// source ids, target-in ids, target-out ids, and the dropout key).
void buildTransformer(Builder &b, const TransformerConfig &config);

/// The number of trainable parameters the config implies (closed form).
int64_t transformerParameterCount(const TransformerConfig &config);

} // namespace tgc::models

#endif // TGC_MODELS_TRANSFORMER_H
