//===- EmitContext.cpp - where each value lives, formatting helpers -------===//
#include "codegen/lowering/EmitContext.h"
#include "codegen/lowering/StepOpCost.h"

#include "ir/TgLocations.h"
#include "ir/TgOps.h"
#include "passes/MemoryPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/ConvertUTF.h"

#include <cstdio>

using namespace mlir;

namespace tgc {
namespace cpp {

/// `printed` (a number in %g form) with a point if it has none, so that C++
/// reads it as floating-point.
static std::string withPoint(std::string printed) {
  if (printed.find_first_of(".en") == std::string::npos)
    printed += ".0";
  return printed;
}

std::string floatLiteral(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", static_cast<float>(value));
  return withPoint(text) + "f";
}

std::string doubleLiteral(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return withPoint(text);
}

std::string stepOpRow(Operation *op) {
  // A fused group names the ops it computes.
  std::string row = "{";
  row += stringLiteral(op->getName().getStringRef());
  row += ", ";
  row += stringLiteral(describeOp(op));
  row += ", " + std::to_string(operandAndResultBytes(op));
  row += ", " + std::to_string(productFlops(op)) + "}";
  return row;
}

std::string stringLiteral(StringRef text, bool newlines) {
  std::string out = "\"";
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == '?') {
      // \? as well: "??/" would be a trigraph (a backslash) to a compiler
      // of C++14 or older that reads the emitted source with -trigraphs.
      out += '\\';
      out += c;
    } else if (c == '\n' && newlines) {
      out += "\\n\"\n    \""; // one source line per manifest line
    } else if (byte < 0x20 || byte >= 0x7f) {
      // The same bytes, spelled in ASCII: a control character or a byte of
      // UTF-8 (valid or not, which nvcc refuses in source) as three octal
      // digits, which no following digit can extend as it would \x.
      out += '\\';
      out += static_cast<char>('0' + (byte >> 6));
      out += static_cast<char>('0' + ((byte >> 3) & 7));
      out += static_cast<char>('0' + (byte & 7));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

/// Whether the UTF-8 character at `text[i]` (valid UTF-8) is one of
/// Unicode's bidirectional controls, which make an editor show code in
/// another order than the compiler reads it: U+061C, U+200E, U+200F,
/// U+202A-U+202E, U+2066-U+2069.
bool isBidiControl(StringRef text, size_t i) {
  auto at = [&](size_t k) {
    return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u;
  };
  if (at(i) == 0xd8 && at(i + 1) == 0x9c)
    return true;
  if (at(i) != 0xe2)
    return false;
  const unsigned second = at(i + 1), third = at(i + 2);
  return (second == 0x80 && (third == 0x8e || third == 0x8f ||
                             (third >= 0xaa && third <= 0xae))) ||
         (second == 0x81 && third >= 0xa6 && third <= 0xa9);
}

} // namespace

std::string commentText(StringRef text) {
  // Bytes that are not UTF-8 (a file name can hold any) become '?' too:
  // nvcc refuses them even in a comment.
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data());
  const bool utf8 = llvm::isLegalUTF8String(&begin, begin + text.size());
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    auto byte = static_cast<unsigned char>(c);
    if (utf8 && isBidiControl(text, i)) {
      out += '?';
      i += byte == 0xd8 ? 1 : 2;
    } else if (byte < 0x20 || byte == 0x7f || c == '\\' ||
               (byte >= 0x80 && !utf8)) {
      out += '?';
    } else if (c == '/' && !out.empty() && out.back() == '*') {
      out += "?/";
    } else {
      out += c;
    }
    // No "??": with -trigraphs, "??/" ending a // comment is a backslash
    // that splices the next line of code into the comment.
    if (out.size() >= 2 && out.back() == '?' && out[out.size() - 2] == '?')
      out.insert(out.size() - 1, " ");
  }
  return out;
}

std::string arrayLiteral(ArrayRef<int64_t> values) {
  std::string s = "{";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s + "}";
}

ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

int64_t numElements(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getNumElements();
}

std::optional<float> splatLiteral(Value value) {
  auto constant = value.getDefiningOp<tg::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto splat = llvm::dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!splat || !splat.getElementType().isF32())
    return std::nullopt;
  return splat.getSplatValue<APFloat>().convertToFloat();
}

bool onlyReadAsLiteral(Value constant) {
  return splatLiteral(constant) &&
         llvm::all_of(constant.getUsers(), [](Operation *user) {
           return user->hasTrait<tg::traits::ElementwiseLoop>();
         });
}

/// The generated accessor of an arena value of `value`'s element type.
static const char *arenaAccessor(Value value) {
  Type element = llvm::cast<RankedTensorType>(value.getType()).getElementType();
  if (element.isF32())
    return "F(f, ";
  if (element.isBF16())
    return "H(f, ";
  return "I(f, ";
}

FailureOr<std::string> EmitContext::pointer(Value value) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
    unsigned n = arg.getArgNumber();
    if (n < arguments.size() && !arguments[n].empty())
      return arguments[n];
    return emitError(value.getLoc()) << "argument #" << n << " has no role";
  }
  Operation *def = value.getDefiningOp();
  if (auto load = llvm::dyn_cast<tg::LoadOp>(def))
    return "(" + variableAddress(load.getVariable()) + ")";
  // A view (tg.reshape, tg.stop_gradient) is its source's bytes, wherever
  // they are: the arena, the state, a constant or an argument.
  if (def->hasTrait<tg::traits::ResultIsView>())
    return pointer(def->getOperand(0));
  if (auto it = constants.find(value); it != constants.end())
    return it->second.kernel;
  FailureOr<int64_t> offset = arenaOffset(llvm::cast<OpResult>(value));
  if (failed(offset))
    return failure();
  return std::string(arenaAccessor(value)) + std::to_string(*offset) + ")";
}

FailureOr<int64_t> EmitContext::arenaOffset(OpResult result) {
  Operation *def = result.getOwner();
  auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
  unsigned index = result.getResultNumber();
  if (!offsets || offsets.size() <= static_cast<int64_t>(index) ||
      offsets[index] < 0)
    return def->emitOpError()
           << "has no arena offset for result #" << index
           << " (run tg-plan-memory before emitting C++)";
  return offsets[index];
}

std::string EmitContext::variableAddress(StringRef name) const {
  auto cache = cacheOffsets.find(name);
  std::string base =
      cache != cacheOffsets.end()
          ? programTarget.cacheBase() + " + " + std::to_string(cache->second)
          : programTarget.stateBase() + " + " +
                std::to_string(variableOffset(name));
  return base + " /* @" + commentText(name) + " */";
}

FailureOr<std::string> EmitContext::position(Value value) {
  auto arg = llvm::dyn_cast<BlockArgument>(value);
  if (arg && arg.getArgNumber() < arguments.size() &&
      arguments[arg.getArgNumber()] == "&f.position")
    return std::string("f.position");
  return emitError(value.getLoc())
         << "is used as a decoding position but is not the function's "
            "'position' argument";
}

FailureOr<std::string> EmitContext::hostPointer(Value value) {
  if (auto it = constants.find(value); it != constants.end())
    return it->second.host;
  // The key is a host array in the frame on both targets: kernels get it
  // inside a Dropout by value. So are the host scalars of the frame (a
  // dropout's run-time rate, the optimizer's controls): "&f.<field>".
  if (auto arg = llvm::dyn_cast<BlockArgument>(value);
      arg && arg.getArgNumber() < arguments.size() &&
      (arguments[arg.getArgNumber()] == "f.dropoutKey" ||
       StringRef(arguments[arg.getArgNumber()]).starts_with("&f.")))
    return arguments[arg.getArgNumber()];
  return programTarget.hostRead(value, *this);
}

} // namespace cpp
} // namespace tgc
