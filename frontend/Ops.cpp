//===- Ops.cpp - the DSL's tensor operations -----------------------------===//
#include "frontend/Ops.h"

#include "ir/TgOps.h"
#include "ir/TgVerify.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace tgc {

using tg::formatShape;

namespace {
/// Checks shared by every op: operands come from one builder and have the
/// element type the op needs.
Builder &builderOf(Tensor t, Where where) {
  // An unset Tensor is a programming error in the model, caught before any
  // op is created; it has no builder of its own to report through.
  if (!t)
    Builder::failBuilding(where, "an unset Tensor is used");
  // By number: another graph's Builder may be gone (a tensor kept from an
  // earlier bucket's build), its address taken by the current one.
  Builder &current = Builder::current(where);
  if (t.graph() != current.graph())
    current.fail(where, "a tensor of another graph is used (kept from an "
                        "earlier buildGraph, e.g. an earlier bucket's build)");
  return current;
}

void expectFloat(Tensor t, llvm::StringRef op, llvm::StringRef what,
                 Where where) {
  builderOf(t, where);
  if (t.dtype() != DType::F32)
    t.builder().fail(where, op + ": " + what + " must be f32 but is i32 " +
                                formatShape(t.shape()));
}

void expectIds(Tensor t, llvm::StringRef op, Where where,
               llvm::StringRef what = "token ids") {
  builderOf(t, where);
  if (t.dtype() != DType::I32)
    t.builder().fail(where, op + ": " + what + " must be i32 but are f32 " +
                                formatShape(t.shape()));
}

/// `axis` (negative: from the end) as a dimension of `t`; `name` is what
/// the op calls it.
int64_t normalizeAxis(Tensor t, int64_t axis, llvm::StringRef op, Where where,
                      llvm::StringRef name = "axis") {
  int64_t rank = t.rank();
  if (axis < -rank || axis >= rank)
    t.builder().fail(where, op + ": " + name + " " + llvm::Twine(axis) +
                                " is out of range for shape " +
                                formatShape(t.shape()));
  return axis < 0 ? axis + rank : axis;
}

/// The numpy broadcast of two shapes, or nothing if they do not broadcast.
std::optional<SmallVector<int64_t>> broadcastShape(llvm::ArrayRef<int64_t> a,
                                                   llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = std::max(da, db);
  }
  return result;
}

template <typename OpT>
Tensor elementwise(Tensor lhs, Located rhs, llvm::StringRef symbol) {
  Builder &b = builderOf(lhs, rhs.where);
  builderOf(rhs.tensor, rhs.where);
  expectFloat(lhs, symbol, "lhs", rhs.where);
  expectFloat(rhs.tensor, symbol, "rhs", rhs.where);
  auto shape = broadcastShape(lhs.shape(), rhs.tensor.shape());
  if (!shape)
    b.fail(rhs.where, llvm::Twine("shapes ") + formatShape(lhs.shape()) + " " +
                          symbol + " " + formatShape(rhs.tensor.shape()) +
                          " do not broadcast");
  Tensor l = broadcastTo(lhs, *shape, rhs.where);
  Tensor r = broadcastTo(rhs.tensor, *shape, rhs.where);
  return b.wrap(b.ops().create<OpT>(b.location(rhs.where), l.value(), r.value()));
}

/// The f32 type of a tensor the DSL makes from nothing (constant, iota):
/// positive dimensions, and an element count that fits the machine.
RankedTensorType madeType(Builder &b, llvm::ArrayRef<int64_t> shape,
                          llvm::StringRef name, Where where) {
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim <= 0)
      b.fail(where, name + ": shape " + formatShape(shape) +
                        " needs positive dimensions");
    if (count > kMaxElements / dim)
      b.fail(where, name + ": shape " + formatShape(shape) +
                        " has more than 2^40 elements");
    count *= dim;
  }
  return b.tensorType(shape, DType::F32);
}

/// The tensor of `operand`, or its number as a constant of `shape`.
Tensor tensorOf(const TensorOrScalar &operand, llvm::ArrayRef<int64_t> shape,
                Where where) {
  return operand.tensor ? operand.tensor
                        : constant(operand.scalar, shape, where);
}

/// A binary elementwise op of which one operand may be a number.
template <typename OpT>
Tensor mixed(const TensorOrScalar &a, const TensorOrScalar &b,
             llvm::StringRef name, Where where) {
  if (!a.tensor && !b.tensor)
    Builder::failBuilding(where, name + ": at least one operand must be a "
                                        "tensor");
  llvm::ArrayRef<int64_t> shape = (a.tensor ? a.tensor : b.tensor).shape();
  return elementwise<OpT>(tensorOf(a, shape, where),
                          Located(tensorOf(b, shape, where), where), name);
}

template <typename OpT>
Tensor unary(Tensor input, llvm::StringRef name, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, name, "input", where);
  return b.wrap(b.ops().create<OpT>(b.location(where), input.value()));
}

/// `dims` of `input` (an f32 tensor), normalized and sorted; a failure
/// names `name`, the op the model wrote.
SmallVector<int64_t> reductionAxes(Tensor input, llvm::ArrayRef<int64_t> dims,
                                   llvm::StringRef name, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, name, "input", where);
  SmallVector<int64_t> axes;
  for (int64_t dim : dims)
    axes.push_back(normalizeAxis(input, dim, name, where));
  llvm::sort(axes);
  if (axes.empty() || std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    b.fail(where, name + ": dims " + formatShape(dims) +
                      " must be non-empty and distinct");
  return axes;
}

template <typename OpT>
Tensor reduce(Tensor input, llvm::ArrayRef<int64_t> dims, bool keepDims,
              llvm::StringRef name, Where where) {
  Builder &b = builderOf(input, where);
  SmallVector<int64_t> axes = reductionAxes(input, dims, name, where);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < input.rank(); ++i) {
    if (!llvm::is_contained(axes, i))
      shape.push_back(input.dim(i));
    else if (keepDims)
      shape.push_back(1);
  }
  return b.wrap(b.ops().create<OpT>(
      b.location(where), b.tensorType(shape, DType::F32), input.value(),
      b.ops().getDenseI64ArrayAttr(axes), keepDims));
}
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Tensor operator+(Tensor lhs, Located rhs) {
  return elementwise<tg::AddOp>(lhs, rhs, "+");
}
Tensor operator-(Tensor lhs, Located rhs) {
  return elementwise<tg::SubOp>(lhs, rhs, "-");
}
Tensor operator*(Tensor lhs, Located rhs) {
  return elementwise<tg::MulOp>(lhs, rhs, "*");
}
Tensor operator/(Tensor lhs, Located rhs) {
  return elementwise<tg::DivOp>(lhs, rhs, "/");
}
Tensor operator-(Located input) {
  return unary<tg::NegOp>(input.tensor, "negation", input.where);
}
Tensor operator+(Tensor lhs, LocatedScalar rhs) {
  return lhs + Located(constant(rhs.value, lhs.shape(rhs.where), rhs.where),
                       rhs.where);
}
Tensor operator-(Tensor lhs, LocatedScalar rhs) {
  return lhs - Located(constant(rhs.value, lhs.shape(rhs.where), rhs.where),
                       rhs.where);
}
Tensor operator*(Tensor lhs, LocatedScalar rhs) {
  // A finite factor is tg.scale: one op, and its own gradient rule.
  if (std::isfinite(rhs.value))
    return scale(lhs, rhs.value, rhs.where);
  return lhs * Located(constant(rhs.value, lhs.shape(rhs.where), rhs.where),
                       rhs.where);
}
Tensor operator/(Tensor lhs, LocatedScalar rhs) {
  return lhs / Located(constant(rhs.value, lhs.shape(rhs.where), rhs.where),
                       rhs.where);
}
Tensor operator+(double lhs, Located rhs) {
  return constant(lhs, rhs.tensor.shape(rhs.where), rhs.where) + rhs;
}
Tensor operator-(double lhs, Located rhs) {
  return constant(lhs, rhs.tensor.shape(rhs.where), rhs.where) - rhs;
}
Tensor operator*(double lhs, Located rhs) {
  return rhs.tensor * LocatedScalar(lhs, rhs.where);
}
Tensor operator/(double lhs, Located rhs) {
  return constant(lhs, rhs.tensor.shape(rhs.where), rhs.where) / rhs;
}

Tensor constant(double value, llvm::ArrayRef<int64_t> shape, Where where) {
  Builder &b = Builder::current(where);
  RankedTensorType type = madeType(b, shape, "constant", where);
  return b.wrap(b.ops().create<tg::ConstantOp>(
      b.location(where),
      DenseElementsAttr::get(type, static_cast<float>(value))));
}

Tensor iota(llvm::ArrayRef<int64_t> shape, int64_t dim, Where where) {
  Builder &b = Builder::current(where);
  int64_t rank = static_cast<int64_t>(shape.size());
  if (dim < -rank || dim >= rank)
    b.fail(where, "iota: dim " + llvm::Twine(dim) +
                      " is out of range for shape " + formatShape(shape));
  dim = dim < 0 ? dim + rank : dim;
  RankedTensorType type = madeType(b, shape, "iota", where);
  // Its elements are stored in the program: bounded like a table.
  constexpr int64_t kMaxElements = int64_t(1) << 24;
  if (type.getNumElements() > kMaxElements)
    b.fail(where, "iota: " + formatShape(shape) + " has more than " +
                      llvm::Twine(kMaxElements) +
                      " elements; make a smaller one and broadcast it");
  int64_t inner = 1;
  for (int64_t i = dim + 1; i < rank; ++i)
    inner *= shape[i];
  SmallVector<float> values(type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    values[i] = static_cast<float>((i / inner) % shape[dim]);
  return b.wrap(b.ops().create<tg::ConstantOp>(
      b.location(where), DenseElementsAttr::get(type, llvm::ArrayRef(values))));
}

Tensor pow(Tensor input, double exponent, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "pow", "input", where);
  if (!std::isfinite(exponent))
    b.fail(where, "pow: the exponent must be finite");
  return b.wrap(b.ops().create<tg::PowOp>(
      b.location(where), input.value(),
      b.ops().getF32FloatAttr(static_cast<float>(exponent))));
}
Tensor maximum(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::MaximumOp>(a, b, "maximum", where);
}
Tensor minimum(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::MinimumOp>(a, b, "minimum", where);
}
Tensor less(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::LessOp>(a, b, "less", where);
}
Tensor lessEqual(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::LessEqualOp>(a, b, "lessEqual", where);
}
Tensor greater(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::GreaterOp>(a, b, "greater", where);
}
Tensor greaterEqual(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::GreaterEqualOp>(a, b, "greaterEqual", where);
}
Tensor equal(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::EqualOp>(a, b, "equal", where);
}
Tensor notEqual(TensorOrScalar a, TensorOrScalar b, Where where) {
  return mixed<tg::NotEqualOp>(a, b, "notEqual", where);
}

Tensor where(Tensor mask, TensorOrScalar onTrue, TensorOrScalar onFalse,
             Where at) {
  Builder &b = builderOf(mask, at);
  expectFloat(mask, "where", "mask", at);
  // The three shapes broadcast together; numbers take the result's shape.
  SmallVector<int64_t> shape(mask.shape());
  for (const TensorOrScalar *operand : {&onTrue, &onFalse}) {
    if (!operand->tensor)
      continue;
    builderOf(operand->tensor, at);
    expectFloat(operand->tensor, "where", "operand", at);
    auto joint = broadcastShape(shape, operand->tensor.shape());
    if (!joint)
      b.fail(at, "where: shapes " + formatShape(mask.shape()) + ", " +
                     formatShape((onTrue.tensor ? onTrue.tensor : mask).shape()) +
                     " and " +
                     formatShape((onFalse.tensor ? onFalse.tensor : mask).shape()) +
                     " do not broadcast");
    shape = *joint;
  }
  auto full = [&](const TensorOrScalar &operand) {
    return broadcastTo(tensorOf(operand, shape, at), shape, at).value();
  };
  return b.wrap(b.ops().create<tg::WhereOp>(
      b.location(at), broadcastTo(mask, shape, at).value(), full(onTrue),
      full(onFalse)));
}

Tensor relu(Tensor input, Where where) {
  return unary<tg::ReluOp>(input, "relu", where);
}
Tensor exp(Tensor input, Where where) {
  return unary<tg::ExpOp>(input, "exp", where);
}
Tensor log(Tensor input, Where where) {
  return unary<tg::LogOp>(input, "log", where);
}
Tensor sqrt(Tensor input, Where where) {
  return unary<tg::SqrtOp>(input, "sqrt", where);
}
Tensor rsqrt(Tensor input, Where where) {
  return unary<tg::RsqrtOp>(input, "rsqrt", where);
}
Tensor tanh(Tensor input, Where where) {
  return unary<tg::TanhOp>(input, "tanh", where);
}
Tensor sigmoid(Tensor input, Where where) {
  return unary<tg::SigmoidOp>(input, "sigmoid", where);
}
Tensor silu(Tensor input, Where where) {
  Tensor gate = unary<tg::SigmoidOp>(input, "silu", where);
  return elementwise<tg::MulOp>(input, Located(gate, where), "silu");
}
Tensor gelu(Tensor input, bool tanhApprox, Where where) {
  return tanhApprox ? unary<tg::GeluTanhOp>(input, "gelu", where)
                    : unary<tg::GeluOp>(input, "gelu", where);
}
Tensor abs(Tensor input, Where where) {
  return unary<tg::AbsOp>(input, "abs", where);
}
Tensor stopGradient(Tensor input, Where where) {
  return unary<tg::StopGradientOp>(input, "stopGradient", where);
}

Tensor scale(Tensor input, double factor, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "scale", "input", where);
  if (!std::isfinite(factor))
    b.fail(where, "scale: the factor must be finite");
  return b.wrap(b.ops().create<tg::ScaleOp>(
      b.location(where), input.value(),
      b.ops().getF32FloatAttr(static_cast<float>(factor))));
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

Tensor matmul(Tensor a, Tensor b, bool transposeB, Where where) {
  Builder &builder = builderOf(a, where);
  builderOf(b, where);
  expectFloat(a, "matmul", "lhs", where);
  expectFloat(b, "matmul", "rhs", where);
  auto mismatch = [&](llvm::StringRef why) {
    builder.fail(where, llvm::Twine("matmul") +
                            (transposeB ? " (transposeB)" : "") + ": " + why +
                            ": lhs " + formatShape(a.shape()) + ", rhs " +
                            formatShape(b.shape()));
  };
  if (a.rank() < 2 || b.rank() < 2)
    mismatch("operands need rank >= 2");
  if (b.rank() != 2 && b.shape().drop_back(2) != a.shape().drop_back(2))
    mismatch("rhs must be a matrix or share lhs's batch dimensions");
  int64_t k = transposeB ? b.dim(-1) : b.dim(-2);
  if (a.dim(-1) != k)
    mismatch("contraction sizes differ");
  SmallVector<int64_t> shape(a.shape().drop_back());
  shape.push_back(transposeB ? b.dim(-2) : b.dim(-1));
  return builder.wrap(builder.ops().create<tg::MatmulOp>(
      builder.location(where), builder.tensorType(shape, DType::F32),
      a.value(), b.value(), /*transpose_lhs=*/false, transposeB));
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

Tensor reshape(Tensor input, llvm::ArrayRef<int64_t> shape, Where where) {
  Builder &b = builderOf(input, where);
  int64_t from = 1, to = 1;
  for (int64_t d : input.shape())
    from *= d;
  // Checked as it multiplies: a product that wraps past 2^63 could come
  // back to the input's count ([2^60 + 1, 1024] of 1024 elements).
  bool wraps = false;
  for (int64_t d : shape)
    wraps |= d > 0 && __builtin_mul_overflow(to, d, &to);
  if (wraps || from != to ||
      llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    b.fail(where, "reshape: " + formatShape(input.shape()) + " (" +
                      llvm::Twine(from) + " elements) cannot become " +
                      formatShape(shape));
  if (input.shape() == shape)
    return input;
  return b.wrap(b.ops().create<tg::ReshapeOp>(
      b.location(where), b.tensorType(shape, input.dtype()), input.value()));
}

Tensor transpose(Tensor input, llvm::ArrayRef<int64_t> permutation,
                 Where where) {
  Builder &b = builderOf(input, where);
  SmallVector<int64_t> sorted(permutation);
  llvm::sort(sorted);
  bool valid = static_cast<int64_t>(permutation.size()) == input.rank();
  for (size_t i = 0; valid && i < sorted.size(); ++i)
    valid = sorted[i] == static_cast<int64_t>(i);
  if (!valid)
    b.fail(where, "transpose: " + formatShape(permutation) +
                      " is not a permutation of the dimensions of " +
                      formatShape(input.shape()));
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(input.dim(p));
  return b.wrap(b.ops().create<tg::TransposeOp>(
      b.location(where), b.tensorType(shape, input.dtype()), input.value(),
      b.ops().getDenseI64ArrayAttr(permutation)));
}

Tensor broadcast(Tensor input, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> dims, Where where) {
  Builder &b = builderOf(input, where);
  bool valid = static_cast<int64_t>(dims.size()) == input.rank() &&
               llvm::all_of(shape, [](int64_t size) { return size >= 1; });
  for (size_t i = 0; valid && i < dims.size(); ++i)
    valid = dims[i] >= 0 && dims[i] < static_cast<int64_t>(shape.size()) &&
            (i == 0 || dims[i] > dims[i - 1]) &&
            (input.dim(i) == 1 || input.dim(i) == shape[dims[i]]);
  if (!valid)
    b.fail(where, "broadcast: " + formatShape(input.shape()) +
                      " cannot be broadcast to " + formatShape(shape) +
                      " along dims " + formatShape(dims));
  if (input.shape() == shape)
    return input;
  return b.wrap(b.ops().create<tg::BroadcastOp>(
      b.location(where), b.tensorType(shape, input.dtype()), input.value(),
      b.ops().getDenseI64ArrayAttr(dims)));
}

Tensor broadcastTo(Tensor input, llvm::ArrayRef<int64_t> shape, Where where) {
  Builder &b = builderOf(input, where);
  int64_t offset = static_cast<int64_t>(shape.size()) - input.rank();
  if (offset < 0)
    b.fail(where, "broadcast: " + formatShape(input.shape()) +
                      " has more dimensions than " + formatShape(shape));
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < input.rank(); ++i)
    dims.push_back(offset + i);
  return broadcast(input, shape, dims, where);
}

Tensor reduceSum(Tensor input, llvm::ArrayRef<int64_t> dims, bool keepDims,
                 Where where) {
  return reduce<tg::ReduceSumOp>(input, dims, keepDims, "reduceSum", where);
}
Tensor reduceMax(Tensor input, llvm::ArrayRef<int64_t> dims, bool keepDims,
                 Where where) {
  return reduce<tg::ReduceMaxOp>(input, dims, keepDims, "reduceMax", where);
}
Tensor reduceMin(Tensor input, llvm::ArrayRef<int64_t> dims, bool keepDims,
                 Where where) {
  // Checked here, so that an error names reduceMin, not what it is made of.
  reductionAxes(input, dims, "reduceMin", where);
  return -Located(reduceMax(-Located(input, where), dims, keepDims, where),
                  where);
}
Tensor reduceMean(Tensor input, llvm::ArrayRef<int64_t> dims, bool keepDims,
                  Where where) {
  return reduce<tg::ReduceMeanOp>(input, dims, keepDims, "reduceMean", where);
}

//===----------------------------------------------------------------------===//
// Slices, concatenation and gathers
//===----------------------------------------------------------------------===//

Tensor slice(Tensor input, int64_t dim, int64_t start, int64_t size,
             Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "slice", "input", where);
  int64_t d = normalizeAxis(input, dim, "slice", where, "dim");
  // `size > dim - start`, not `start + size > dim`: a huge size would wrap.
  if (start < 0 || size < 1 || start > input.dim(d) ||
      size > input.dim(d) - start)
    b.fail(where, "slice: elements [" + llvm::Twine(start) + ", " +
                      (size > std::numeric_limits<int64_t>::max() - start
                           ? llvm::Twine("2^63 and beyond")
                           : llvm::Twine(start + size)) +
                      ") along dim " + llvm::Twine(dim) +
                      " are not a non-empty part of [0, " +
                      llvm::Twine(input.dim(d)) + ") (input " +
                      formatShape(input.shape()) + ")");
  if (size == input.dim(d))
    return input;
  SmallVector<int64_t> shape(input.shape());
  shape[d] = size;
  return b.wrap(b.ops().create<tg::SliceOp>(
      b.location(where), b.tensorType(shape, DType::F32), input.value(), d,
      start));
}

Tensor concat(llvm::ArrayRef<Tensor> inputs, int64_t dim, Where where) {
  if (inputs.empty())
    Builder::failBuilding(where, "concat: needs at least one tensor");
  Builder &b = builderOf(inputs.front(), where);
  Tensor first = inputs.front();
  int64_t d = normalizeAxis(first, dim, "concat", where, "dim");
  SmallVector<int64_t> shape(first.shape());
  shape[d] = 0;
  SmallVector<Value> values;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    builderOf(input, where);
    expectFloat(input, "concat", "input #" + std::to_string(index), where);
    SmallVector<int64_t> expected(first.shape());
    if (input.rank() == first.rank())
      expected[d] = input.dim(d);
    if (input.shape() != llvm::ArrayRef<int64_t>(expected))
      b.fail(where, "concat: input #" + llvm::Twine(index) + " " +
                        formatShape(input.shape()) + " does not match input #0 " +
                        formatShape(first.shape()) + " outside dim " +
                        llvm::Twine(dim));
    shape[d] += input.dim(d);
    values.push_back(input.value());
  }
  if (inputs.size() == 1)
    return first;
  return b.wrap(b.ops().create<tg::ConcatOp>(
      b.location(where), b.tensorType(shape, DType::F32), values, d));
}

std::vector<Tensor> split(Tensor input, int64_t dim, int64_t n, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "split", "input", where); // not "slice", its parts
  int64_t d = normalizeAxis(input, dim, "split", where, "dim");
  if (n < 1 || input.dim(d) % n != 0)
    b.fail(where, "split: dim " + llvm::Twine(dim) + " of " +
                      formatShape(input.shape()) + " (size " +
                      llvm::Twine(input.dim(d)) + ") does not split into " +
                      llvm::Twine(n) + " equal parts");
  int64_t size = input.dim(d) / n;
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < n; ++i)
    parts.push_back(slice(input, d, i * size, size, where));
  return parts;
}

Tensor gather(Tensor input, Tensor indices, int64_t dim, Where where) {
  Builder &b = builderOf(input, where);
  builderOf(indices, where);
  expectFloat(input, "gather", "input", where);
  expectIds(indices, "gather", where, "indices");
  int64_t d = normalizeAxis(input, dim, "gather", where, "dim");
  SmallVector<int64_t> shape(input.shape().take_front(d));
  llvm::append_range(shape, indices.shape());
  llvm::append_range(shape, input.shape().drop_front(d + 1));
  return b.wrap(b.ops().create<tg::GatherOp>(
      b.location(where), b.tensorType(shape, DType::F32), input.value(),
      indices.value(), d));
}

//===----------------------------------------------------------------------===//
// Transformer building blocks
//===----------------------------------------------------------------------===//

Tensor softmax(Tensor input, int64_t axis, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "softmax", "input", where);
  int64_t normalized = normalizeAxis(input, axis, "softmax", where);
  return b.wrap(b.ops().create<tg::SoftmaxOp>(b.location(where), input.value(),
                                              normalized));
}

/// The checks layerNorm and rmsNorm share, named after `op`: a float input
/// of rank >= 1, parameters of its last dimension's size, epsilon > 0.
static void checkNorm(Builder &b, const char *op, Tensor input,
                      std::initializer_list<Tensor> params, double epsilon,
                      Where where) {
  expectFloat(input, op, "input", where);
  if (input.rank() < 1)
    b.fail(where, std::string(op) + ": the input must have rank >= 1");
  SmallVector<int64_t> paramShape{input.dim(-1, where)};
  for (Tensor param : params)
    if (param.shape(where) != llvm::ArrayRef<int64_t>(paramShape))
      b.fail(where, std::string(op) + ": " +
                        (params.size() > 1 ? "gamma and beta" : "gamma") +
                        " must have shape " + formatShape(paramShape) +
                        " for input " + formatShape(input.shape()) + ", got " +
                        formatShape(param.shape()));
  if (!(epsilon > 0.0))
    b.fail(where, std::string(op) + ": epsilon must be positive");
}

Tensor layerNorm(Tensor input, Tensor gamma, Tensor beta, double epsilon,
                 Where where) {
  Builder &b = builderOf(input, where);
  checkNorm(b, "layerNorm", input, {gamma, beta}, epsilon, where);
  return b.wrap(b.ops().create<tg::LayerNormOp>(
      b.location(where), input.value(), gamma.value(), beta.value(),
      static_cast<float>(epsilon)));
}

Tensor rmsNorm(Tensor input, Tensor gamma, double epsilon, Where where) {
  Builder &b = builderOf(input, where);
  checkNorm(b, "rmsNorm", input, {gamma}, epsilon, where);
  return b.wrap(b.ops().create<tg::RmsNormOp>(b.location(where), input.value(),
                                              gamma.value(),
                                              static_cast<float>(epsilon)));
}

Tensor dropout(Tensor input, double rate, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "dropout", "input", where);
  if (!(rate >= 0.0 && rate < 1.0))
    b.fail(where, "dropout: the rate must be in [0, 1), got " +
                      std::to_string(rate));
  if (rate == 0.0)
    return input;
  return b.wrap(b.ops().create<tg::DropoutOp>(
      b.location(where), input.value(), b.dropoutKey(where),
      /*rate_value=*/mlir::Value(),
      b.ops().getF32FloatAttr(static_cast<float>(rate)),
      b.ops().getI64IntegerAttr(b.nextDropoutId())));
}

Tensor embedding(Tensor table, Tensor ids, Where where) {
  Builder &b = builderOf(table, where);
  expectFloat(table, "embedding", "table", where);
  expectIds(ids, "embedding", where);
  if (table.rank() != 2)
    b.fail(where, "embedding: the table must be [vocab, d] but is " +
                      formatShape(table.shape()));
  SmallVector<int64_t> shape(ids.shape());
  shape.push_back(table.dim(1));
  return b.wrap(b.ops().create<tg::EmbeddingOp>(
      b.location(where), b.tensorType(shape, DType::F32), table.value(),
      ids.value()));
}

Tensor causalMask(Builder &b, int64_t length, Where where) {
  if (length <= 0)
    b.fail(where, "causalMask: the length must be positive");
  return b.wrap(b.ops().create<tg::CausalMaskOp>(
      b.location(where), b.tensorType({length, length}, DType::F32)));
}

Tensor paddingMask(Tensor ids, int32_t padId, Where where) {
  Builder &b = builderOf(ids, where);
  expectIds(ids, "paddingMask", where);
  return b.wrap(b.ops().create<tg::PaddingMaskOp>(
      b.location(where), b.tensorType(ids.shape(), DType::F32), ids.value(),
      b.ops().getI32IntegerAttr(padId)));
}

Tensor positionalEncoding(Builder &b, int64_t length, int64_t dModel,
                          Where where) {
  if (length <= 0 || dModel <= 0 || dModel % 2 != 0)
    b.fail(where, "positionalEncoding: needs a positive length and an even "
                  "d_model, got [" +
                      llvm::Twine(length) + ", " + llvm::Twine(dModel) + "]");
  return b.wrap(b.ops().create<tg::PositionalEncodingOp>(
      b.location(where), b.tensorType({length, dModel}, DType::F32)));
}

Tensor rotary(Tensor input, double base, Where where) {
  Builder &b = builderOf(input, where);
  expectFloat(input, "rotary", "input", where);
  if (input.rank() < 2 || input.dim(-1) % 2 != 0)
    b.fail(where, "rotary: the input must be [..., S, D] with D even, got " +
                      formatShape(input.shape()));
  if (!std::isfinite(base) || base <= 1.0)
    b.fail(where, "rotary: the base must be finite and > 1, got " +
                      std::to_string(base));
  return b.wrap(b.ops().create<tg::RotaryOp>(
      b.location(where), input.value().getType(), input.value(), Value(),
      b.ops().getF64FloatAttr(base), UnitAttr()));
}

LossAndTokens crossEntropy(Tensor logits, Tensor targets, double smoothing,
                           int32_t ignoreIndex, Where where) {
  Builder &b = builderOf(logits, where);
  expectFloat(logits, "crossEntropy", "logits", where);
  expectIds(targets, "crossEntropy", where);
  if (logits.rank() < 2 || targets.shape() != logits.shape().drop_back())
    b.fail(where, "crossEntropy: logits " + formatShape(logits.shape()) +
                      " must be targets' shape " +
                      formatShape(targets.shape()) + " plus a vocabulary");
  if (!(smoothing >= 0.0 && smoothing < 1.0))
    b.fail(where, "crossEntropy: label smoothing must be in [0, 1)");
  auto op = b.ops().create<tg::CrossEntropyOp>(
      b.location(where), logits.value(), targets.value(),
      /*smoothing_value=*/mlir::Value(), b.ops().getF32FloatAttr(static_cast<float>(smoothing)),
      b.ops().getI32IntegerAttr(ignoreIndex));
  return {b.wrap(op.getLoss()), b.wrap(op.getTokens())};
}

} // namespace tgc
