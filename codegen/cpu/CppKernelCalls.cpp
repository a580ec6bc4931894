//===- CppKernelCalls.cpp - ops that call runtime/kernels/cpu/Kernels.h
//----------===//
//
// One writer per op, found by the op's TypeID: resolve operand and result
// pointers, pass the static shapes and attributes as literals, call the
// kernel.
//
//===----------------------------------------------------------------------===//
#include "codegen/cpu/CppDataParallel.h"
#include "codegen/cpu/EmitContext.h"

#include "ir/OpRuleTable.h"
#include "ir/TgOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include <functional>
#include <numeric>
#include <type_traits>

using namespace mlir;

namespace tgc::cpp {

namespace {

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

/// Collects pointer expressions; the first failure sticks.
class Args {
public:
  explicit Args(EmitContext &context) : context(context) {}

  /// Where `value` is for the kernels (device memory on CUDA).
  std::string operator()(Value value) {
    return value ? take(context.pointer(value)) : "nullptr";
  }
  /// Where the host reads `value` (a dropout key, a constant).
  std::string host(Value value) { return take(context.hostPointer(value)); }
  /// The decoding position (a host int).
  std::string position(Value value) { return take(context.position(value)); }

  bool ok = true;

private:
  std::string take(FailureOr<std::string> ptr) {
    ok = ok && succeeded(ptr);
    return succeeded(ptr) ? *ptr : "";
  }

  EmitContext &context;
};

std::string b(bool value) { return value ? "true" : "false"; }

/// "kernels::Dropout{uint32_t(K[0]), uint32_t(K[1]), op, rate}", or a disabled
/// one without a key or at rate 0 (inference).
/// `elements` is the size of the tensor the site applies to (its index
/// offset in a data-parallel run, CppDataParallel.h).
std::string dropout(Args &p, Value key, llvm::APFloat rate, uint64_t opId,
                    Operation *op, int64_t elements) {
  if (!key || rate.isZero())
    return "kernels::Dropout{}";
  std::string k = p.host(key);
  return "kernels::Dropout{uint32_t(" + k + "[0]), uint32_t(" + k + "[1]), " +
         std::to_string(opId) + "u, " + floatLiteral(rate.convertToFloat()) +
         ", " + dropoutIndexOffset(op, elements) + "}";
}

template <typename AttentionLike>
std::string attentionSetup(Args &p, AttentionLike op) {
  auto q = shapeOf(op.getQuery()), k = shapeOf(op.getKeyIn()),
       v = shapeOf(op.getValue());
  bool sequenceMajor = op.getSequenceMajor();
  int heads = sequenceMajor ? 2 : 1, positions = sequenceMajor ? 1 : 2;
  std::string s = "  const kernels::AttentionShape shape{" +
                  std::to_string(q[0]) + ", " + std::to_string(q[heads]) +
                  ", " + std::to_string(q[positions]) + ", " +
                  std::to_string(k[positions]) + ", " + std::to_string(q[3]) +
                  ", " + std::to_string(v[3]) +
                  (sequenceMajor ? ", /*sequenceMajor=*/true" : "") + "};\n";
  s += "  kernels::AttentionConfig config;\n";
  if (op.getMask())
    s += "  config.mask = " + p(op.getMask()) + ";\n";
  s += "  config.causal = " + b(op.getCausal()) + ";\n";
  if constexpr (std::is_same_v<AttentionLike, tg::AttentionOp>)
    if (op.getPosition())
      s += "  config.causalOffset = " + p.position(op.getPosition()) + ";\n";
  s += "  config.scale = " + floatLiteral(op.getScale().convertToFloat()) +
       ";\n";
  if (op.getBf16Products())
    s += "  config.bf16Products = true;\n";
  s += "  config.dropout = " +
       dropout(p, op.getRngKey(), op.getDropoutRate(), op.getOpId(), op,
               q[0] * q[1] * q[2] * k[positions]) + ";\n";
  return s;
}

/// rows x width of a tensor normalized over its last dimension.
std::string rowsWidth(Value value) {
  auto shape = shapeOf(value);
  return std::to_string(product(shape.drop_back())) + ", " +
         std::to_string(shape.back());
}

std::string reduction(Args &p, Operation *op, Value input,
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

std::string adamEntry(Args &p, const llvm::StringMap<int64_t> &offsets,
                      const std::string &stateBase, StringRef param,
                      StringRef m, StringRef v, Value grad) {
  auto state = [&](StringRef name) {
    return stateBase + " + " + std::to_string(offsets.lookup(name));
  };
  return "      {" + state(param) + ", " + state(m) + ", " + state(v) + ", " +
         p(grad) + ", " + std::to_string(numElements(grad)) + "}, // @" +
         param.str() + "\n";
}

std::string adamCall(Args &p, EmitContext &context, std::string entries,
                     int count, Value lr, Value step, llvm::APFloat beta1,
                     llvm::APFloat beta2, llvm::APFloat epsilon) {
  return "  const kernels::AdamTensor tensors[] = {\n" + entries +
         "  };\n  kernels::adamUpdate(tensors, " + std::to_string(count) +
         ", " + context.scalarArgument(p(lr)) + ", " +
         context.scalarArgument(p(step)) + ", " +
         floatLiteral(beta1.convertToFloat()) + ", " +
         floatLiteral(beta2.convertToFloat()) + ", " +
         floatLiteral(epsilon.convertToFloat()) + ");\n";
}

FailureOr<std::string> emitMatmul(Args &p, EmitContext &context,
                                  tg::MatmulOp o) {
  auto lhs = shapeOf(o.getLhs()), rhs = shapeOf(o.getRhs());
  int64_t rank = static_cast<int64_t>(lhs.size());
  int64_t m = o.getTransposeLhs() ? lhs[rank - 1] : lhs[rank - 2];
  int64_t k = o.getTransposeLhs() ? lhs[rank - 2] : lhs[rank - 1];
  int64_t n = o.getTransposeRhs() ? rhs[rhs.size() - 2] : rhs.back();
  bool shared = rhs.size() == 2 && rank > 2;
  return std::string("  kernels::matmul(" + p(o.getLhs()) + ", " +
                     p(o.getRhs()) + ", " + p(o.getResult()) + ", " +
                     std::to_string(product(lhs.drop_back(2))) + ", " +
                     std::to_string(m) + ", " + std::to_string(n) + ", " +
                     std::to_string(k) + ", " + b(o.getTransposeLhs()) + ", " +
                     b(o.getTransposeRhs()) + ", " + b(shared) + ");\n");
}

FailureOr<std::string> emitLinear(Args &p, EmitContext &context,
                                  tg::LinearOp o) {
  auto weight = shapeOf(o.getWeight());
  return std::string(
      "  kernels::linear(" + p(o.getInput()) + ", " + p(o.getWeight()) + ", " +
      p(o.getBias()) + ", " + p(o.getResult()) + ", " +
      std::to_string(numElements(o.getInput()) / weight[0]) + ", " +
      std::to_string(weight[0]) + ", " + std::to_string(weight[1]) + ", " +
      b(o.getRelu()) + ");\n");
}

FailureOr<std::string> emitToBf16(Args &p, EmitContext &context,
                                  tg::ToBf16Op o) {
  return std::string("  kernels::toBf16(" + p(o.getInput()) + ", " +
                     p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getInput())) + ");\n");
}

FailureOr<std::string> emitTranspose(Args &p, EmitContext &context,
                                     tg::TransposeOp o) {
  auto shape = shapeOf(o.getInput());
  return std::string(
      "  const int64_t shape[] = " + arrayLiteral(shape) +
      ";\n  const int64_t permutation[] = " + arrayLiteral(o.getPermutation()) +
      ";\n  kernels::transpose(" + p(o.getInput()) + ", " + p(o.getResult()) +
      ", shape, permutation, " + std::to_string(shape.size()) + ");\n");
}

FailureOr<std::string> emitBroadcast(Args &p, EmitContext &context,
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

FailureOr<std::string> emitReduceSum(Args &p, EmitContext &context,
                                     tg::ReduceSumOp o) {
  return std::string(reduction(p, o, o.getInput(), o.getDims(), "Sum"));
}

FailureOr<std::string> emitReduceMax(Args &p, EmitContext &context,
                                     tg::ReduceMaxOp o) {
  return std::string(reduction(p, o, o.getInput(), o.getDims(), "Max"));
}

FailureOr<std::string> emitReduceMean(Args &p, EmitContext &context,
                                      tg::ReduceMeanOp o) {
  return std::string(reduction(p, o, o.getInput(), o.getDims(), "Mean"));
}

FailureOr<std::string> emitEmbedding(Args &p, EmitContext &context,
                                     tg::EmbeddingOp o) {
  auto table = shapeOf(o.getTable());
  return std::string("  kernels::embedding(" + p(o.getTable()) + ", " +
                     p(o.getIds()) + ", " + p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getIds())) + ", " +
                     std::to_string(table[1]) + ");\n");
}

FailureOr<std::string> emitEmbeddingGrad(Args &p, EmitContext &context,
                                         tg::EmbeddingGradOp o) {
  auto table = shapeOf(o.getResult());
  return std::string("  kernels::embeddingGrad(" + p(o.getGrad()) + ", " +
                     p(o.getIds()) + ", " + p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getIds())) + ", " +
                     std::to_string(table[1]) + ", " +
                     std::to_string(table[0]) + ");\n");
}

FailureOr<std::string> emitPositionalEncoding(Args &p, EmitContext &context,
                                              tg::PositionalEncodingOp o) {
  auto shape = shapeOf(o.getResult());
  std::string first = o.getOffset() ? ", " + p.position(o.getOffset()) : "";
  return std::string("  kernels::positionalEncoding(" + p(o.getResult()) +
                     ", " + std::to_string(shape[0]) + ", " +
                     std::to_string(shape[1]) + first + ");\n");
}

FailureOr<std::string> emitPaddingMask(Args &p, EmitContext &context,
                                       tg::PaddingMaskOp o) {
  return std::string("  kernels::paddingMask(" + p(o.getIds()) + ", " +
                     p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getIds())) + ", " +
                     std::to_string(o.getPadIdAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitCausalMask(Args &p, EmitContext &context,
                                      tg::CausalMaskOp o) {
  return std::string("  kernels::causalMask(" + p(o.getResult()) + ", " +
                     std::to_string(shapeOf(o.getResult())[0]) + ");\n");
}

FailureOr<std::string> emitSoftmax(Args &p, EmitContext &context,
                                   tg::SoftmaxOp o) {
  if (static_cast<int64_t>(o.getAxis()) !=
      static_cast<int64_t>(shapeOf(o.getInput()).size()) - 1)
    return o.emitOpError() << "is over axis " << o.getAxis()
                           << "; the C++ backend supports the last axis only";
  return std::string("  kernels::softmax(" + p(o.getInput()) + ", " +
                     p(o.getResult()) + ", " + rowsWidth(o.getInput()) +
                     ");\n");
}

FailureOr<std::string> emitSoftmaxGrad(Args &p, EmitContext &context,
                                       tg::SoftmaxGradOp o) {
  if (static_cast<int64_t>(o.getAxis()) !=
      static_cast<int64_t>(shapeOf(o.getOutput()).size()) - 1)
    return o.emitOpError() << "is over axis " << o.getAxis()
                           << "; the C++ backend supports the last axis only";
  return std::string("  kernels::softmaxGrad(" + p(o.getOutput()) + ", " +
                     p(o.getGrad()) + ", " + p(o.getResult()) + ", " +
                     rowsWidth(o.getOutput()) + ");\n");
}

FailureOr<std::string> emitLayerNorm(Args &p, EmitContext &context,
                                     tg::LayerNormOp o) {
  return std::string("  kernels::layerNorm(" + p(o.getInput()) + ", " +
                     p(o.getGamma()) + ", " + p(o.getBeta()) + ", " +
                     p(o.getResult()) + ", nullptr, nullptr, " +
                     rowsWidth(o.getInput()) + ", " +
                     floatLiteral(o.getEpsilon().convertToFloat()) + ");\n");
}

FailureOr<std::string> emitLayerNormGrad(Args &p, EmitContext &context,
                                         tg::LayerNormGradOp o) {
  return std::string("  kernels::layerNormGrad(" + p(o.getGrad()) + ", " +
                     p(o.getInput()) + ", " + p(o.getGamma()) + ", " +
                     p(o.getInputGrad()) + ", " + p(o.getGammaGrad()) + ", " +
                     p(o.getBetaGrad()) + ", " + rowsWidth(o.getInput()) +
                     ", " + floatLiteral(o.getEpsilon().convertToFloat()) +
                     ");\n");
}

FailureOr<std::string> emitResidualLayerNorm(Args &p, EmitContext &context,
                                             tg::ResidualLayerNormOp o) {
  return std::string("  kernels::residualLayerNorm(" + p(o.getResidual()) +
                     ", " + p(o.getSublayer()) + ", " + p(o.getGamma()) + ", " +
                     p(o.getBeta()) + ", " + p(o.getResult()) + ", " +
                     p(o.getMean()) + ", " + p(o.getRstd()) + ", " +
                     rowsWidth(o.getResidual()) + ", " +
                     dropout(p, o.getKey(), o.getRate(), o.getOpId(), o,
                             numElements(o.getResidual())) +
                     ", " + floatLiteral(o.getEpsilon().convertToFloat()) +
                     ", " + (o.getRounded() ? p(o.getRounded()) : "nullptr") +
                     ");\n");
}

FailureOr<std::string>
emitResidualLayerNormGrad(Args &p, EmitContext &context,
                          tg::ResidualLayerNormGradOp o) {
  return std::string("  kernels::residualLayerNormGrad(" + p(o.getGrad()) +
                     ", " + p(o.getResult()) + ", " + p(o.getGamma()) +
                     ", " + p(o.getBeta()) + ", " + p(o.getRstd()) + ", " +
                     p(o.getResidualGrad()) + ", " + p(o.getSublayerGrad()) +
                     ", " + p(o.getGammaGrad()) + ", " + p(o.getBetaGrad()) +
                     ", " + rowsWidth(o.getResult()) + ", " +
                     dropout(p, o.getKey(), o.getRate(), o.getOpId(), o,
                             numElements(o.getResult())) +
                     ", " +
                     (o.getSublayerGradRounded() ? p(o.getSublayerGradRounded())
                                                 : "nullptr") +
                     ");\n");
}

FailureOr<std::string> emitAttention(Args &p, EmitContext &context,
                                     tg::AttentionOp o) {
  return std::string(attentionSetup(p, o) + "  kernels::attention(" +
                     p(o.getQuery()) + ", " + p(o.getKeyIn()) + ", " +
                     p(o.getValue()) + ", " + p(o.getOutput()) + ", " +
                     p(o.getLse()) + ", shape, config);\n");
}

FailureOr<std::string> emitAttentionGrad(Args &p, EmitContext &context,
                                         tg::AttentionGradOp o) {
  return std::string(attentionSetup(p, o) + "  kernels::attentionGrad(" +
                     p(o.getGrad()) + ", " + p(o.getQuery()) + ", " +
                     p(o.getKeyIn()) + ", " + p(o.getValue()) + ", " +
                     p(o.getOutput()) + ", " + p(o.getLse()) + ", " +
                     p(o.getQueryGrad()) + ", " + p(o.getKeyGrad()) + ", " +
                     p(o.getValueGrad()) + ", shape, config);\n");
}

FailureOr<std::string> emitCrossEntropy(Args &p, EmitContext &context,
                                        tg::CrossEntropyOp o) {
  return std::string("  kernels::crossEntropy(" + p(o.getLogits()) + ", " +
                     p(o.getTargets()) + ", " + p(o.getLoss()) + ", " +
                     p(o.getTokens()) + ", " + rowsWidth(o.getLogits()) + ", " +
                     floatLiteral(o.getSmoothing().convertToFloat()) + ", " +
                     std::to_string(o.getIgnoreIndexAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitCrossEntropyGrad(Args &p, EmitContext &context,
                                            tg::CrossEntropyGradOp o) {
  auto lossGrad = context.hostPointer(o.getLossGrad());
  if (failed(lossGrad))
    return failure();
  return std::string("  kernels::crossEntropyGrad(*" + *lossGrad + ", " +
                     p(o.getLogits()) + ", " + p(o.getTargets()) + ", " +
                     p(o.getResult()) + ", " + rowsWidth(o.getLogits()) + ", " +
                     floatLiteral(o.getSmoothing().convertToFloat()) + ", " +
                     std::to_string(o.getIgnoreIndexAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitOutputLoss(Args &p, EmitContext &context,
                                      tg::OutputLossOp o) {
  auto lossGrad = context.hostPointer(o.getLossGrad());
  if (failed(lossGrad))
    return failure();
  auto weight = llvm::cast<RankedTensorType>(o.getWeight().getType()).getShape();
  return std::string("  kernels::outputLoss(" + p(o.getHidden()) + ", " +
                     p(o.getWeight()) + ", " + p(o.getTargets()) + ", *" +
                     *lossGrad + ", " + p(o.getLoss()) + ", " +
                     p(o.getTokens()) + ", " + p(o.getHiddenGrad()) + ", " +
                     p(o.getWeightGrad()) + ", " + p(o.getWorkspace()) + ", " +
                     std::to_string(numElements(o.getTargets())) + ", " +
                     std::to_string(weight[1]) + ", " +
                     std::to_string(weight[0]) + ", " +
                     std::to_string(o.getChunkRows()) + ", " +
                     floatLiteral(o.getSmoothing().convertToFloat()) + ", " +
                     std::to_string(o.getIgnoreIndexAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitStore(Args &p, EmitContext &context, tg::StoreOp o) {
  return std::string(context.copy(context.variableAddress(o.getVariable()),
                                  p(o.getValue()),
                                  numElements(o.getValue()) * 4) +
                     "\n");
}

FailureOr<std::string> emitStoreSlice(Args &p, EmitContext &context,
                                      tg::StoreSliceOp o) {
  auto shape = shapeOf(o.getValue());
  int64_t axis = o.getAxis();
  auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
      o, o.getVariableAttr());
  int64_t extent = variable.getTensorType().getShape()[axis];
  return std::string(
      "  kernels::storeSlice(" + context.variableAddress(o.getVariable()) +
      ", " + p(o.getValue()) + ", " +
      std::to_string(product(shape.take_front(axis))) + ", " +
      std::to_string(shape[axis]) + ", " + std::to_string(extent) + ", " +
      std::to_string(product(shape.drop_front(axis + 1))) + ", " +
      p.position(o.getIndex()) + ");\n");
}

FailureOr<std::string> emitAdamUpdate(Args &p, EmitContext &context,
                                      tg::AdamUpdateOp o) {
  return adamCall(
      p, context,
      adamEntry(p, context.variableOffsets(), context.stateBase(), o.getParam(),
                o.getMoment1(), o.getMoment2(), o.getGrad()),
      1, o.getLr(), o.getStep(), o.getBeta1(), o.getBeta2(), o.getEpsilon());
}

FailureOr<std::string> emitMultiAdamUpdate(Args &p, EmitContext &context,
                                           tg::MultiAdamUpdateOp o) {
  std::string entries;
  auto name = [](Attribute ref) {
    return llvm::cast<FlatSymbolRefAttr>(ref).getValue();
  };
  for (auto [param, m, v, grad] :
       llvm::zip(o.getParams(), o.getMoments1(), o.getMoments2(), o.getGrads()))
    entries += adamEntry(p, context.variableOffsets(), context.stateBase(),
                         name(param), name(m), name(v), grad);
  int count = static_cast<int>(o.getGrads().size());
  if (!o.getGradNorm())
    return adamCall(p, context, entries, count, o.getLr(), o.getStep(),
                    o.getBeta1(), o.getBeta2(), o.getEpsilon());
  // The optimizer step: its controls are host values on both targets, the
  // accumulator is the program's (StepFrame's, or the device frame's).
  bool cuda = context.isCuda();
  std::string control = "{*" + p(o.getWeight()) + ", *" + p(o.getPhase()) +
                        ", *" + p(o.getClip()) + ", " + (cuda ? "g" : "f") +
                        ".gradAccumulator}";
  std::string hyper = floatLiteral(o.getBeta1().convertToFloat()) + ", " +
                      floatLiteral(o.getBeta2().convertToFloat()) + ", " +
                      floatLiteral(o.getEpsilon().convertToFloat());
  std::string tensors =
      "  const kernels::AdamTensor tensors[] = {\n" + entries + "  };\n";
  std::string norm = p(o.getGradNorm());
  if (cuda)
    return tensors + "  kernels::optimizerStep(tensors, " +
           std::to_string(count) + ", " + control + ", " + p(o.getLr()) + ", " +
           p(o.getStep()) + ", " + norm + ", " + hyper + ");\n";
  // A data-parallel run's sharded optimizer takes the step over (and is
  // given the kernel, for its share).
  std::string arguments = "tensors, " + std::to_string(count) + ", " + control +
                          ", *" + p(o.getLr()) + ", *" + p(o.getStep()) + ", " +
                          hyper;
  return tensors + "  *" + norm + " = f.optimizerStep ? f.optimizerStep(" +
         "&kernels::optimizerStep, " + arguments + ")\n" +
         "                   : kernels::optimizerStep(" + arguments + ");\n";
}

FailureOr<std::string> emitAllReduce(Args &, EmitContext &, tg::AllReduceOp o) {
  return allReduceCalls(o);
}

/// One op's call, as C++ text; failure with a diagnostic at the op.
using CallWriter = OpRule<FailureOr<std::string>, Args &, EmitContext &>;
using Table = OpRuleTable<CallWriter::Fn>;

template <typename OpT>
void add(Table &table,
         FailureOr<std::string> (*write)(Args &, EmitContext &, OpT)) {
  table.insert<OpT>(CallWriter::of(write));
}

const Table &callWriters() {
  static const Table table = [] {
    Table t;
    add(t, emitMatmul);
    add(t, emitLinear);
    add(t, emitToBf16);
    add(t, emitTranspose);
    add(t, emitBroadcast);
    add(t, emitReduceSum);
    add(t, emitReduceMax);
    add(t, emitReduceMean);
    add(t, emitEmbedding);
    add(t, emitEmbeddingGrad);
    add(t, emitPositionalEncoding);
    add(t, emitPaddingMask);
    add(t, emitCausalMask);
    add(t, emitSoftmax);
    add(t, emitSoftmaxGrad);
    add(t, emitLayerNorm);
    add(t, emitLayerNormGrad);
    add(t, emitResidualLayerNorm);
    add(t, emitResidualLayerNormGrad);
    add(t, emitAttention);
    add(t, emitAttentionGrad);
    add(t, emitCrossEntropy);
    add(t, emitCrossEntropyGrad);
    add(t, emitOutputLoss);
    add(t, emitStore);
    add(t, emitStoreSlice);
    add(t, emitAdamUpdate);
    add(t, emitMultiAdamUpdate);
    add(t, emitAllReduce);
    return t;
  }();
  return table;
}

} // namespace

bool hasKernelCall(TypeID op) { return callWriters().contains(op); }

LogicalResult emitKernelCall(Operation *op, EmitContext &context,
                             raw_ostream &os) {
  const CallWriter::Fn *write = callWriters().lookup(op->getName().getTypeID());
  if (!write)
    return op->emitOpError() << "is not supported by the C++ emitter";
  Args p(context);
  FailureOr<std::string> code = (*write)(p, context, op);
  if (failed(code) || !p.ok)
    return failure();
  os << *code;
  return success();
}

} // namespace tgc::cpp
