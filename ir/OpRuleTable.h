//===- OpRuleTable.h - one rule per op class, found by TypeID ---*- C++ -*-===//
//
// The gradient rules (passes/GradientRules.cpp), the decoder's axis rules
// (passes/DecoderAxisRules.cpp), the interpreter's handlers
// (codegen/interpreter/OpHandlers.cpp) and the C++ kernel calls
// (codegen/cpu/CppKernelCalls.cpp) each keep a table from op class to what
// to do with such an op. Each rule is written for its op class
// (`LogicalResult addRule(RuleBuilder &, tg::AddOp)`) and stored as a
// function of any Operation *, which it casts: the table's key makes sure
// of the class.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_IR_OPRULETABLE_H
#define TGC_IR_OPRULETABLE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Casting.h"

#include <cassert>
#include <functional>
#include <utility>

namespace tgc {

/// The rules of one table: called with `Args...` and the op.
template <typename Result, typename... Args> struct OpRule {
  using Fn = std::function<Result(Args..., mlir::Operation *)>;

  /// `rule`, written for op class OpT, as a rule of any op of that class;
  /// a null `rule` gives an empty Fn.
  template <typename OpT> static Fn of(Result (*rule)(Args..., OpT)) {
    if (!rule)
      return Fn();
    return [rule](Args... args, mlir::Operation *op) -> Result {
      return rule(std::forward<Args>(args)..., llvm::cast<OpT>(op));
    };
  }
};

/// Entries by op class, filled once at start-up. An op class listed twice
/// is a mistake in the table (one entry would be lost): asserted.
template <typename Entry> class OpRuleTable {
public:
  void insert(mlir::TypeID opClass, Entry entry) {
    [[maybe_unused]] bool inserted =
        entries.try_emplace(opClass, std::move(entry)).second;
    assert(inserted && "op class listed twice in an op rule table");
  }
  template <typename OpT> void insert(Entry entry) {
    insert(mlir::TypeID::get<OpT>(), std::move(entry));
  }

  /// The entry of `opClass`, or null where the table has none.
  const Entry *lookup(mlir::TypeID opClass) const {
    auto it = entries.find(opClass);
    return it == entries.end() ? nullptr : &it->second;
  }
  bool contains(mlir::TypeID opClass) const {
    return entries.contains(opClass);
  }

private:
  llvm::DenseMap<mlir::TypeID, Entry> entries;
};

} // namespace tgc

#endif // TGC_IR_OPRULETABLE_H
