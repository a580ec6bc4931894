//===- Presets.cpp - the Transformer's presets and config rules ----------===//
#include "models/Transformer.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>

namespace tgc::models {

namespace {
struct Shape {
  int64_t vocab, dModel, heads, dFF, layers;
  double dropout, attentionDropout;
  int64_t batch, length, warmup;
};

/// "inf", "1e-60", "0.5".
std::string formatValue(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

TransformerConfig makeConfig(const Shape &s) {
  TransformerConfig c;
  c.set_vocab_size(s.vocab);
  c.set_d_model(s.dModel);
  c.set_num_heads(s.heads);
  c.set_d_ff(s.dFF);
  c.set_encoder_layers(s.layers);
  c.set_decoder_layers(s.layers);
  c.set_dropout(s.dropout);
  c.set_attention_dropout(s.attentionDropout);
  c.set_label_smoothing(0.1);
  c.set_layer_norm_epsilon(1e-6);
  c.set_batch_size(s.batch);
  c.set_source_length(s.length);
  c.set_target_length(s.length);
  c.set_pad_id(0);
  c.set_adam_beta1(0.9);
  c.set_adam_beta2(0.98);
  c.set_adam_epsilon(1e-9);
  c.set_warmup_steps(s.warmup);
  c.set_lr_factor(1.0);
  return c;
}
} // namespace

std::vector<std::string> transformerPresets() {
  return {"tiny", "small", "base", "big"};
}

std::optional<TransformerConfig> transformerPreset(llvm::StringRef name) {
  // base and big are the paper's (Table 3); the vocabulary is its shared
  // 37000-token BPE. tiny is for tests (attention dropout on so that path is
  // exercised); small is for CPU training runs.
  if (name == "tiny")
    return makeConfig({16, 32, 4, 64, 2, 0.1, 0.1, 4, 8, 100});
  if (name == "small")
    return makeConfig({1000, 128, 4, 512, 3, 0.1, 0.0, 32, 32, 1000});
  if (name == "base")
    return makeConfig({37000, 512, 8, 2048, 6, 0.1, 0.0, 64, 64, 4000});
  if (name == "big")
    return makeConfig({37000, 1024, 16, 4096, 6, 0.3, 0.0, 64, 64, 4000});
  return std::nullopt;
}

std::optional<std::string>
validateTransformerConfig(const TransformerConfig &c) {
  auto positive = [](llvm::StringRef field, int64_t value)
      -> std::optional<std::string> {
    if (value > 0)
      return std::nullopt;
    return (field + " must be positive but is " + std::to_string(value)).str();
  };
  for (auto [field, value] :
       {std::pair<const char *, int64_t>{"vocab_size", c.vocab_size()},
        {"d_model", c.d_model()},
        {"num_heads", c.num_heads()},
        {"d_ff", c.d_ff()},
        {"encoder_layers", c.encoder_layers()},
        {"decoder_layers", c.decoder_layers()},
        {"batch_size", c.batch_size()},
        {"source_length", c.source_length()},
        {"target_length", c.target_length()},
        {"warmup_steps", c.warmup_steps()}})
    if (auto error = positive(field, value))
      return error;
  // Ids 0-2 are padding, BOS and EOS: a smaller vocabulary holds no token
  // (an interpreter run's synthetic ids, from 1, were then the model's
  // error).
  if (c.vocab_size() < 4)
    return "vocab_size must be at least 4 (ids 0-2 are padding, BOS and EOS, "
           "and one token) but is " +
           std::to_string(c.vocab_size());
  // Far beyond any model this compiler is for; above them sizes overflow
  // the tensors' element counts (or, for the lengths, the runtime's buffers)
  // long before a program could run.
  static_assert(kMaxBatchSize == 65536, "the batch_size limit's text below");
  for (auto [field, value, limit, limitText] :
       {std::tuple<const char *, int64_t, int64_t, const char *>{
            "vocab_size", c.vocab_size(), int64_t(1) << 24, "2^24 (16777216)"},
        {"d_model", c.d_model(), 16384, "16384"},
        {"num_heads", c.num_heads(), 1024, "1024"},
        {"d_ff", c.d_ff(), 65536, "65536"},
        {"encoder_layers", c.encoder_layers(), 64, "64"},
        {"decoder_layers", c.decoder_layers(), 64, "64"},
        {"batch_size", c.batch_size(), kMaxBatchSize, "65536"},
        {"source_length", c.source_length(), 4096, "4096"},
        {"target_length", c.target_length(), 4096, "4096"},
        {"warmup_steps", c.warmup_steps(), INT32_MAX, "2^31 - 1"}})
    if (value > limit)
      return std::string(field) + " is " + std::to_string(value) +
             "; the limit is " + limitText;
  // The largest activation, the logits: batch x target length x vocabulary.
  if (c.batch_size() * c.target_length() > (int64_t(1) << 40) / c.vocab_size())
    return "batch_size x target_length x vocab_size (" +
           std::to_string(c.batch_size()) + " x " +
           std::to_string(c.target_length()) + " x " +
           std::to_string(c.vocab_size()) +
           ", the logits) is more than 2^40 elements";
  if (c.d_model() % c.num_heads() != 0)
    return "d_model (" + std::to_string(c.d_model()) +
           ") must be divisible by num_heads (" +
           std::to_string(c.num_heads()) + ")";
  if (c.d_model() % 2 != 0)
    return "d_model (" + std::to_string(c.d_model()) +
           ") must be even for the sinusoidal positional encoding";
  for (auto [field, value] :
       {std::pair<const char *, double>{"dropout", c.dropout()},
        {"attention_dropout", c.attention_dropout()},
        {"label_smoothing", c.label_smoothing()},
        {"adam_beta1", c.adam_beta1()},
        {"adam_beta2", c.adam_beta2()}})
    // In f32 too, as the step holds them: 0.99999999 rounds to 1.
    if (!(value >= 0.0 && value < 1.0 && static_cast<float>(value) < 1.0f))
    {
      char text[32];
      std::snprintf(text, sizeof text, "%.12g", value);
      return std::string(field) + " must be in [0, 1) but is " + text +
             (value >= 0.0 && value < 1.0
                  ? " (1 as a 32-bit float, which the step uses)"
                  : "");
    }
  for (auto [field, value] :
       {std::pair<const char *, double>{"layer_norm_epsilon",
                                        c.layer_norm_epsilon()},
        {"adam_epsilon", c.adam_epsilon()},
        {"lr_factor", c.lr_factor()}})
    if (!(value > 0.0)) {
      char text[32];
      std::snprintf(text, sizeof text, "%.12g", value);
      return std::string(field) + " must be positive but is " + text;
    }
  // Spelled as float literals in the generated code: finite, and an epsilon
  // that rounds to 0 in f32 would divide by zero.
  for (auto [field, value, low, high, range] :
       {std::tuple<const char *, double, double, double, const char *>{
            "layer_norm_epsilon", c.layer_norm_epsilon(), 1e-30, 1.0,
            "[1e-30, 1]"},
        {"adam_epsilon", c.adam_epsilon(), 1e-30, 1.0, "[1e-30, 1]"}})
    if (!(value >= low && value <= high))
      return std::string(field) + " is " + formatValue(value) +
             "; it must be in " + range;
  // Any finite factor is a valid literal; a learning rate that overflows
  // (tests use 1e39) is the training program's to report.
  if (!std::isfinite(c.lr_factor()))
    return "lr_factor is " + formatValue(c.lr_factor()) +
           "; it must be positive and finite";
  if (c.pad_id() != 0)
    return "pad_id is " + std::to_string(c.pad_id()) +
           "; it must be 0 (the runtime pads batches with token 0)";
  return std::nullopt;
}

int64_t transformerParameterCount(const TransformerConfig &c) {
  int64_t d = c.d_model(), ff = c.d_ff();
  int64_t attention = 4 * d * d;              // W^Q, W^K, W^V, W^O (no biases)
  int64_t feedForward = d * ff + ff + ff * d + d; // W1, b1, W2, b2
  int64_t norm = 2 * d;                       // gamma, beta
  int64_t encoderLayer = attention + feedForward + 2 * norm;
  int64_t decoderLayer = 2 * attention + feedForward + 3 * norm;
  return c.vocab_size() * d + c.encoder_layers() * encoderLayer +
         c.decoder_layers() * decoderLayer;
}

} // namespace tgc::models
