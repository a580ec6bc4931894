//===- FuseElementwise.cpp - tg-fuse-elementwise ---------------------------===//
//
// Greedy grouping in program order. A group grows while only its own ops
// read its values; the first outside reader closes it. Because every member
// and every reader of a member then lies before that reader, putting the
// fused op at the group's last member needs no other op to move.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEELEMENTWISE
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// The groups of one block, as classes of ops; a class is open until a
/// non-member reads one of its values.
class Grouping {
public:
  explicit Grouping(Block &block) {
    for (Operation &op : block) {
      if (tg::isElementwiseFusible(&op))
        add(&op);
      else
        closeGroupsReadBy(&op);
    }
  }

  /// Every group of two or more ops, each in program order.
  SmallVector<SmallVector<Operation *>> groups() const {
    SmallVector<SmallVector<Operation *>> result;
    for (auto it = classes.begin(); it != classes.end(); ++it) {
      if (!it->isLeader())
        continue;
      SmallVector<Operation *> members(classes.member_begin(it),
                                       classes.member_end());
      if (members.size() < 2)
        continue;
      llvm::sort(members, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      result.push_back(std::move(members));
    }
    return result;
  }

private:
  /// Joins `op` to every open group that produces one of its operands of
  /// its result's type. A group whose value it reads otherwise (a
  /// dropout's run-time rate) and does not join is closed, as by any
  /// other reader: the fused op goes at the group's last member, which
  /// must come before `op`.
  void add(Operation *op) {
    classes.insert(op);
    SmallVector<Operation *> readOnly;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || classes.findValue(producer) == classes.end())
        continue;
      if (closed(producer) || operand.getType() != op->getResult(0).getType())
        readOnly.push_back(producer);
      else
        classes.unionSets(producer, op); // both open: the union stays open
    }
    for (Operation *producer : readOnly)
      if (!classes.isEquivalent(producer, op))
        closedLeaders.insert(classes.getLeaderValue(producer));
  }

  void closeGroupsReadBy(Operation *reader) {
    reader->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          if ((classes.findValue(producer) != classes.end()))
            closedLeaders.insert(classes.getLeaderValue(producer));
    });
  }

  bool closed(Operation *op) const {
    return closedLeaders.contains(classes.getLeaderValue(op));
  }

  llvm::EquivalenceClasses<Operation *> classes;
  llvm::DenseSet<Operation *> closedLeaders;
};

struct TgFuseElementwisePass
    : impl::TgFuseElementwiseBase<TgFuseElementwisePass> {
  using TgFuseElementwiseBase::TgFuseElementwiseBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    unsigned groups = 0, ops = 0;
    getOperation().walk([&](func::FuncOp function) {
      for (Block &block : function.getBody())
        for (SmallVector<Operation *> &members : Grouping(block).groups())
          if (fuse(rewriter, members)) {
            ++groups;
            ops += members.size();
          }
    });
    numGroups = groups;
    numOps = ops;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-elementwise: fused " << ops << " ops into " << groups
          << " elementwise groups";
  }

  /// Replaces `members` (in program order) by one tg.fused_elementwise at the
  /// last member. Returns false when none of their values is used outside.
  static bool fuse(IRRewriter &rewriter, ArrayRef<Operation *> members) {
    llvm::DenseSet<Operation *> inGroup(members.begin(), members.end());
    llvm::SetVector<Value> inputs;
    SmallVector<Value> outputs;
    SmallVector<Location> locs;
    for (Operation *op : members) {
      locs.push_back(op->getLoc());
      for (Value operand : op->getOperands())
        if (!inGroup.contains(operand.getDefiningOp()))
          inputs.insert(operand);
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !inGroup.contains(user);
            }))
          outputs.push_back(result);
    }
    if (outputs.empty())
      return false;

    rewriter.setInsertionPoint(members.back());
    auto fused = rewriter.create<tg::FusedElementwiseOp>(
        rewriter.getFusedLoc(locs), ValueRange(outputs).getTypes(),
        inputs.getArrayRef());
    Block *body = rewriter.createBlock(&fused.getBody());
    IRMapping mapping;
    for (Value input : inputs)
      mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
    for (Operation *op : members)
      rewriter.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value output : outputs)
      yielded.push_back(mapping.lookup(output));
    rewriter.create<tg::YieldOp>(fused.getLoc(), yielded);

    for (auto [output, result] : llvm::zip(outputs, fused.getResults()))
      rewriter.replaceAllUsesWith(output, result);
    for (Operation *op : llvm::reverse(members))
      rewriter.eraseOp(op);
    return true;
  }
};

} // namespace
} // namespace tgc
