//===- Tensor.cpp - the interpreter's shape, reduction and mask ops -------===//
//
// Embeddings and gathers (whose ids and indices are checked here: the
// verifier cannot see them), shape ops, slices and concatenation,
// reductions, masks, positional and rotary encodings, each a call of its
// reference kernel.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

using namespace mlir;

namespace tgc::interp {
namespace {

LogicalResult embedding(Executor &x, tg::EmbeddingOp o) {
  const HostTensor &table = x.get(o.getTable()), &ids = x.get(o.getIds());
  if (failed(checkIds(o, ids, table.shape[0], "id")))
    return failure();
  x.bind(o.getResult(), ref::embedding(table, ids));
  return success();
}

LogicalResult embeddingGrad(Executor &x, tg::EmbeddingGradOp o) {
  int64_t vocab = shapeOf(o.getResult())[0];
  const HostTensor &ids = x.get(o.getIds());
  if (failed(checkIds(o, ids, vocab, "id")))
    return failure();
  HostTensor table = ref::embeddingGrad(x.get(o.getGrad()), ids, vocab);
  if (Value addend = o.getAddend()) {
    const HostTensor &base = x.get(addend);
    for (int64_t i = 0; i < table.numElements(); ++i)
      table[i] = base[i] + table[i];
  }
  x.bind(o.getResult(), std::move(table));
  return success();
}

LogicalResult broadcast(Executor &x, tg::BroadcastOp o) {
  x.bind(o.getResult(), ref::broadcast(x.get(o.getInput()), span(o.getDims()),
                                       shapeOf(o.getResult())));
  return success();
}

LogicalResult stopGradient(Executor &x, tg::StopGradientOp o) {
  x.bind(o.getResult(), x.get(o.getInput()));
  return success();
}

LogicalResult reshape(Executor &x, tg::ReshapeOp o) {
  HostTensor t = x.get(o.getInput());
  t.shape = shapeOf(o.getResult());
  x.bind(o.getResult(), std::move(t));
  return success();
}

LogicalResult transpose(Executor &x, tg::TransposeOp o) {
  x.bind(o.getResult(),
         ref::transpose(x.get(o.getInput()), span(o.getPermutation())));
  return success();
}

LogicalResult slice(Executor &x, tg::SliceOp o) {
  x.bind(o.getResult(),
         ref::slice(x.get(o.getInput()), o.getDim(), o.getStart(),
                    shapeOf(o.getResult())[o.getDim()]));
  return success();
}

LogicalResult sliceGrad(Executor &x, tg::SliceGradOp o) {
  x.bind(o.getResult(), ref::sliceGrad(x.get(o.getGrad()), o.getDim(),
                                       o.getStart(), shapeOf(o.getResult())));
  return success();
}

LogicalResult concat(Executor &x, tg::ConcatOp o) {
  std::vector<const HostTensor *> inputs;
  for (Value input : o.getInputs())
    inputs.push_back(&x.get(input));
  x.bind(o.getResult(), ref::concat(inputs, o.getDim()));
  return success();
}

LogicalResult gather(Executor &x, tg::GatherOp o) {
  const HostTensor &indices = x.get(o.getIndices());
  if (failed(checkIds(o, indices, shapeOf(o.getInput())[o.getDim()], "index")))
    return failure();
  x.bind(o.getResult(), ref::gather(x.get(o.getInput()), indices, o.getDim()));
  return success();
}

LogicalResult gatherGrad(Executor &x, tg::GatherGradOp o) {
  const HostTensor &indices = x.get(o.getIndices());
  if (failed(
          checkIds(o, indices, shapeOf(o.getResult())[o.getDim()], "index")))
    return failure();
  x.bind(o.getResult(), ref::gatherGrad(x.get(o.getGrad()), indices,
                                        o.getDim(), shapeOf(o.getResult())));
  return success();
}

template <typename ReduceOp, ref::Reduction kind>
LogicalResult reduce(Executor &x, ReduceOp o) {
  x.bind(o.getResult(), ref::reduce(x.get(o.getInput()), span(o.getDims()),
                                    o.getKeepDims(), kind));
  return success();
}

LogicalResult causalMask(Executor &x, tg::CausalMaskOp o) {
  x.bind(o.getResult(), ref::causalMask(shapeOf(o.getResult())[0]));
  return success();
}

LogicalResult paddingMask(Executor &x, tg::PaddingMaskOp o) {
  x.bind(o.getResult(),
         ref::paddingMask(x.get(o.getIds()), o.getPadIdAttr().getInt()));
  return success();
}

LogicalResult positionalEncoding(Executor &x, tg::PositionalEncodingOp o) {
  auto shape = shapeOf(o.getResult());
  int64_t first = o.getOffset() ? scalarOf(x.get(o.getOffset())) : 0;
  x.bind(o.getResult(), ref::positionalEncoding(shape[0], shape[1], first));
  return success();
}

LogicalResult rotary(Executor &x, tg::RotaryOp o) {
  int64_t first = o.getOffset() ? scalarOf(x.get(o.getOffset())) : 0;
  x.bind(o.getResult(), ref::rotary(x.get(o.getInput()),
                                    o.getBase().convertToDouble(),
                                    o.getInverse(), first));
  return success();
}

} // namespace

void attachTensorReference(MLIRContext *context) {
  tg::EmbeddingOp::attachInterface<ReferenceModel<tg::EmbeddingOp, embedding>>(
      *context);
  tg::EmbeddingGradOp::attachInterface<
      ReferenceModel<tg::EmbeddingGradOp, embeddingGrad>>(*context);
  tg::BroadcastOp::attachInterface<ReferenceModel<tg::BroadcastOp, broadcast>>(
      *context);
  tg::StopGradientOp::attachInterface<
      ReferenceModel<tg::StopGradientOp, stopGradient>>(*context);
  tg::ReshapeOp::attachInterface<ReferenceModel<tg::ReshapeOp, reshape>>(
      *context);
  tg::TransposeOp::attachInterface<ReferenceModel<tg::TransposeOp, transpose>>(
      *context);
  tg::SliceOp::attachInterface<ReferenceModel<tg::SliceOp, slice>>(*context);
  tg::SliceGradOp::attachInterface<ReferenceModel<tg::SliceGradOp, sliceGrad>>(
      *context);
  tg::ConcatOp::attachInterface<ReferenceModel<tg::ConcatOp, concat>>(
      *context);
  tg::GatherOp::attachInterface<ReferenceModel<tg::GatherOp, gather>>(
      *context);
  tg::GatherGradOp::attachInterface<
      ReferenceModel<tg::GatherGradOp, gatherGrad>>(*context);
  tg::ReduceSumOp::attachInterface<ReferenceModel<
      tg::ReduceSumOp, reduce<tg::ReduceSumOp, ref::Reduction::Sum>>>(
      *context);
  tg::ReduceMaxOp::attachInterface<ReferenceModel<
      tg::ReduceMaxOp, reduce<tg::ReduceMaxOp, ref::Reduction::Max>>>(
      *context);
  tg::ReduceMeanOp::attachInterface<ReferenceModel<
      tg::ReduceMeanOp, reduce<tg::ReduceMeanOp, ref::Reduction::Mean>>>(
      *context);
  tg::CausalMaskOp::attachInterface<
      ReferenceModel<tg::CausalMaskOp, causalMask>>(*context);
  tg::PaddingMaskOp::attachInterface<
      ReferenceModel<tg::PaddingMaskOp, paddingMask>>(*context);
  tg::PositionalEncodingOp::attachInterface<
      ReferenceModel<tg::PositionalEncodingOp, positionalEncoding>>(*context);
  tg::RotaryOp::attachInterface<ReferenceModel<tg::RotaryOp, rotary>>(
      *context);
}

} // namespace tgc::interp
