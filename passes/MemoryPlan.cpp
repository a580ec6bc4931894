//===- MemoryPlan.cpp - liveness, aliasing and greedy arena placement ----===//
#include "passes/MemoryPlan.h"

#include "ir/TgOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace tgc {

namespace {

int64_t alignUp(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// Values that must share bytes (a reshape and its input, an in-place result
/// and the operand it overwrites), with what the class needs.
struct BufferClass {
  int64_t bytes = 0;
  int64_t start = std::numeric_limits<int64_t>::max(), end = -1;
  int64_t lastRead = -1; ///< last use by an op other than the return
  bool external = false; ///< holds an argument, a load or a constant
  bool gradient = false; ///< read by an Adam update
  bool bf16 = false;     ///< a bf16 copy (tg-mixed-precision)
  int64_t offset = -1;
};

class Planner {
public:
  explicit Planner(func::FuncOp function) : function(function) {}

  FailureOr<MemoryPlan> run();

private:
  int id(Value value) { return ids.try_emplace(value, ids.size()).first->second; }
  int find(int x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  BufferClass &classOf(Value value) { return classes[find(ids.lookup(value))]; }
  /// Merges the classes of `a` and `b`; the result keeps both lifetimes.
  void unite(Value a, Value b);

  LogicalResult collectValues(Block &block);
  void computeLifetimes(Block &block);
  void chooseInPlace(Block &block);
  /// A tg.matmul_add's sum in its summand's bytes, where that is safe.
  void addInPlace(tg::MatmulAddOp gemm);
  /// A tg.embedding_grad's sum in its addend's bytes, where that is safe.
  void scatterInPlace(tg::EmbeddingGradOp scatter);
  void place();
  MemoryReport report(Block &block);

  func::FuncOp function;
  llvm::DenseMap<Value, int> ids;
  std::vector<int> parent;
  std::vector<BufferClass> classes;
  llvm::DenseMap<Operation *, int64_t> position;
  /// Each op of a tg.beside_next pair: the other, and the pair's instant's
  /// end (the second's position).
  llvm::DenseMap<Operation *, std::pair<Operation *, int64_t>> partners;
  int64_t scratchBytes = 0, gradientBytes = 0;
  bool allReduces = false;     ///< the block sums gradients over processes
  int64_t tokenCountOffset = -1;
};

} // namespace

static FailureOr<int64_t> bytesOf(Location loc, Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return emitError(loc) << "memory planning needs statically shaped "
                             "tensors but found "
                          << type;
  Type element = tensor.getElementType();
  if (element.isBF16())
    return tensor.getNumElements() * 2;
  if (!element.isF32() && !element.isSignlessInteger(32))
    return emitError(loc) << "memory planning handles f32, bf16 and i32 "
                             "tensors but found "
                          << type;
  return tensor.getNumElements() * 4;
}

void Planner::unite(Value a, Value b) {
  int x = find(ids.lookup(a)), y = find(ids.lookup(b));
  if (x == y)
    return;
  BufferClass &into = classes[x], &from = classes[y];
  into.start = std::min(into.start, from.start);
  into.end = std::max(into.end, from.end);
  into.lastRead = std::max(into.lastRead, from.lastRead);
  into.external |= from.external;
  into.gradient |= from.gradient;
  into.bytes = std::max(into.bytes, from.bytes);
  parent[y] = x;
}

LogicalResult Planner::collectValues(Block &block) {
  auto add = [&](Value value, bool external) -> LogicalResult {
    FailureOr<int64_t> bytes = bytesOf(value.getLoc(), value.getType());
    if (failed(bytes))
      return failure();
    int index = id(value);
    parent.push_back(index);
    classes.push_back(BufferClass{*bytes});
    classes.back().external = external;
    classes.back().bf16 = llvm::cast<RankedTensorType>(value.getType())
                              .getElementType()
                              .isBF16();
    return success();
  };
  for (BlockArgument arg : block.getArguments())
    if (failed(add(arg, /*external=*/true)))
      return failure();
  int64_t index = 0;
  for (Operation &op : block) {
    position[&op] = index++;
    bool external = op.hasTrait<tg::traits::ResultOutsideArena>();
    // A result no kernel writes takes no bytes, like one outside the arena.
    for (Value result : op.getResults())
      if (failed(add(result, external || tg::isUnwrittenResult(result))))
        return failure();
    if (op.hasTrait<tg::traits::ResultIsView>())
      unite(op.getOperand(0), op.getResult(0));
    // Results made in place (sums over the processes) take their
    // operands' bytes.
    if (op.hasTrait<tg::traits::ResultsOverwriteOperands>())
      for (auto [input, result] : llvm::zip(op.getOperands(), op.getResults()))
        unite(input, result);
    // The all-reduce's region is followed by the token count slot.
    if (llvm::isa<tg::AllReduceOp>(op))
      allReduces = true;
  }
  auto markGradient = [&](Value grad) { classOf(grad).gradient = true; };
  for (Operation &op : block) {
    if (auto adam = llvm::dyn_cast<tg::AdamUpdateOp>(op))
      markGradient(adam.getGrad());
    if (auto adam = llvm::dyn_cast<tg::MultiAdamUpdateOp>(op))
      llvm::for_each(adam.getGrads(), markGradient);
  }
  return success();
}

void Planner::computeLifetimes(Block &block) {
  // Two ops that run at once (tg.beside_next) are one instant [first,
  // second]: what either reads lives to the second, what either makes from
  // the first, so neither writes bytes the other uses.
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> pairs;
  for (Operation &op : block)
    if (op.hasAttr(tg::kBesideNextAttr))
      if (Operation *next = tg::nextComputingOp(&op)) {
        // Two insertions, not a chained assignment: the second may grow the
        // map and move the first's slot.
        std::pair<int64_t, int64_t> instant{position[&op], position[next]};
        pairs.try_emplace(&op, instant);
        pairs.try_emplace(next, instant);
        partners.try_emplace(&op, next, instant.second);
        partners.try_emplace(next, &op, instant.second);
      }
  for (Operation &op : block) {
    int64_t at = position[&op];
    auto pair = pairs.find(&op);
    int64_t startAt = pair == pairs.end() ? at : pair->second.first;
    int64_t endAt = pair == pairs.end() ? at : pair->second.second;
    for (Value result : op.getResults()) {
      BufferClass &c = classOf(result);
      c.start = std::min(c.start, startAt);
      c.end = std::max(c.end, endAt);
    }
    // Nested regions (a fused group's body) read their inputs through
    // the parent's operands; any other nested use counts at the parent.
    bool isReturn = llvm::isa<func::ReturnOp>(op);
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        if (operand.getParentBlock() != &block)
          continue;
        BufferClass &c = classOf(operand);
        c.end = std::max(c.end, endAt);
        if (!isReturn)
          c.lastRead = std::max(c.lastRead, at);
      }
    });
  }
  for (BlockArgument arg : block.getArguments())
    classOf(arg).start = 0;
}

void Planner::chooseInPlace(Block &block) {
  for (Operation &op : block) {
    if (auto gemm = llvm::dyn_cast<tg::MatmulAddOp>(op)) {
      addInPlace(gemm);
      continue;
    }
    if (auto scatter = llvm::dyn_cast<tg::EmbeddingGradOp>(op)) {
      scatterInPlace(scatter);
      continue;
    }
    if (!op.hasTrait<tg::traits::ElementwiseLoop>())
      continue;
    int64_t at = position[&op];
    // Buffers a result of this op took: a dead result's still ends at `at`,
    // and another result written by the same loop must not take it too.
    llvm::SmallPtrSet<const BufferClass *, 4> taken;
    for (Value result : op.getResults()) {
      if (classOf(result).gradient)
        continue;
      for (Value operand : op.getOperands()) {
        BufferClass &c = classOf(operand);
        if (operand.getType() != result.getType() || c.external ||
            c.gradient || c.end != at || taken.contains(&c))
          continue;
        unite(operand, result); // its end moves past `at`: used once
        taken.insert(&classOf(result));
        break;
      }
    }
  }
}

void Planner::addInPlace(tg::MatmulAddOp gemm) {
  BufferClass &summand = classOf(gemm.getAddend());
  if (summand.external || summand.gradient ||
      classOf(gemm.getResult()).gradient)
    return;
  // The summand must die at the op's instant, and its bytes must not be
  // what the GEMM multiplies (x + x W: the product reads x while the sums
  // are written over it) or what a partner running at the same time reads.
  auto partner = partners.find(gemm);
  int64_t end = partner == partners.end() ? position[gemm]
                                          : partner->second.second;
  if (summand.end != end)
    return;
  int root = find(ids.lookup(gemm.getAddend()));
  auto readsSummand = [&](ValueRange operands) {
    return llvm::any_of(operands, [&](Value operand) {
      return find(ids.lookup(operand)) == root;
    });
  };
  if (readsSummand({gemm.getLhs(), gemm.getRhs()}) ||
      (partner != partners.end() &&
       readsSummand(partner->second.first->getOperands())))
    return;
  unite(gemm.getAddend(), gemm.getResult());
}

void Planner::scatterInPlace(tg::EmbeddingGradOp scatter) {
  Value addend = scatter.getAddend();
  if (!addend)
    return;
  // The result is usually a gradient (a shared table's): the addend, a
  // temporary that dies here, then lives in the gradient region from its
  // definition on, bytes the gradient holds all step anyway.
  BufferClass &summand = classOf(addend);
  if (summand.external || summand.gradient || partners.count(scatter) ||
      summand.end != position[scatter])
    return;
  int root = find(ids.lookup(addend));
  if (find(ids.lookup(scatter.getGrad())) == root ||
      find(ids.lookup(scatter.getIds())) == root)
    return;
  unite(addend, scatter.getResult());
}

void Planner::place() {
  std::vector<int> roots, gradients;
  for (int i = 0; i < static_cast<int>(classes.size()); ++i) {
    if (find(i) != i || classes[i].external)
      continue;
    (classes[i].gradient ? gradients : roots).push_back(i);
  }
  llvm::stable_sort(roots, [&](int a, int b) {
    if (classes[a].bytes != classes[b].bytes)
      return classes[a].bytes > classes[b].bytes;
    return classes[a].start < classes[b].start;
  });
  std::vector<int> placed;
  for (int root : roots) {
    BufferClass &c = classes[root];
    std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) in bytes
    for (int other : placed) {
      const BufferClass &o = classes[other];
      if (o.start <= c.end && c.start <= o.end)
        busy.push_back({o.offset, o.offset + alignUp(o.bytes)});
    }
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + alignUp(c.bytes) <= begin)
        break;
      offset = std::max(offset, end);
    }
    c.offset = offset;
    scratchBytes = std::max(scratchBytes, offset + alignUp(c.bytes));
    placed.push_back(root);
  }
  // Gradients: one region after the reused part, in program order.
  llvm::stable_sort(gradients, [&](int a, int b) {
    return classes[a].start < classes[b].start;
  });
  for (int root : gradients) {
    classes[root].offset = scratchBytes + gradientBytes;
    gradientBytes += alignUp(classes[root].bytes);
  }
  // The token count slot ends the region: the all-reduce of the gradients
  // sums the processes' target tokens in the same call.
  if (allReduces) {
    tokenCountOffset = scratchBytes + gradientBytes;
    gradientBytes += kArenaAlignment;
  }
}

MemoryReport Planner::report(Block &block) {
  MemoryReport r;
  auto module = function->getParentOfType<ModuleOp>();
  // Optimizer state: the moments an Adam update names; every other
  // variable is a parameter, trained or frozen.
  llvm::DenseSet<StringRef> moments;
  auto noteMoments = [&](ArrayAttr refs) {
    for (Attribute ref : refs)
      moments.insert(llvm::cast<FlatSymbolRefAttr>(ref).getValue());
  };
  module.walk([&](tg::MultiAdamUpdateOp update) {
    noteMoments(update.getMoments1());
    noteMoments(update.getMoments2());
  });
  module.walk([&](tg::AdamUpdateOp update) {
    moments.insert(update.getMoment1());
    moments.insert(update.getMoment2());
  });
  module.walk([&](tg::VariableOp variable) {
    // Decoding caches are allocated only while translating (reported with
    // the incremental decoder).
    if (variable.getCache())
      return;
    int64_t bytes =
        llvm::cast<RankedTensorType>(variable.getType()).getNumElements() * 4;
    (moments.contains(variable.getSymName()) ? r.optimizerState : r.weights) +=
        bytes;
  });
  for (BlockArgument arg : block.getArguments())
    r.inputs += classOf(arg).bytes;
  // The backward starts after the op that computes the loss (result 0).
  int64_t boundary = -1;
  auto ret = llvm::cast<func::ReturnOp>(block.getTerminator());
  if (ret.getNumOperands() > 0)
    if (Operation *loss = ret.getOperand(0).getDefiningOp())
      boundary = position[loss];
  for (int i = 0; i < static_cast<int>(classes.size()); ++i) {
    const BufferClass &c = classes[i];
    if (find(i) != i || c.external)
      continue;
    r.unplanned += alignUp(c.bytes);
    // Read after the loss is computed; returning the loss is not reading.
    if (!c.gradient && boundary >= 0 && c.start <= boundary &&
        c.lastRead > boundary) {
      r.savedActivations += alignUp(c.bytes);
      if (c.bf16)
        r.savedBf16 += alignUp(c.bytes);
    }
  }
  // The token count slot after the gradients counts as scratch.
  int64_t slot = tokenCountOffset >= 0 ? kArenaAlignment : 0;
  r.gradients = gradientBytes - slot;
  r.arena = scratchBytes + gradientBytes;
  r.scratch = scratchBytes + slot - r.savedActivations;
  return r;
}

FailureOr<MemoryPlan> Planner::run() {
  if (function.isDeclaration())
    return function.emitError() << "memory planning needs a function body, "
                                   "but @"
                                << function.getName() << " is a declaration";
  if (!llvm::hasSingleElement(function.getBody()))
    return function.emitError()
           << "memory planning needs a function with one block";
  Block &block = function.getBody().front();
  if (failed(collectValues(block)))
    return failure();
  computeLifetimes(block);
  chooseInPlace(block);
  place();
  MemoryPlan plan;
  for (auto [value, index] : ids) {
    const BufferClass &c = classes[find(index)];
    if (!c.external && !llvm::isa<BlockArgument>(value))
      plan.offsets[value] = c.offset;
  }
  plan.tokenCountOffset = tokenCountOffset;
  plan.report = report(block);
  return plan;
}

FailureOr<MemoryPlan> planMemory(func::FuncOp function) {
  return Planner(function).run();
}

std::string MemoryReport::format() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto line = [&](llvm::StringRef what, int64_t bytes, llvm::StringRef note) {
    os << llvm::format("  %-18s %14lld bytes  %9.2f MiB", what.str().c_str(),
                       static_cast<long long>(bytes),
                       static_cast<double>(bytes) / (1 << 20));
    if (!note.empty())
      os << "  " << note;
    os << "\n";
  };
  line("weights", weights, "parameters, trained and frozen");
  line("optimizer state", optimizerState, "Adam moments");
  line("gradients", gradients, "arena, own region");
  line("saved activations", savedActivations,
       "arena, live from the forward into the backward");
  if (savedBf16 > 0)
    line("  of which bf16", savedBf16,
         "GEMM operands' copies (tg-mixed-precision)");
  line("scratch", scratch, "arena, the rest (reused)");
  line("inputs", inputs,
       "the batch, lr, step, dropout key, optimizer controls");
  line("arena", arena, "gradients + saved activations + scratch");
  line("peak", peak(), "weights + optimizer state + arena + inputs");
  os << llvm::format("  (the arena without reuse would be %lld bytes, "
                     "%.2f MiB)\n",
                     static_cast<long long>(unplanned),
                     static_cast<double>(unplanned) / (1 << 20));
  if (weights > 0)
    os << llvm::format("  (--update-freq K > 1 adds a gradient accumulator "
                       "of %.2f MiB, the size of the weights)\n",
                       static_cast<double>(weights) / (1 << 20));
  return text;
}

FailureOr<MemoryReport> readMemoryReport(func::FuncOp function) {
  auto dict = function->getAttrOfType<DictionaryAttr>(kMemoryAttr);
  if (!dict)
    return function.emitError()
           << "has no memory plan (run tg-plan-memory first)";
  MemoryReport r;
  auto read = [&](llvm::StringRef key, int64_t &field) {
    if (auto value = dict.getAs<IntegerAttr>(key))
      field = value.getInt();
  };
  read("weights", r.weights);
  read("optimizer_state", r.optimizerState);
  read("gradients", r.gradients);
  read("saved_activations", r.savedActivations);
  read("saved_bf16", r.savedBf16);
  read("scratch", r.scratch);
  read("inputs", r.inputs);
  read("arena", r.arena);
  read("unplanned", r.unplanned);
  return r;
}

} // namespace tgc
