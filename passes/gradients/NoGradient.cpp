//===- NoGradient.cpp - the tg ops without a gradient rule ----------------===//
//
// Every tg op has a GradientOpInterface model: the ops here have none on
// purpose, and say why, so that the completeness test can tell a forgotten
// rule from a deliberate absence and tg-autodiff's error gives the reason.
// They span the families: state, masks and positions, the backward ops the
// rules emit and the ops built only after autodiff.
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::gradients {
namespace {

// Template arguments: each reason is an array with static storage.
constexpr char kVariableReason[] =
    "a module-level declaration, not a value of the differentiated function";
constexpr char kLoadReason[] = "tg-autodiff itself adds a trainable load's "
                               "gradient to its variable's";
constexpr char kStoreReason[] =
    "has no result, so the loss cannot depend on it";
constexpr char kStoreSliceReason[] =
    "has no result, so the loss cannot depend on it (decoder caches)";
constexpr char kConstantReason[] = "has no operand to pass a gradient to";
constexpr char kCausalMaskReason[] =
    "has no operand: a function of positions only";
constexpr char kPaddingMaskReason[] = "depends only on integer token ids";
constexpr char kPositionalEncodingReason[] =
    "a fixed table; its only operand is an integer offset";
constexpr char kBackwardReason[] =
    "a backward op emitted by tg-autodiff; second-order gradients are not "
    "supported";
constexpr char kFusedElementwiseReason[] =
    "built by tg-fuse-elementwise after autodiff";
constexpr char kYieldReason[] = "the terminator of tg.fused_elementwise, "
                                "which exists only after autodiff";
constexpr char kLinearReason[] =
    "built by tg-fuse-matmul-epilogue after autodiff";
constexpr char kMatmulAddReason[] =
    "built by tg-fuse-matmul-add after autodiff";
constexpr char kWeightBiasGradReason[] =
    "built by tg-fuse-matmul-epilogue after autodiff";
constexpr char kToBf16Reason[] = "built by tg-mixed-precision after autodiff; "
                                 "rounding has no useful derivative";
constexpr char kOutputLossReason[] =
    "built by tg-fuse-output-loss after autodiff; it holds the loss's "
    "gradients itself";
constexpr char kAdamUpdateReason[] =
    "the optimizer step, built by tg-adam from the gradients; has no result";
constexpr char kMultiAdamUpdateReason[] =
    "the fused optimizer step, built by tg-fuse-adam; has no result";
constexpr char kAllReduceReason[] =
    "the data-parallel sum of the gradients, built by "
    "tg-all-reduce-gradients after autodiff";

/// The ops OpTs, none of which has a rule, for the one `Reason`.
template <const char *Reason, typename... OpTs>
void skip(MLIRContext *context) {
  (attachNoGradient<OpTs, Reason>(context), ...);
}

} // namespace

void attachNoGradients(MLIRContext *context) {
  // State. tg-autodiff never asks for these: see each reason.
  skip<kVariableReason, tg::VariableOp>(context);
  skip<kLoadReason, tg::LoadOp>(context);
  skip<kStoreReason, tg::StoreOp>(context);
  skip<kStoreSliceReason, tg::StoreSliceOp>(context);
  skip<kConstantReason, tg::ConstantOp>(context);

  // Masks and positions depend only on shapes, ids and offsets: integers,
  // never varied by a trainable variable.
  skip<kCausalMaskReason, tg::CausalMaskOp>(context);
  skip<kPaddingMaskReason, tg::PaddingMaskOp>(context);
  skip<kPositionalEncodingReason, tg::PositionalEncodingOp>(context);

  // What the rules emit: second-order gradients are not supported.
  skip<kBackwardReason, tg::EmbeddingGradOp, tg::SliceGradOp,
       tg::GatherGradOp, tg::ReluGradOp, tg::GeluGradOp,
       tg::GeluTanhGradOp, tg::SoftmaxGradOp, tg::LayerNormGradOp,
       tg::RmsNormGradOp, tg::DropoutGradOp, tg::CrossEntropyGradOp,
       tg::AttentionGradOp, tg::ResidualLayerNormGradOp>(context);

  // Built only after tg-autodiff has run.
  skip<kFusedElementwiseReason, tg::FusedElementwiseOp>(context);
  skip<kYieldReason, tg::YieldOp>(context);
  skip<kLinearReason, tg::LinearOp>(context);
  skip<kMatmulAddReason, tg::MatmulAddOp>(context);
  skip<kWeightBiasGradReason, tg::WeightBiasGradOp>(context);
  skip<kToBf16Reason, tg::ToBf16Op>(context);
  skip<kOutputLossReason, tg::OutputLossOp>(context);
  skip<kAdamUpdateReason, tg::AdamUpdateOp>(context);
  skip<kMultiAdamUpdateReason, tg::MultiAdamUpdateOp>(context);
  skip<kAllReduceReason, tg::AllReduceOp>(context);
}

} // namespace tgc::gradients
