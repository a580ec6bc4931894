//===- GraphFile.cpp - tg modules to and from graph files ----------------===//
#include "frontend/GraphFile.h"

#include "frontend/Graph.pb.h"
#include "frontend/InputFile.h"
#include "ir/TgOps.h"
#include "ir/TgVerify.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <limits>

using namespace mlir;

namespace tgc {

static constexpr const char *kGraphFormat = "tgc.graph";

bool isGraphFile(llvm::StringRef path) {
  return path.ends_with(".tgpb") || path.ends_with(".pbtxt");
}

/// Text format for .pbtxt files and for stdout ("-").
static bool isTextFormat(llvm::StringRef path) {
  return path.ends_with(".pbtxt") || path == "-";
}

/// The tag of Graph.crc32 (field 9, wire type 5: fixed32), then 4 bytes.
static constexpr char kChecksumTag = (9 << 3) | 5;
static constexpr size_t kChecksumBytes = 5;

static uint32_t checksum(llvm::StringRef bytes) {
  return llvm::crc32(llvm::arrayRefFromStringRef(bytes));
}

//===----------------------------------------------------------------------===//
// Shared conversions
//===----------------------------------------------------------------------===//

static const std::pair<tg::InitKind, graph::Variable::Init> kInitKinds[] = {
    {tg::InitKind::zeros, graph::Variable::ZEROS},
    {tg::InitKind::ones, graph::Variable::ONES},
    {tg::InitKind::normal, graph::Variable::NORMAL},
    {tg::InitKind::uniform, graph::Variable::UNIFORM},
    {tg::InitKind::xavier_uniform, graph::Variable::XAVIER_UNIFORM},
};

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
class GraphWriter {
public:
  explicit GraphWriter(ModuleOp module) : module(module) {}

  LogicalResult write(graph::Graph &out) {
    out.set_format(kGraphFormat);
    out.set_version(kGraphFormatVersion);
    out.set_producer("tgc");
    func::FuncOp function;
    for (Operation &op : module.getBody()->getOperations()) {
      if (auto variable = llvm::dyn_cast<tg::VariableOp>(op)) {
        writeVariable(variable, *out.add_variables());
      } else if (auto f = llvm::dyn_cast<func::FuncOp>(op)) {
        if (function)
          return op.emitError("a graph file holds one function; this module "
                              "has a second one, @")
                 << f.getName();
        function = f;
      } else {
        return op.emitError("a graph file cannot hold '")
               << op.getName() << "'";
      }
    }
    if (!function)
      return module.emitError("the module has no function to write");
    if (failed(writeFunction(function, *out.mutable_function())))
      return failure();
    // The format holds Adam's settings, not another optimizer's name (an
    // {name = "sgd"} was written as Adam's).
    if (auto optimizer = module->getAttrOfType<DictionaryAttr>("tg.optimizer")) {
      auto name = optimizer.getAs<StringAttr>("name");
      if (!name || name.getValue() != "adam")
        return module.emitError("a graph file holds the Adam optimizer; this "
                                "module declares ")
               << optimizer;
    }
    writeDeclarations(out);
    out.set_complete(true);
    return success();
  }

private:
  static void writeType(Type type, graph::TensorType &out) {
    auto tensor = llvm::cast<RankedTensorType>(type);
    for (int64_t dim : tensor.getShape())
      out.add_shape(dim);
    out.set_element(tensor.getElementType().isF32() ? graph::F32 : graph::I32);
  }

  static void writeLocation(Location loc, graph::Location &out) {
    if (auto file = llvm::dyn_cast<FileLineColLoc>(loc)) {
      out.set_file(file.getFilename().str());
      out.set_line(file.getLine());
      out.set_column(file.getColumn());
    }
  }

  static void writeVariable(tg::VariableOp variable, graph::Variable &out) {
    out.set_name(variable.getSymName().str());
    writeType(variable.getType(), *out.mutable_type());
    for (auto [kind, init] : kInitKinds)
      if (kind == variable.getInit())
        out.set_init(init);
    if (auto scale = variable.getInitScale())
      out.set_init_scale(scale->convertToDouble());
    out.set_trainable(variable.getTrainable());
    if (std::optional<bool> decay = variable.getWeightDecay())
      out.set_weight_decay(*decay);
    writeLocation(variable.getLoc(), *out.mutable_location());
  }

  /// A type the format writes: a ranked f32 or i32 tensor.
  static bool isGraphType(Type type) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    return tensor && (tensor.getElementType().isF32() ||
                      tensor.getElementType().isInteger(32));
  }

  LogicalResult writeFunction(func::FuncOp function, graph::Function &out) {
    if (function.isExternal())
      return function.emitError("a graph file holds a function's body; @")
             << function.getName() << " is a declaration";
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      if (!isGraphType(type))
        return function.emitError("a graph file holds f32 and i32 tensors; "
                                  "argument #")
               << index << " has type " << type;
    for (auto [index, type] : llvm::enumerate(function.getResultTypes()))
      if (!isGraphType(type))
        return function.emitError("a graph file holds f32 and i32 tensors; "
                                  "result #")
               << index << " has type " << type;
    out.set_name(function.getName().str());
    writeLocation(function.getLoc(), *out.mutable_location());
    for (BlockArgument argument : function.getArguments()) {
      graph::Argument &arg = *out.add_arguments();
      if (auto name = function.getArgAttrOfType<StringAttr>(
              argument.getArgNumber(), "tg.name"))
        arg.set_name(name.str());
      writeType(argument.getType(), *arg.mutable_type());
      writeLocation(argument.getLoc(), *arg.mutable_location());
      define(argument);
    }
    for (Operation &op : function.getBody().front()) {
      // What the format holds (a bf16 result was written as i32, and
      // variadic groups' sizes were written and then refused as unknown).
      for (auto [index, type] : llvm::enumerate(op.getResultTypes()))
        if (!isGraphType(type))
          return op.emitError("a graph file holds f32 and i32 tensors; "
                              "result #")
                 << index << " has type " << type
                 << " (write the graph before tg-mixed-precision)";
      if (op.hasAttr("operandSegmentSizes") || op.hasAttr("resultSegmentSizes"))
        return op.emitError("a graph file cannot hold '")
               << op.getName()
               << "', whose operands or results come in variadic groups "
                  "(a fused op: write the graph before fusion)";
      if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
        for (Value result : ret.getOperands())
          out.add_results(ids.lookup(result));
        writeLocation(ret.getLoc(), *out.mutable_return_location());
        continue;
      }
      if (op.getNumRegions() != 0)
        return op.emitError("a graph file cannot hold ops with regions");
      graph::Op &g = *out.add_ops();
      g.set_name(op.getName().getStringRef().str());
      for (Value operand : op.getOperands())
        g.add_operands(ids.lookup(operand));
      for (Value result : op.getResults()) {
        writeType(result.getType(), *g.add_results());
        define(result);
      }
      for (NamedAttribute attr : op.getAttrDictionary())
        writeAttribute(attr, *g.add_attributes());
      writeLocation(op.getLoc(), *g.mutable_location());
    }
    return success();
  }

  static void writeAttribute(NamedAttribute attr, graph::Attribute &out) {
    out.set_name(attr.getName().str());
    Attribute value = attr.getValue();
    if (llvm::isa<UnitAttr>(value)) {
      out.set_unit(true);
    } else if (auto integer = llvm::dyn_cast<IntegerAttr>(value);
               integer && integer.getType().isSignlessInteger(32)) {
      out.set_i32(integer.getInt());
    } else if (integer && integer.getType().isSignlessInteger(64)) {
      out.set_i64(integer.getInt());
    } else if (auto number = llvm::dyn_cast<FloatAttr>(value);
               number && number.getType().isF32()) {
      out.set_f32(number.getValue().convertToFloat());
    } else if (number && number.getType().isF64()) {
      out.set_f64(number.getValueAsDouble());
    } else if (auto symbol = llvm::dyn_cast<FlatSymbolRefAttr>(value)) {
      out.set_symbol(symbol.getValue().str());
    } else if (auto ints = llvm::dyn_cast<DenseI64ArrayAttr>(value)) {
      for (int64_t v : ints.asArrayRef())
        out.mutable_i64_array()->add_values(v);
    } else if (auto ints32 = llvm::dyn_cast<DenseI32ArrayAttr>(value)) {
      for (int32_t v : ints32.asArrayRef())
        out.mutable_i32_array()->add_values(v);
    } else {
      std::string text;
      llvm::raw_string_ostream os(text);
      value.print(os);
      out.set_mlir(text);
    }
  }

  void writeDeclarations(graph::Graph &out) {
    if (auto adam = module->getAttrOfType<DictionaryAttr>("tg.optimizer")) {
      graph::Optimizer &o = *out.mutable_optimizer();
      auto get = [&](llvm::StringRef key) {
        auto value = adam.getAs<FloatAttr>(key);
        return value ? static_cast<float>(value.getValueAsDouble()) : 0.0f;
      };
      if (adam.get("beta1"))
        o.set_beta1(get("beta1"));
      if (adam.get("beta2"))
        o.set_beta2(get("beta2"));
      if (adam.get("epsilon"))
        o.set_epsilon(get("epsilon"));
      if (adam.get("weight_decay"))
        o.set_weight_decay(get("weight_decay"));
    }
    if (auto schedule = module->getAttrOfType<DictionaryAttr>("tg.schedule")) {
      graph::Schedule &s = *out.mutable_schedule();
      if (auto d = schedule.getAs<IntegerAttr>("d_model"))
        s.set_d_model(d.getInt());
      if (auto w = schedule.getAs<IntegerAttr>("warmup"))
        s.set_warmup_steps(w.getInt());
      if (auto f = schedule.getAs<FloatAttr>("factor"))
        s.set_factor(f.getValueAsDouble());
      if (auto kind = schedule.getAs<StringAttr>("kind"))
        s.set_kind(kind.getValue().str());
      if (auto peak = schedule.getAs<FloatAttr>("peak"))
        s.set_peak(peak.getValueAsDouble());
      if (auto minimum = schedule.getAs<FloatAttr>("minimum"))
        s.set_minimum(minimum.getValueAsDouble());
    }
  }

  void define(Value value) { ids.try_emplace(value, ids.size()); }

  ModuleOp module;
  llvm::DenseMap<Value, uint32_t> ids;
};
} // namespace

LogicalResult graphFileBytes(ModuleOp module, llvm::StringRef path,
                             std::string &bytes) {
  graph::Graph graph;
  if (failed(GraphWriter(module).write(graph)))
    return failure();
  bool text = isTextFormat(path);
  bool serialized = text ? google::protobuf::TextFormat::PrintToString(graph, &bytes)
                         : graph.SerializeToString(&bytes);
  if (serialized && !text) {
    // Graph.crc32 last: its tag, then the CRC of the bytes before it.
    uint32_t crc = checksum(bytes);
    bytes += kChecksumTag;
    char le[4];
    llvm::support::endian::write32le(le, crc);
    bytes.append(le, 4);
  }
  if (!serialized)
    return emitError(UnknownLoc::get(module.getContext()))
           << path << ": cannot serialize the graph";
  return success();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// Keeps the first text-format parse error (protobuf counts from 0).
class FirstParseError : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string &message) override {
    if (this->message.empty()) {
      this->line = line + 1;
      this->column = column + 1;
      this->message = message;
    }
  }
  int line = 0, column = 0;
  std::string message;
};

class GraphReader {
public:
  GraphReader(MLIRContext &context, llvm::StringRef path)
      : context(context), path(path.str()), builder(&context) {
    context.getOrLoadDialect<tg::TGDialect>();
    context.getOrLoadDialect<func::FuncDialect>();
  }

  OwningOpRef<ModuleOp> read(const graph::Graph &g) {
    if (g.format() != kGraphFormat)
      return fail("not a tgc graph file (truncated or corrupt?)");
    if (g.version() != kGraphFormatVersion)
      return fail("graph format version " + std::to_string(g.version()) +
                  " is not supported (this tgc reads version " +
                  std::to_string(kGraphFormatVersion) + ")");
    if (!g.has_function())
      return fail("the graph has no function (truncated file?)");
    if (!g.complete())
      return fail("the file ends before its last field, `complete: true` "
                  "(truncated? a file written before tgc wrote it: write it "
                  "again with --emit=graph)");

    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
    builder.setInsertionPointToEnd(module->getBody());
    for (const graph::Variable &variable : g.variables())
      if (failed(readVariable(variable)))
        return nullptr;
    if (failed(readFunction(g.function())))
      return nullptr;
    readDeclarations(g, *module);
    if (failed(verify(*module)))
      return fail("the graph's IR does not verify (see the errors above)");
    return module;
  }

private:
  std::nullptr_t fail(const llvm::Twine &message) {
    emitError(UnknownLoc::get(&context)) << path << ": " << message;
    return nullptr;
  }

  Location location(const graph::Location &loc) {
    if (loc.file().empty())
      return UnknownLoc::get(&context);
    return FileLineColLoc::get(&context, loc.file(), loc.line(), loc.column());
  }

  FailureOr<RankedTensorType> readType(const graph::TensorType &type,
                                       const llvm::Twine &where) {
    Type element;
    if (type.element() == graph::F32)
      element = builder.getF32Type();
    else if (type.element() == graph::I32)
      element = builder.getI32Type();
    else {
      fail(where + ": unknown element type " + std::to_string(type.element()));
      return failure();
    }
    // Checked before a type is made: MLIR keeps every type it is asked for,
    // and a file of ranks in the millions made gigabytes of them.
    if (type.shape_size() > tg::kMaxTensorRank) {
      fail(where + ": " + std::to_string(type.shape_size()) +
           " dimensions; a tg tensor has at most " +
           std::to_string(tg::kMaxTensorRank));
      return failure();
    }
    llvm::SmallVector<int64_t> shape(type.shape().begin(), type.shape().end());
    for (int64_t dim : shape)
      if (dim < 0) {
        fail(where + ": negative dimension " + std::to_string(dim));
        return failure();
      }
    if (std::string why = tg::checkTensorSize(shape); !why.empty()) {
      fail(where + ": " + why);
      return failure();
    }
    return RankedTensorType::get(shape, element);
  }

  LogicalResult readVariable(const graph::Variable &v) {
    auto type = readType(v.type(), "variable '" + v.name() + "'");
    if (failed(type))
      return failure();
    std::optional<tg::InitKind> init;
    for (auto [kind, code] : kInitKinds)
      if (code == v.init())
        init = kind;
    if (!init) {
      fail("variable '" + v.name() + "': unknown init " +
           std::to_string(v.init()));
      return failure();
    }
    builder.create<tg::VariableOp>(
        location(v.location()), v.name(), *type, *init,
        v.has_init_scale() ? std::optional<double>(v.init_scale())
                           : std::nullopt,
        v.trainable(),
        v.has_weight_decay() ? std::optional<bool>(v.weight_decay())
                             : std::nullopt);
    return success();
  }

  /// Whether `value` of the i32 attribute `a` (stored in 64 bits, as the
  /// writer's signed value) fits; else a message.
  bool fitsInt32(int64_t value, const graph::Attribute &a,
                 const llvm::Twine &where) {
    if (value >= std::numeric_limits<int32_t>::min() &&
        value <= std::numeric_limits<int32_t>::max())
      return true;
    fail(where + ": attribute '" + a.name() + "' is an i32 but holds " +
         std::to_string(value));
    return false;
  }

  FailureOr<Attribute> readAttribute(const graph::Attribute &a,
                                     const llvm::Twine &where) {
    switch (a.value_case()) {
    case graph::Attribute::kUnit:
      return Attribute(builder.getUnitAttr());
    case graph::Attribute::kI32:
      if (!fitsInt32(a.i32(), a, where))
        return failure();
      return Attribute(builder.getI32IntegerAttr(a.i32()));
    case graph::Attribute::kI64:
      return Attribute(builder.getI64IntegerAttr(a.i64()));
    case graph::Attribute::kF32:
      return Attribute(builder.getF32FloatAttr(a.f32()));
    case graph::Attribute::kF64:
      return Attribute(builder.getF64FloatAttr(a.f64()));
    case graph::Attribute::kSymbol:
      return Attribute(FlatSymbolRefAttr::get(&context, a.symbol()));
    case graph::Attribute::kI64Array:
      return Attribute(builder.getDenseI64ArrayAttr(llvm::SmallVector<int64_t>(
          a.i64_array().values().begin(), a.i64_array().values().end())));
    case graph::Attribute::kI32Array: {
      llvm::SmallVector<int32_t> values;
      for (int64_t v : a.i32_array().values()) {
        if (!fitsInt32(v, a, where))
          return failure();
        values.push_back(static_cast<int32_t>(v));
      }
      return Attribute(builder.getDenseI32ArrayAttr(values));
    }
    case graph::Attribute::kMlir:
      // The attribute parser recurses once per bracket.
      if (findDeepNesting(a.mlir())) {
        fail(where + ": attribute '" + a.name() + "' nests deeper than " +
             std::to_string(kMaxNestingDepth) + " levels of brackets");
        return failure();
      }
      if (Attribute parsed = parseAttribute(a.mlir(), &context))
        return parsed;
      break;
    case graph::Attribute::VALUE_NOT_SET:
      break;
    }
    fail(where + ": attribute '" + a.name() + "' has no readable value");
    return failure();
  }

  LogicalResult readFunction(const graph::Function &f) {
    auto function = builder.create<func::FuncOp>(
        location(f.location()), f.name(), builder.getFunctionType({}, {}));
    Block *body = function.addEntryBlock();
    llvm::SmallVector<Value> values;
    llvm::SmallVector<Attribute> argNames;
    for (auto [index, arg] : llvm::enumerate(f.arguments())) {
      auto type = readType(arg.type(), "argument #" + llvm::Twine(index));
      if (failed(type))
        return failure();
      values.push_back(body->addArgument(*type, location(arg.location())));
      argNames.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
          "tg.name", builder.getStringAttr(arg.name()))));
    }

    OpBuilder ops = OpBuilder::atBlockEnd(body);
    for (auto [index, g] : llvm::enumerate(f.ops())) {
      std::string where = "op #" + std::to_string(index) + " (" + g.name() + ")";
      if (!RegisteredOperationName::lookup(g.name(), &context)) {
        fail(where + ": unknown op");
        return failure();
      }
      OperationState state(location(g.location()), g.name());
      for (uint32_t id : g.operands()) {
        if (id >= values.size()) {
          fail(where + ": operand refers to value " + std::to_string(id) +
               " but only " + std::to_string(values.size()) +
               " values are defined before it");
          return failure();
        }
        state.addOperands(values[id]);
      }
      for (const graph::TensorType &result : g.results()) {
        auto type = readType(result, where);
        if (failed(type))
          return failure();
        state.addTypes(*type);
      }
      std::optional<RegisteredOperationName> registered =
          RegisteredOperationName::lookup(g.name(), &context);
      for (const graph::Attribute &attr : g.attributes()) {
        // An op's own attributes, or a dialect's (a dotted name such as
        // tg.gradient_of); any other name is a typo or from another tgc.
        llvm::ArrayRef<StringAttr> known = registered->getAttributeNames();
        if (!llvm::StringRef(attr.name()).contains('.') &&
            !llvm::is_contained(known, StringAttr::get(&context, attr.name()))) {
          std::string names;
          for (StringAttr name : known)
            names += (names.empty() ? "" : ", ") + name.str();
          fail(where + ": unknown attribute '" + attr.name() + "' (" +
               g.name() + " has " + (names.empty() ? "none" : names) + ")");
          return failure();
        }
        // Given twice, one value would win without a word.
        if (state.attributes.get(attr.name())) {
          fail(where + ": attribute '" + attr.name() + "' is given twice");
          return failure();
        }
        auto value = readAttribute(attr, where);
        if (failed(value))
          return failure();
        state.addAttribute(attr.name(), *value);
      }
      Operation *op = ops.create(state);
      values.append(op->result_begin(), op->result_end());
    }

    llvm::SmallVector<Value> results;
    for (uint32_t id : f.results()) {
      if (id >= values.size()) {
        fail("the function returns value " + std::to_string(id) +
             " but only " + std::to_string(values.size()) +
             " values are defined");
        return failure();
      }
      results.push_back(values[id]);
    }
    ops.create<func::ReturnOp>(location(f.return_location()), results);
    function.setFunctionType(builder.getFunctionType(
        body->getArgumentTypes(), ValueRange(results).getTypes()));
    function.setAllArgAttrs(argNames);
    return success();
  }

  void readDeclarations(const graph::Graph &g, ModuleOp module) {
    auto f32 = [&](float value) { return builder.getF32FloatAttr(value); };
    if (g.has_optimizer()) {
      SmallVector<NamedAttribute> adam = {
          builder.getNamedAttr("name", builder.getStringAttr("adam"))};
      if (g.optimizer().has_beta1())
        adam.push_back(builder.getNamedAttr("beta1", f32(g.optimizer().beta1())));
      if (g.optimizer().has_beta2())
        adam.push_back(builder.getNamedAttr("beta2", f32(g.optimizer().beta2())));
      if (g.optimizer().has_epsilon())
        adam.push_back(
            builder.getNamedAttr("epsilon", f32(g.optimizer().epsilon())));
      if (g.optimizer().has_weight_decay())
        adam.push_back(builder.getNamedAttr(
            "weight_decay", f32(g.optimizer().weight_decay())));
      module->setAttr("tg.optimizer", builder.getDictionaryAttr(adam));
    }
    if (g.has_schedule()) {
      SmallVector<NamedAttribute> schedule = {
          builder.getNamedAttr("name", builder.getStringAttr("warmup")),
          builder.getNamedAttr(
              "d_model", builder.getI64IntegerAttr(g.schedule().d_model())),
          builder.getNamedAttr(
              "warmup", builder.getI64IntegerAttr(g.schedule().warmup_steps()))};
      if (g.schedule().has_factor())
        schedule.push_back(builder.getNamedAttr(
            "factor", builder.getF64FloatAttr(g.schedule().factor())));
      if (g.schedule().has_kind())
        schedule.push_back(builder.getNamedAttr(
            "kind", builder.getStringAttr(g.schedule().kind())));
      if (g.schedule().has_peak())
        schedule.push_back(builder.getNamedAttr(
            "peak", builder.getF64FloatAttr(g.schedule().peak())));
      if (g.schedule().has_minimum())
        schedule.push_back(builder.getNamedAttr(
            "minimum", builder.getF64FloatAttr(g.schedule().minimum())));
      module->setAttr("tg.schedule", builder.getDictionaryAttr(schedule));
    }
  }

  MLIRContext &context;
  std::string path;
  OpBuilder builder;
};
} // namespace

OwningOpRef<ModuleOp> readGraphFile(MLIRContext &context,
                                    llvm::StringRef path) {
  if (std::string why = checkInputPath(path, "the graph file"); !why.empty()) {
    emitError(UnknownLoc::get(&context)) << why;
    return nullptr;
  }
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    emitError(UnknownLoc::get(&context))
        << path << ": cannot open the graph file: " << file.getError().message();
    return nullptr;
  }
  graph::Graph graph;
  llvm::StringRef bytes = (*file)->getBuffer();
  if (isTextFormat(path)) {
    FirstParseError error;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&error);
    if (!parser.ParseFromString(bytes.str(), &graph)) {
      emitError(FileLineColLoc::get(&context, path, error.line, error.column))
          << error.message;
      return nullptr;
    }
  } else {
    // The CRC ends the file: checked first, so that a flipped byte is named
    // as such even where it breaks the protobuf encoding.
    size_t size = bytes.size();
    bool hasChecksum =
        size >= kChecksumBytes && bytes[size - kChecksumBytes] == kChecksumTag;
    if (hasChecksum && llvm::support::endian::read32le(bytes.end() - 4) !=
                           checksum(bytes.drop_back(kChecksumBytes))) {
      emitError(UnknownLoc::get(&context))
          << path << ": its checksum does not match its contents (a corrupt "
                     "file: write it again with --emit=graph)";
      return nullptr;
    }
    // Protobuf logs what it rejects (e.g. a string that is not UTF-8) to
    // stderr: the message below says it for the user.
    google::protobuf::LogSilencer quiet;
    if (!graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      emitError(UnknownLoc::get(&context))
          << path << ": not a tgc graph file (truncated or corrupt)";
      return nullptr;
    }
    // A graph from another program has none.
    if (graph.format() == kGraphFormat && (!hasChecksum || !graph.has_crc32())) {
      emitError(UnknownLoc::get(&context))
          << path << ": the file does not end with its checksum (truncated?)";
      return nullptr;
    }
  }
  return GraphReader(context, path).read(graph);
}

} // namespace tgc
