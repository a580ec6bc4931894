//===- Tensor.cpp - shapes, reductions, embeddings and masks as calls -----===//
//
// Ops that move or reduce elements by shape (transpose, broadcast, the
// reductions, slices and concatenation), the gathers and embeddings and
// what the model computes from positions and ids alone (positional
// encoding, masks) or applies by position (rotary embedding): shapes as
// static arrays, or a tensor seen as [outer, size, inner] around the
// dimension an op works along.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"
#include "ir/TgVerify.h"
#include "runtime/kernels/KernelTypes.h"

using namespace mlir;

// The shapes emitted here fill the kernels' arrays: tg's verifier keeps
// every tensor within them.
static_assert(tgc::tg::kMaxTensorRank == tgc::runtime::kMaxRank);

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

/// ", outer, length, extent, inner, start": `part`, the positions start ..
/// start + length - 1 along `dim` of `whole`, both seen as [outer, *, inner]
/// (the block kernels: slice, sliceGrad, storeSlice).
std::string blockArgs(Value whole, Value part, int64_t dim, int64_t start) {
  auto shape = shapeOf(whole);
  return ", " + std::to_string(product(shape.take_front(dim))) + ", " +
         std::to_string(shapeOf(part)[dim]) + ", " +
         std::to_string(shape[dim]) + ", " +
         std::to_string(product(shape.drop_front(dim + 1))) + ", " +
         std::to_string(start);
}

FailureOr<std::string> emitSlice(KernelArgs &p, EmitContext &context,
                                 tg::SliceOp o) {
  return std::string("  kernels::slice(" + p(o.getInput()) + ", " +
                     p(o.getResult()) +
                     blockArgs(o.getInput(), o.getResult(), o.getDim(),
                               o.getStart()) +
                     ");\n");
}

FailureOr<std::string> emitSliceGrad(KernelArgs &p, EmitContext &context,
                                     tg::SliceGradOp o) {
  return std::string("  kernels::sliceGrad(" + p(o.getGrad()) + ", " +
                     p(o.getResult()) +
                     blockArgs(o.getResult(), o.getGrad(), o.getDim(),
                               o.getStart()) +
                     ");\n");
}

/// Each input stored at its offset along the joined dimension.
FailureOr<std::string> emitConcat(KernelArgs &p, EmitContext &context,
                                  tg::ConcatOp o) {
  std::string calls;
  int64_t dim = o.getDim(), offset = 0;
  for (Value input : o.getInputs()) {
    calls += "  kernels::storeSlice(" + p(o.getResult()) + ", " + p(input) +
             blockArgs(o.getResult(), input, dim, offset) + ");\n";
    offset += shapeOf(input)[dim];
  }
  return calls;
}

/// ", outer, extent, count, inner": a gather along `dim` of a tensor of
/// `shape` by `indices`, seen as [outer, extent, inner].
std::string gatherArgs(ArrayRef<int64_t> shape, Value indices, int64_t dim) {
  return ", " + std::to_string(product(shape.take_front(dim))) + ", " +
         std::to_string(shape[dim]) + ", " +
         std::to_string(numElements(indices)) + ", " +
         std::to_string(product(shape.drop_front(dim + 1)));
}

FailureOr<std::string> emitGather(KernelArgs &p, EmitContext &context,
                                  tg::GatherOp o) {
  return std::string("  kernels::gather(" + p(o.getInput()) + ", " +
                     p(o.getIndices()) + ", " + p(o.getResult()) +
                     gatherArgs(shapeOf(o.getInput()), o.getIndices(),
                                o.getDim()) +
                     ");\n");
}

FailureOr<std::string> emitGatherGrad(KernelArgs &p, EmitContext &context,
                                      tg::GatherGradOp o) {
  return std::string("  kernels::gatherGrad(" + p(o.getGrad()) + ", " +
                     p(o.getIndices()) + ", " + p(o.getResult()) +
                     gatherArgs(shapeOf(o.getResult()), o.getIndices(),
                                o.getDim()) +
                     ");\n");
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
  std::string base = o.getAddend() ? p(o.getAddend()) : "nullptr";
  return std::string("  kernels::embeddingGrad(" + p(o.getGrad()) + ", " +
                     p(o.getIds()) + ", " + base + ", " + p(o.getResult()) +
                     ", " + std::to_string(numElements(o.getIds())) + ", " +
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

FailureOr<std::string> emitRotary(KernelArgs &p, EmitContext &context,
                                  tg::RotaryOp o) {
  auto shape = shapeOf(o.getInput());
  int64_t width = shape.back();
  std::string first = o.getOffset() ? ", " + p.position(o.getOffset()) : "";
  return std::string(
      "  kernels::rotary(" + p(o.getInput()) + ", " + p(o.getResult()) + ", " +
      std::to_string(numElements(o.getInput()) / width) + ", " +
      std::to_string(shape[shape.size() - 2]) + ", " + std::to_string(width) +
      ", " + doubleLiteral(o.getBase().convertToDouble()) + ", " +
      (o.getInverse() ? "true" : "false") + first + ");\n");
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
  tg::SliceOp::attachInterface<KernelCallModel<tg::SliceOp, emitSlice>>(
      context);
  tg::SliceGradOp::attachInterface<
      KernelCallModel<tg::SliceGradOp, emitSliceGrad>>(context);
  tg::ConcatOp::attachInterface<KernelCallModel<tg::ConcatOp, emitConcat>>(
      context);
  tg::GatherOp::attachInterface<KernelCallModel<tg::GatherOp, emitGather>>(
      context);
  tg::GatherGradOp::attachInterface<
      KernelCallModel<tg::GatherGradOp, emitGatherGrad>>(context);
  tg::EmbeddingOp::attachInterface<
      KernelCallModel<tg::EmbeddingOp, emitEmbedding>>(context);
  tg::EmbeddingGradOp::attachInterface<
      KernelCallModel<tg::EmbeddingGradOp, emitEmbeddingGrad>>(context);
  tg::PositionalEncodingOp::attachInterface<
      KernelCallModel<tg::PositionalEncodingOp, emitPositionalEncoding>>(
      context);
  tg::RotaryOp::attachInterface<KernelCallModel<tg::RotaryOp, emitRotary>>(
      context);
  tg::PaddingMaskOp::attachInterface<
      KernelCallModel<tg::PaddingMaskOp, emitPaddingMask>>(context);
  tg::CausalMaskOp::attachInterface<
      KernelCallModel<tg::CausalMaskOp, emitCausalMask>>(context);
}

} // namespace tgc::cpp
