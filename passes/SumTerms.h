//===- SumTerms.h - a sum's term that its producer can add into -*- C++ -*-===//
//
// tg-fuse-matmul-add and tg-fuse-embedding-grad-add fold `add(x, y)` into
// the op that makes one of its terms (a GEMM with beta 1, a scatter onto a
// base), the other term becoming that op's summand. Where both terms are
// such products the later one takes the earlier as its summand, so a chain
// of sums becomes a chain of producers, each adding into the last one's
// result.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_SUMTERMS_H
#define TGC_PASSES_SUMTERMS_H

#include "ir/TgOps.h"

#include <optional>
#include <utility>

namespace tgc {

/// The term of `add` made by a `Producer` that `sole(value, add)` accepts
/// (the later one where both are), and the other term.
template <typename Producer, typename Sole>
std::optional<std::pair<Producer, mlir::Value>> producedTerm(tg::AddOp add,
                                                             Sole sole) {
  Producer lhs = sole(add.getLhs(), add), rhs = sole(add.getRhs(), add);
  bool rhsIsProduct = rhs && (!lhs || lhs->isBeforeInBlock(rhs));
  Producer product = rhsIsProduct ? rhs : lhs;
  if (!product)
    return std::nullopt;
  return std::make_pair(product, rhsIsProduct ? add.getLhs() : add.getRhs());
}

} // namespace tgc

#endif // TGC_PASSES_SUMTERMS_H
