//===- Ops.h - the DSL's tensor operations -----------------------*- C++ -*-===//
//
// Each op checks its operands' shapes when the graph is built; a violation is
// reported at the caller's file:line with the shapes involved and abandons the
// build (see Builder::fail). Elementwise operators broadcast numpy-style
// (trailing dimensions aligned, size-1 or missing dimensions replicated).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_OPS_H
#define TGC_FRONTEND_OPS_H

#include "frontend/Builder.h"
#include "frontend/Tensor.h"

#include <vector>

namespace tgc {

using Where = std::source_location;

// Elementwise arithmetic, with broadcasting.
Tensor operator+(Tensor lhs, Located rhs);
Tensor operator-(Tensor lhs, Located rhs);
Tensor operator*(Tensor lhs, Located rhs);
Tensor operator/(Tensor lhs, Located rhs);
Tensor operator-(Located input);
// ... with a number on either side: `x + 1.0`, `2.0 * x`, `1.0 - x`.
Tensor operator+(Tensor lhs, LocatedScalar rhs);
Tensor operator-(Tensor lhs, LocatedScalar rhs);
Tensor operator*(Tensor lhs, LocatedScalar rhs);
Tensor operator/(Tensor lhs, LocatedScalar rhs);
Tensor operator+(double lhs, Located rhs);
Tensor operator-(double lhs, Located rhs);
Tensor operator*(double lhs, Located rhs);
Tensor operator/(double lhs, Located rhs);

/// A tensor of `shape` whose elements are all `value` (written into the
/// loops that read it, never stored element by element).
Tensor constant(double value, llvm::ArrayRef<int64_t> shape,
                Where where = Where::current());
/// 0, 1, 2, ... along `dim`, the same along the other dimensions (f32).
Tensor iota(llvm::ArrayRef<int64_t> shape, int64_t dim,
            Where where = Where::current());

/// x^p elementwise (NaN for a negative x and a non-integer p).
Tensor pow(Tensor input, double exponent, Where where = Where::current());
/// Elementwise max / min, with broadcasting; tied elements share the
/// gradient.
Tensor maximum(TensorOrScalar a, TensorOrScalar b,
               Where where = Where::current());
Tensor minimum(TensorOrScalar a, TensorOrScalar b,
               Where where = Where::current());
// Comparisons, with broadcasting: a mask of 1.0 where the relation holds
// and 0.0 elsewhere (no gradient flows through a mask).
Tensor less(TensorOrScalar a, TensorOrScalar b, Where where = Where::current());
Tensor lessEqual(TensorOrScalar a, TensorOrScalar b,
                 Where where = Where::current());
Tensor greater(TensorOrScalar a, TensorOrScalar b,
               Where where = Where::current());
Tensor greaterEqual(TensorOrScalar a, TensorOrScalar b,
                    Where where = Where::current());
Tensor equal(TensorOrScalar a, TensorOrScalar b, Where where = Where::current());
Tensor notEqual(TensorOrScalar a, TensorOrScalar b,
                Where where = Where::current());
/// onTrue where `mask` is non-zero, else onFalse, with broadcasting.
Tensor where(Tensor mask, TensorOrScalar onTrue, TensorOrScalar onFalse,
             Where at = Where::current());
Tensor scale(Tensor input, double factor, Where where = Where::current());
Tensor relu(Tensor input, Where where = Where::current());
Tensor exp(Tensor input, Where where = Where::current());
Tensor log(Tensor input, Where where = Where::current());
Tensor sqrt(Tensor input, Where where = Where::current());
Tensor rsqrt(Tensor input, Where where = Where::current());
Tensor tanh(Tensor input, Where where = Where::current());
Tensor sigmoid(Tensor input, Where where = Where::current());
/// x * sigmoid(x) (SiLU, LLaMA's gated FFN).
Tensor silu(Tensor input, Where where = Where::current());
/// x Phi(x): the exact (erf) form, or with `tanhApprox` GPT-2's tanh form.
Tensor gelu(Tensor input, bool tanhApprox = false,
            Where where = Where::current());
Tensor abs(Tensor input, Where where = Where::current());
/// The input, through which no gradient flows (tg.stop_gradient).
Tensor stopGradient(Tensor input, Where where = Where::current());

/// a @ b (batched over leading dimensions; `b` may be a shared matrix), or
/// a @ b^T with `transposeB`.
Tensor matmul(Tensor a, Tensor b, bool transposeB = false,
              Where where = Where::current());

// Shapes.
Tensor reshape(Tensor input, llvm::ArrayRef<int64_t> shape,
               Where where = Where::current());
Tensor transpose(Tensor input, llvm::ArrayRef<int64_t> permutation,
                 Where where = Where::current());
/// Numpy-style broadcast of `input` to `shape`.
Tensor broadcastTo(Tensor input, llvm::ArrayRef<int64_t> shape,
                   Where where = Where::current());
/// Broadcast with an explicit map: input dimension i becomes dims[i].
Tensor broadcast(Tensor input, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> dims, Where where = Where::current());
Tensor reduceSum(Tensor input, llvm::ArrayRef<int64_t> dims,
                 bool keepDims = false, Where where = Where::current());
Tensor reduceMax(Tensor input, llvm::ArrayRef<int64_t> dims,
                 bool keepDims = false, Where where = Where::current());
/// The minimum, as -reduceMax(-x): ties share the gradient.
Tensor reduceMin(Tensor input, llvm::ArrayRef<int64_t> dims,
                 bool keepDims = false, Where where = Where::current());
Tensor reduceMean(Tensor input, llvm::ArrayRef<int64_t> dims,
                  bool keepDims = false, Where where = Where::current());

// Slices, concatenation and gathers along dimension `dim` (negative: from
// the end).
/// Elements [start, start + size) of `input` along `dim`.
Tensor slice(Tensor input, int64_t dim, int64_t start, int64_t size,
             Where where = Where::current());
/// The inputs one after the other along `dim`; they have one shape in every
/// other dimension.
Tensor concat(llvm::ArrayRef<Tensor> inputs, int64_t dim,
              Where where = Where::current());
/// `n` equal consecutive slices of `input` along `dim`, whose size `n` must
/// divide.
std::vector<Tensor> split(Tensor input, int64_t dim, int64_t n,
                          Where where = Where::current());
/// input[..., indices[...], ...] along `dim` (numpy take, tf.gather): the
/// result's shape is input's with dimension `dim` replaced by the i32
/// indices' shape.
Tensor gather(Tensor input, Tensor indices, int64_t dim,
              Where where = Where::current());

// Transformer building blocks.
Tensor softmax(Tensor input, int64_t axis = -1, Where where = Where::current());
Tensor layerNorm(Tensor input, Tensor gamma, Tensor beta,
                 double epsilon = 1e-6, Where where = Where::current());
/// gamma * x / sqrt(mean(x^2) + epsilon) over the last dimension: LayerNorm
/// without centring and without beta.
Tensor rmsNorm(Tensor input, Tensor gamma, double epsilon = 1e-6,
               Where where = Where::current());
/// Inverted dropout keyed by the step's dropout key and a fresh op id; the
/// identity (no op) when `rate` is 0.
Tensor dropout(Tensor input, double rate, Where where = Where::current());
Tensor embedding(Tensor table, Tensor ids, Where where = Where::current());
Tensor causalMask(Builder &b, int64_t length, Where where = Where::current());
Tensor paddingMask(Tensor ids, int32_t padId, Where where = Where::current());
Tensor positionalEncoding(Builder &b, int64_t length, int64_t dModel,
                          Where where = Where::current());
/// Rotary position embedding of q or k [..., S, D] (positions along S, D
/// even), GPT-NeoX / LLaMA "rotate half": position s turns the pairs
/// (x[i], x[i + D/2]) by s * base^(-2i/D).
Tensor rotary(Tensor input, double base = 10000.0,
              Where where = Where::current());

struct LossAndTokens {
  Tensor loss;   // mean over counted positions
  Tensor tokens; // number of counted (non-ignored) positions
};
LossAndTokens crossEntropy(Tensor logits, Tensor targets, double smoothing,
                           int32_t ignoreIndex, Where where = Where::current());

} // namespace tgc

#endif // TGC_FRONTEND_OPS_H
