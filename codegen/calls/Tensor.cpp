//===- Tensor.cpp - shapes, reductions, embeddings and masks as calls -----===//
//
// Ops that move or reduce elements by shape (transpose, broadcast, the
// reductions), the embeddings and what the model computes from positions
// and ids alone (positional encoding, masks): shapes as static arrays.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// The kernels::reduce call of the three reductions: `dims` of `input` as
/// flags over its shape.
std::string tensorReduction(KernelArgs &p, Operation *op, Value input,
                            ArrayRef<int64_t> dims, const char *kind) {
  auto shape = shapeOf(input);
  std::string flags = "{";
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    flags += std::string(d ? ", " : "") +
             (llvm::is_contained(dims, d) ? "true" : "false");
  flags += "}";
  return "  const int64_t shape[] = " + arrayLiteral(shape) +
         ";\n  const bool reduced[] = " + flags + ";\n  kernels::reduce(" +
         p(input) + ", " + p(op->getResult(0)) + ", shape, " +
         std::to_string(shape.size()) +
         ", reduced, kernels::Reduction::" + kind + ");\n";
}

FailureOr<std::string> emitTranspose(KernelArgs &p, EmitContext &context,
                                     tg::TransposeOp o) {
  auto shape = shapeOf(o.getInput());
  return std::string(
      "  const int64_t shape[] = " + arrayLiteral(shape) +
      ";\n  const int64_t permutation[] = " + arrayLiteral(o.getPermutation()) +
      ";\n  kernels::transpose(" + p(o.getInput()) + ", " + p(o.getResult()) +
      ", shape, permutation, " + std::to_string(shape.size()) + ");\n");
}

FailureOr<std::string> emitBroadcast(KernelArgs &p, EmitContext &context,
                                     tg::BroadcastOp o) {
  auto shape = shapeOf(o.getResult());
  auto input = shapeOf(o.getInput());
  bool scalar = o.getDims().empty();
  return std::string(
      "  const int64_t shape[] = " + arrayLiteral(shape) + ";\n" +
      (scalar ? std::string()
              : "  const int64_t dims[] = " + arrayLiteral(o.getDims()) +
                    ";\n  const int64_t inputShape[] = " + arrayLiteral(input) +
                    ";\n") +
      "  kernels::broadcast(" + p(o.getInput()) + ", " + p(o.getResult()) +
      ", shape, " + std::to_string(shape.size()) +
      (scalar ? ", nullptr, nullptr, 0"
              : ", dims, inputShape, " + std::to_string(input.size())) +
      ");\n");
}

FailureOr<std::string> emitReduceSum(KernelArgs &p, EmitContext &context,
                                     tg::ReduceSumOp o) {
  return std::string(tensorReduction(p, o, o.getInput(), o.getDims(), "Sum"));
}

FailureOr<std::string> emitReduceMax(KernelArgs &p, EmitContext &context,
                                     tg::ReduceMaxOp o) {
  return std::string(tensorReduction(p, o, o.getInput(), o.getDims(), "Max"));
}

FailureOr<std::string> emitReduceMean(KernelArgs &p, EmitContext &context,
                                      tg::ReduceMeanOp o) {
  return std::string(tensorReduction(p, o, o.getInput(), o.getDims(), "Mean"));
}

FailureOr<std::string> emitEmbedding(KernelArgs &p, EmitContext &context,
                                     tg::EmbeddingOp o) {
  auto table = shapeOf(o.getTable());
  return std::string("  kernels::embedding(" + p(o.getTable()) + ", " +
                     p(o.getIds()) + ", " + p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getIds())) + ", " +
                     std::to_string(table[1]) + ");\n");
}

FailureOr<std::string> emitEmbeddingGrad(KernelArgs &p, EmitContext &context,
                                         tg::EmbeddingGradOp o) {
  auto table = shapeOf(o.getResult());
  return std::string("  kernels::embeddingGrad(" + p(o.getGrad()) + ", " +
                     p(o.getIds()) + ", " + p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getIds())) + ", " +
                     std::to_string(table[1]) + ", " +
                     std::to_string(table[0]) + ");\n");
}

FailureOr<std::string> emitPositionalEncoding(KernelArgs &p,
                                              EmitContext &context,
                                              tg::PositionalEncodingOp o) {
  auto shape = shapeOf(o.getResult());
  std::string first = o.getOffset() ? ", " + p.position(o.getOffset()) : "";
  return std::string("  kernels::positionalEncoding(" + p(o.getResult()) +
                     ", " + std::to_string(shape[0]) + ", " +
                     std::to_string(shape[1]) + first + ");\n");
}

FailureOr<std::string> emitPaddingMask(KernelArgs &p, EmitContext &context,
                                       tg::PaddingMaskOp o) {
  return std::string("  kernels::paddingMask(" + p(o.getIds()) + ", " +
                     p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getIds())) + ", " +
                     std::to_string(o.getPadIdAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitCausalMask(KernelArgs &p, EmitContext &context,
                                      tg::CausalMaskOp o) {
  return std::string("  kernels::causalMask(" + p(o.getResult()) + ", " +
                     std::to_string(shapeOf(o.getResult())[0]) + ");\n");
}

} // namespace

void attachTensorCalls(MLIRContext &context) {
  tg::TransposeOp::attachInterface<
      KernelCallModel<tg::TransposeOp, emitTranspose>>(context);
  tg::BroadcastOp::attachInterface<
      KernelCallModel<tg::BroadcastOp, emitBroadcast>>(context);
  tg::ReduceSumOp::attachInterface<
      KernelCallModel<tg::ReduceSumOp, emitReduceSum>>(context);
  tg::ReduceMaxOp::attachInterface<
      KernelCallModel<tg::ReduceMaxOp, emitReduceMax>>(context);
  tg::ReduceMeanOp::attachInterface<
      KernelCallModel<tg::ReduceMeanOp, emitReduceMean>>(context);
  tg::EmbeddingOp::attachInterface<
      KernelCallModel<tg::EmbeddingOp, emitEmbedding>>(context);
  tg::EmbeddingGradOp::attachInterface<
      KernelCallModel<tg::EmbeddingGradOp, emitEmbeddingGrad>>(context);
  tg::PositionalEncodingOp::attachInterface<
      KernelCallModel<tg::PositionalEncodingOp, emitPositionalEncoding>>(
      context);
  tg::PaddingMaskOp::attachInterface<
      KernelCallModel<tg::PaddingMaskOp, emitPaddingMask>>(context);
  tg::CausalMaskOp::attachInterface<
      KernelCallModel<tg::CausalMaskOp, emitCausalMask>>(context);
}

} // namespace tgc::cpp
