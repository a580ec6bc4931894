//===- CppKernelCalls.cpp - ops that call runtime/cpu/Kernels.h ----------===//
//
// One case per op: resolve operand and result pointers, pass the static
// shapes and attributes as literals, call the kernel.
//
//===----------------------------------------------------------------------===//
#include "codegen/cpu/EmitContext.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

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
std::string dropout(Args &p, Value key, llvm::APFloat rate, uint64_t opId) {
  if (!key || rate.isZero())
    return "kernels::Dropout{}";
  std::string k = p.host(key);
  return "kernels::Dropout{uint32_t(" + k + "[0]), uint32_t(" + k + "[1]), " +
         std::to_string(opId) + "u, " + floatLiteral(rate.convertToFloat()) +
         "}";
}

template <typename AttentionLike>
std::string attentionSetup(Args &p, AttentionLike op) {
  auto q = shapeOf(op.getQuery()), k = shapeOf(op.getKeyIn()),
       v = shapeOf(op.getValue());
  std::string s = "  const kernels::AttentionShape shape{" +
                  std::to_string(q[0]) + ", " + std::to_string(q[1]) + ", " +
                  std::to_string(q[2]) + ", " + std::to_string(k[2]) + ", " +
                  std::to_string(q[3]) + ", " + std::to_string(v[3]) + "};\n";
  s += "  kernels::AttentionConfig config;\n";
  if (op.getMask())
    s += "  config.mask = " + p(op.getMask()) + ";\n";
  s += "  config.causal = " + b(op.getCausal()) + ";\n";
  if constexpr (std::is_same_v<AttentionLike, tg::AttentionOp>)
    if (op.getPosition())
      s += "  config.causalOffset = " + p.position(op.getPosition()) + ";\n";
  s += "  config.scale = " + floatLiteral(op.getScale().convertToFloat()) +
       ";\n";
  s += "  config.dropout = " +
       dropout(p, op.getRngKey(), op.getDropoutRate(), op.getOpId()) + ";\n";
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
         std::to_string(shape.size()) + ", reduced, kernels::Reduction::" + kind +
         ");\n";
}

std::string adamEntry(Args &p, const llvm::StringMap<int64_t> &offsets,
                      const std::string &stateBase,
                      StringRef param, StringRef m, StringRef v, Value grad) {
  auto state = [&](StringRef name) {
    return stateBase + " + " + std::to_string(offsets.lookup(name));
  };
  return "      {" + state(param) + ", " + state(m) + ", " + state(v) + ", " +
         p(grad) + ", " + std::to_string(numElements(grad)) + "}, // @" +
         param.str() + "\n";
}

} // namespace

LogicalResult emitKernelCall(Operation *op, EmitContext &context,
                             raw_ostream &os) {
  Args p(context);
  std::string code;
  auto call = [&](std::string text) {
    code = std::move(text);
    return success();
  };
  auto adamCall = [&](std::string entries, int count, Value lr, Value step,
                      llvm::APFloat beta1, llvm::APFloat beta2,
                      llvm::APFloat epsilon) {
    return call("  const kernels::AdamTensor tensors[] = {\n" + entries +
                "  };\n  kernels::adamUpdate(tensors, " + std::to_string(count) +
                ", " + context.scalarArgument(p(lr)) + ", " +
                context.scalarArgument(p(step)) + ", " +
                floatLiteral(beta1.convertToFloat()) + ", " +
                floatLiteral(beta2.convertToFloat()) + ", " +
                floatLiteral(epsilon.convertToFloat()) + ");\n");
  };

  LogicalResult result =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case([&](tg::MatmulOp o) {
            auto lhs = shapeOf(o.getLhs()), rhs = shapeOf(o.getRhs());
            int64_t rank = static_cast<int64_t>(lhs.size());
            int64_t m = o.getTransposeLhs() ? lhs[rank - 1] : lhs[rank - 2];
            int64_t k = o.getTransposeLhs() ? lhs[rank - 2] : lhs[rank - 1];
            int64_t n = o.getTransposeRhs() ? rhs[rhs.size() - 2] : rhs.back();
            bool shared = rhs.size() == 2 && rank > 2;
            return call("  kernels::matmul(" + p(o.getLhs()) + ", " +
                        p(o.getRhs()) + ", " + p(o.getResult()) + ", " +
                        std::to_string(product(lhs.drop_back(2))) + ", " +
                        std::to_string(m) + ", " + std::to_string(n) + ", " +
                        std::to_string(k) + ", " + b(o.getTransposeLhs()) +
                        ", " + b(o.getTransposeRhs()) + ", " + b(shared) +
                        ");\n");
          })
          .Case([&](tg::LinearOp o) {
            auto weight = shapeOf(o.getWeight());
            return call("  kernels::linear(" + p(o.getInput()) + ", " +
                        p(o.getWeight()) + ", " + p(o.getBias()) + ", " +
                        p(o.getResult()) + ", " +
                        std::to_string(numElements(o.getInput()) / weight[0]) +
                        ", " + std::to_string(weight[0]) + ", " +
                        std::to_string(weight[1]) + ", " + b(o.getRelu()) +
                        ");\n");
          })
          .Case([&](tg::TransposeOp o) {
            auto shape = shapeOf(o.getInput());
            return call("  const int64_t shape[] = " + arrayLiteral(shape) +
                        ";\n  const int64_t permutation[] = " +
                        arrayLiteral(o.getPermutation()) +
                        ";\n  kernels::transpose(" + p(o.getInput()) + ", " +
                        p(o.getResult()) + ", shape, permutation, " +
                        std::to_string(shape.size()) + ");\n");
          })
          .Case([&](tg::BroadcastOp o) {
            auto shape = shapeOf(o.getResult());
            auto input = shapeOf(o.getInput());
            bool scalar = o.getDims().empty();
            return call(
                "  const int64_t shape[] = " + arrayLiteral(shape) + ";\n" +
                (scalar ? std::string()
                        : "  const int64_t dims[] = " +
                              arrayLiteral(o.getDims()) +
                              ";\n  const int64_t inputShape[] = " +
                              arrayLiteral(input) + ";\n") +
                "  kernels::broadcast(" + p(o.getInput()) + ", " +
                p(o.getResult()) + ", shape, " + std::to_string(shape.size()) +
                (scalar ? ", nullptr, nullptr, 0" : ", dims, inputShape, " +
                          std::to_string(input.size())) + ");\n");
          })
          .Case([&](tg::ReduceSumOp o) {
            return call(reduction(p, o, o.getInput(), o.getDims(), "Sum"));
          })
          .Case([&](tg::ReduceMaxOp o) {
            return call(reduction(p, o, o.getInput(), o.getDims(), "Max"));
          })
          .Case([&](tg::ReduceMeanOp o) {
            return call(reduction(p, o, o.getInput(), o.getDims(), "Mean"));
          })
          .Case([&](tg::EmbeddingOp o) {
            auto table = shapeOf(o.getTable());
            return call("  kernels::embedding(" + p(o.getTable()) + ", " +
                        p(o.getIds()) + ", " + p(o.getResult()) + ", " +
                        std::to_string(numElements(o.getIds())) + ", " +
                        std::to_string(table[1]) + ");\n");
          })
          .Case([&](tg::EmbeddingGradOp o) {
            auto table = shapeOf(o.getResult());
            return call("  kernels::embeddingGrad(" + p(o.getGrad()) + ", " +
                        p(o.getIds()) + ", " + p(o.getResult()) + ", " +
                        std::to_string(numElements(o.getIds())) + ", " +
                        std::to_string(table[1]) + ", " +
                        std::to_string(table[0]) + ");\n");
          })
          .Case([&](tg::PositionalEncodingOp o) {
            auto shape = shapeOf(o.getResult());
            std::string first =
                o.getOffset() ? ", " + p.position(o.getOffset()) : "";
            return call("  kernels::positionalEncoding(" + p(o.getResult()) +
                        ", " + std::to_string(shape[0]) + ", " +
                        std::to_string(shape[1]) + first + ");\n");
          })
          .Case([&](tg::PaddingMaskOp o) {
            return call("  kernels::paddingMask(" + p(o.getIds()) + ", " +
                        p(o.getResult()) + ", " +
                        std::to_string(numElements(o.getIds())) + ", " +
                        std::to_string(o.getPadIdAttr().getInt()) + ");\n");
          })
          .Case([&](tg::CausalMaskOp o) {
            return call("  kernels::causalMask(" + p(o.getResult()) + ", " +
                        std::to_string(shapeOf(o.getResult())[0]) + ");\n");
          })
          .Case([&](tg::SoftmaxOp o) -> LogicalResult {
            if (o.getAxis() != static_cast<int64_t>(shapeOf(o.getInput()).size()) - 1)
              return o.emitOpError()
                     << "is over axis " << o.getAxis()
                     << "; the C++ backend supports the last axis only";
            return call("  kernels::softmax(" + p(o.getInput()) + ", " +
                        p(o.getResult()) + ", " + rowsWidth(o.getInput()) +
                        ");\n");
          })
          .Case([&](tg::SoftmaxGradOp o) -> LogicalResult {
            if (o.getAxis() != static_cast<int64_t>(shapeOf(o.getOutput()).size()) - 1)
              return o.emitOpError()
                     << "is over axis " << o.getAxis()
                     << "; the C++ backend supports the last axis only";
            return call("  kernels::softmaxGrad(" + p(o.getOutput()) + ", " +
                        p(o.getGrad()) + ", " + p(o.getResult()) + ", " +
                        rowsWidth(o.getOutput()) + ");\n");
          })
          .Case([&](tg::LayerNormOp o) {
            return call("  kernels::layerNorm(" + p(o.getInput()) + ", " +
                        p(o.getGamma()) + ", " + p(o.getBeta()) + ", " +
                        p(o.getResult()) + ", nullptr, nullptr, " +
                        rowsWidth(o.getInput()) + ", " +
                        floatLiteral(o.getEpsilon().convertToFloat()) + ");\n");
          })
          .Case([&](tg::LayerNormGradOp o) {
            return call("  kernels::layerNormGrad(" + p(o.getGrad()) + ", " +
                        p(o.getInput()) + ", " + p(o.getGamma()) + ", " +
                        p(o.getInputGrad()) + ", " + p(o.getGammaGrad()) +
                        ", " + p(o.getBetaGrad()) + ", " +
                        rowsWidth(o.getInput()) + ", " +
                        floatLiteral(o.getEpsilon().convertToFloat()) + ");\n");
          })
          .Case([&](tg::ResidualLayerNormOp o) {
            return call("  kernels::residualLayerNorm(" + p(o.getResidual()) +
                        ", " + p(o.getSublayer()) + ", " + p(o.getGamma()) +
                        ", " + p(o.getBeta()) + ", " + p(o.getResult()) +
                        ", " + p(o.getMean()) + ", " + p(o.getRstd()) + ", " +
                        rowsWidth(o.getResidual()) + ", " +
                        dropout(p, o.getKey(), o.getRate(), o.getOpId()) +
                        ", " + floatLiteral(o.getEpsilon().convertToFloat()) +
                        ");\n");
          })
          .Case([&](tg::ResidualLayerNormGradOp o) {
            return call("  kernels::residualLayerNormGrad(" + p(o.getGrad()) +
                        ", " + p(o.getResidual()) + ", " + p(o.getSublayer()) +
                        ", " + p(o.getGamma()) + ", " + p(o.getMean()) + ", " +
                        p(o.getRstd()) + ", " + p(o.getResidualGrad()) + ", " +
                        p(o.getSublayerGrad()) + ", " + p(o.getGammaGrad()) +
                        ", " + p(o.getBetaGrad()) + ", " +
                        rowsWidth(o.getResidual()) + ", " +
                        dropout(p, o.getKey(), o.getRate(), o.getOpId()) +
                        ");\n");
          })
          .Case([&](tg::AttentionOp o) {
            return call(attentionSetup(p, o) + "  kernels::attention(" +
                        p(o.getQuery()) + ", " + p(o.getKeyIn()) + ", " +
                        p(o.getValue()) + ", " + p(o.getOutput()) + ", " +
                        p(o.getLse()) + ", shape, config);\n");
          })
          .Case([&](tg::AttentionGradOp o) {
            return call(attentionSetup(p, o) + "  kernels::attentionGrad(" +
                        p(o.getGrad()) + ", " + p(o.getQuery()) + ", " +
                        p(o.getKeyIn()) + ", " + p(o.getValue()) + ", " +
                        p(o.getOutput()) + ", " + p(o.getLse()) + ", " +
                        p(o.getQueryGrad()) + ", " + p(o.getKeyGrad()) + ", " +
                        p(o.getValueGrad()) + ", shape, config);\n");
          })
          .Case([&](tg::CrossEntropyOp o) {
            return call("  kernels::crossEntropy(" + p(o.getLogits()) + ", " +
                        p(o.getTargets()) + ", " + p(o.getLoss()) + ", " +
                        p(o.getTokens()) + ", " + rowsWidth(o.getLogits()) +
                        ", " +
                        floatLiteral(o.getSmoothing().convertToFloat()) +
                        ", " +
                        std::to_string(o.getIgnoreIndexAttr().getInt()) +
                        ");\n");
          })
          .Case([&](tg::CrossEntropyGradOp o) {
            auto lossGrad = context.hostPointer(o.getLossGrad());
            if (failed(lossGrad))
              return failure();
            return call("  kernels::crossEntropyGrad(*" + *lossGrad +
                        ", " + p(o.getLogits()) + ", " + p(o.getTargets()) +
                        ", " + p(o.getResult()) + ", " +
                        rowsWidth(o.getLogits()) + ", " +
                        floatLiteral(o.getSmoothing().convertToFloat()) +
                        ", " +
                        std::to_string(o.getIgnoreIndexAttr().getInt()) +
                        ");\n");
          })
          .Case([&](tg::StoreOp o) {
            return call(context.copy(context.variableAddress(o.getVariable()),
                                     p(o.getValue()),
                                     numElements(o.getValue()) * 4) +
                        "\n");
          })
          .Case([&](tg::StoreSliceOp o) {
            auto shape = shapeOf(o.getValue());
            int64_t axis = o.getAxis();
            auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
                o, o.getVariableAttr());
            int64_t extent = variable.getTensorType().getShape()[axis];
            return call("  kernels::storeSlice(" +
                        context.variableAddress(o.getVariable()) + ", " +
                        p(o.getValue()) + ", " +
                        std::to_string(product(shape.take_front(axis))) + ", " +
                        std::to_string(shape[axis]) + ", " +
                        std::to_string(extent) + ", " +
                        std::to_string(product(shape.drop_front(axis + 1))) +
                        ", " + p.position(o.getIndex()) + ");\n");
          })
          .Case([&](tg::AdamUpdateOp o) {
            return adamCall(adamEntry(p, context.variableOffsets(), context.stateBase(),
                                      o.getParam(), o.getMoment1(),
                                      o.getMoment2(), o.getGrad()),
                            1, o.getLr(), o.getStep(), o.getBeta1(),
                            o.getBeta2(), o.getEpsilon());
          })
          .Case([&](tg::MultiAdamUpdateOp o) {
            std::string entries;
            auto name = [](Attribute ref) {
              return llvm::cast<FlatSymbolRefAttr>(ref).getValue();
            };
            for (auto [param, m, v, grad] :
                 llvm::zip(o.getParams(), o.getMoments1(), o.getMoments2(),
                           o.getGrads()))
              entries += adamEntry(p, context.variableOffsets(), context.stateBase(), name(param),
                                   name(m), name(v), grad);
            return adamCall(entries, static_cast<int>(o.getGrads().size()),
                            o.getLr(), o.getStep(), o.getBeta1(),
                            o.getBeta2(), o.getEpsilon());
          })
          .Default([](Operation *o) {
            return o->emitOpError() << "is not supported by the C++ emitter";
          });
  if (failed(result) || !p.ok)
    return failure();
  os << code;
  return success();
}

} // namespace tgc::cpp
