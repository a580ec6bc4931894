//===- PipelineOptions.h - each pipeline's options, declared once -*- C++ -*-===//
//
// The options of tg-training-pipeline and tg-compile-pipeline are plain
// structs. Each declares its options once, in `bind`: name, field, help and
// default (the field's initializer). Binders read that one declaration:
//   - PipelineOptionsParser: the pipeline's textual options
//     (`tgc-opt --tg-compile-pipeline=target=cuda`, and printing them back:
//     pipelineText, the string every program's manifest records);
//   - tgc's command line (tools/driver/CommandLine.cpp) binds the options
//     a user sets as flags (`--pair-gemms=false`); options marked
//     OptionUse::PipelineOnly there come from flags of the driver's own
//     (`--precision=auto`, `--target=interp`) or from nowhere.
// A binder is any class with
//   template <typename T, typename... Mods>
//   void option(llvm::StringRef name, T &field, OptionUse use,
//               llvm::StringRef help, Mods &&...modifiers);
// where the modifiers are llvm::cl ones (cl::values for enums).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_PIPELINEOPTIONS_H
#define TGC_PASSES_PIPELINEOPTIONS_H

#include "passes/Precision.h"

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tgc {

/// What the compiled step runs on: a C++ program or a CUDA one.
enum class CompileTarget { cpu, cuda };

inline const char *nameOf(CompileTarget target) {
  return target == CompileTarget::cuda ? "cuda" : "cpu";
}

/// Where an option may be set: everywhere, or only in the pipeline's text
/// (tgc sets it from a flag of its own, or not at all).
enum class OptionUse { Everywhere, PipelineOnly };

/// The options of the training step that both pipelines take.
struct StepOptions {
  bool fuse = true;
  bool report = false;
  /// tg-fuse-output-loss's rows per chunk; kTargetDefault: the target's.
  int64_t lossChunkRows = kTargetDefault;
  GemmPrecision precision = GemmPrecision::fp32;
  bool bf16Attention = true;
  bool bf16AttentionProducts = true;
  bool foldHeadTransposes = true;
  bool fuseMatmulAdd = true;
  bool fuseEmbeddingGradAdd = true;

  static constexpr int64_t kTargetDefault = -1;

  template <typename Binder> void bindStep(Binder &b) {
    namespace cl = llvm::cl;
    b.option("fuse", fuse, OptionUse::Everywhere,
             "Run the fusion passes (forward and training-step; "
             "fuse=false for comparisons)");
    b.option("report", report, OptionUse::PipelineOnly,
             "The fusion passes report what they fused as remarks");
    b.option("loss-chunk-rows", lossChunkRows, OptionUse::Everywhere,
             "tg-fuse-output-loss's rows per chunk of the output projection "
             "and loss; 0 keeps the logits whole, -1 the target's default "
             "(1024 on a CPU, 4096 on a GPU)");
    b.option("precision", precision, OptionUse::PipelineOnly,
             "GEMM operand precision: fp32, or bf16 (tg-mixed-precision: "
             "bf16 operands, f32 accumulation, f32 everything else)",
             cl::values(clEnumValN(GemmPrecision::fp32, "fp32",
                                   "f32 everywhere"),
                        clEnumValN(GemmPrecision::bf16, "bf16",
                                   "bf16 GEMM operands (mixed precision)")));
    b.option("bf16-attention", bf16Attention, OptionUse::Everywhere,
             "With precision=bf16, attention reads bf16 queries, keys and "
             "values too");
    b.option("bf16-attention-products", bf16AttentionProducts,
             OptionUse::Everywhere,
             "With bf16-attention, attention's value products and its "
             "gradient's products are bf16 ones too (bf16_products)");
    b.option("fold-head-transposes", foldHeadTransposes, OptionUse::Everywhere,
             "tg-fold-head-transposes: attention reads and writes the "
             "projections' [B, S, H, D] layout, with no head transposes "
             "(=false for comparisons)");
    b.option("fuse-matmul-add", fuseMatmulAdd, OptionUse::Everywhere,
             "tg-fuse-matmul-add: a sum of a GEMM's product and another "
             "value (the backward's gradient sums) is made by the GEMM "
             "(=false for comparisons)");
    b.option("fuse-embedding-grad-add", fuseEmbeddingGradAdd,
             OptionUse::Everywhere,
             "tg-fuse-embedding-grad-add: a shared table's gradient sum is "
             "made by the scatter of an embedding's rows into the other "
             "term (=false for comparisons)");
  }
};

/// tg-training-pipeline: forward module -> training step.
struct TrainingPipelineOptions : StepOptions {
  bool predict = false;

  template <typename Binder> void bind(Binder &b) {
    bindStep(b);
    b.option("predict", predict, OptionUse::PipelineOnly,
             "Also derive @predict, the inference logits a translator needs, "
             "and (with fuse) its incremental decoder @encode and "
             "@decode_step");
  }
};

/// tg-compile-pipeline: what tgc runs before its emitters.
struct CompilePipelineOptions : StepOptions {
  CompileTarget target = CompileTarget::cpu;
  bool bf16FoldRoundings = true;
  bool recomputeWeightCopies = false;
  bool pairGemms = true;
  int64_t pairGemmsMinMacs = int64_t{1} << 20;

  template <typename Binder> void bind(Binder &b) {
    namespace cl = llvm::cl;
    b.option("target", target, OptionUse::PipelineOnly,
             "What the step runs on; sets the defaults that differ "
             "(loss-chunk-rows; pair-gemms only on a CPU)",
             cl::values(clEnumValN(CompileTarget::cpu, "cpu", "a C++ program"),
                        clEnumValN(CompileTarget::cuda, "cuda",
                                   "a CUDA program")));
    bindStep(b);
    b.option("bf16-fold-roundings", bf16FoldRoundings, OptionUse::Everywhere,
             "With precision=bf16, tg-fold-bf16-roundings: GEMMs, attention "
             "ops, transposes, elementwise loops and residual LayerNorms "
             "write the bf16 copies of their results (=false for "
             "comparisons)");
    b.option("recompute-weight-copies", recomputeWeightCopies,
             OptionUse::Everywhere,
             "With precision=bf16, tg-recompute-weight-copies: the backward "
             "rounds each weight again instead of keeping its forward bf16 "
             "copy (less memory, a little more time)");
    b.option("pair-gemms", pairGemms, OptionUse::Everywhere,
             "tg-pair-gemms before memory planning (a CPU target): pairs of "
             "small independent f32 GEMMs run at once, one thread each "
             "(=false for comparisons)");
    b.option("pair-gemms-min-macs", pairGemmsMinMacs, OptionUse::Everywhere,
             "tg-pair-gemms's fewest multiply-adds of a paired product");
  }

  /// The training pipeline this one starts with.
  TrainingPipelineOptions training() const {
    TrainingPipelineOptions options;
    static_cast<StepOptions &>(options) = *this;
    options.predict = true;
    return options;
  }

  /// These options with the target's defaults filled in: what the passes
  /// run with, and what pipelineText prints.
  CompilePipelineOptions resolved() const;
};

/// A pipeline's options as MLIR pass options, made from the struct's one
/// declaration: the parser of `--tg-compile-pipeline=...` and the printer of
/// pipelineText. `values` holds the struct; parse() fills it from text.
template <typename Options>
class PipelineOptionsParser
    : public mlir::PassPipelineOptions<PipelineOptionsParser<Options>> {
public:
  explicit PipelineOptionsParser(const Options &initial = Options())
      : values(initial) {
    values.bind(*this);
  }
  PipelineOptionsParser(const PipelineOptionsParser &) = delete;

  /// The struct, with every option parsed from text so far.
  const Options &get() const {
    for (const auto &read : readers)
      read();
    return values;
  }

  /// The binder method: one MLIR pass option per field.
  template <typename T, typename... Mods>
  void option(llvm::StringRef name, T &field, OptionUse, llvm::StringRef help,
              Mods &&...modifiers) {
    using Option = mlir::detail::PassOptions::Option<T>;
    auto option = std::make_unique<Option>(*this, name, llvm::cl::desc(help),
                                           llvm::cl::init(field),
                                           std::forward<Mods>(modifiers)...);
    readers.push_back([&field, raw = option.get()] { field = raw->getValue(); });
    owned.push_back(std::move(option));
  }

private:
  Options values;
  std::vector<std::unique_ptr<llvm::cl::Option>> owned;
  std::vector<std::function<void()>> readers;
};

/// "tg-compile-pipeline{fuse=true loss-chunk-rows=1024 ...}": the pipeline
/// and every option, resolved; `tgc-opt --pass-pipeline='builtin.module(...)'`
/// with it runs what tgc ran.
std::string pipelineText(const CompilePipelineOptions &options);

} // namespace tgc

#endif // TGC_PASSES_PIPELINEOPTIONS_H
