//===- FuzzGeneratedSource.cpp - input text never becomes generated code --===//
//
// Any bytes as the names an input gives the C++ that `tgc -o` generates: the
// file name of every op's location and the symbol of the first variable of
// a small language model (test/lit/passes/Inputs/tiny-lm.mlir), and the
// model's name. Outside its comments and string literals the generated
// source must be exactly what a plain name gives: nothing in a name becomes
// code (a newline and a preprocessor line in a location's file name once
// ran a command when the program started).
//
//===----------------------------------------------------------------------===//
#include "codegen/cpp/CppEmitter.h"
#include "test/fuzz/MlirFuzzing.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"

#include "ir/TgOps.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string seedModule;
std::string plainCode;

/// The generated source without its comments and the contents of its string
/// and character literals (adjacent string literals as one), whitespace
/// runs as one space: the code a reader of the text would compile. A literal or comment that does not end, or a
/// line break inside a literal, is itself a finding.
std::string codeOf(const std::string &cpp) {
  std::string out;
  size_t i = 0, n = cpp.size();
  while (i < n) {
    char c = cpp[i];
    if (cpp.compare(i, 2, "//") == 0) {
      while (i < n && cpp[i] != '\n')
        ++i;
      out += ' ';
    } else if (cpp.compare(i, 2, "/*") == 0) {
      size_t end = cpp.find("*/", i + 2);
      if (end == std::string::npos)
        std::abort();
      i = end + 2;
      out += ' ';
    } else if (c == '"' || c == '\'') {
      for (++i; i < n && cpp[i] != c; ++i) {
        if (cpp[i] == '\\')
          ++i;
        if (i >= n || cpp[i] == '\n')
          std::abort();
      }
      ++i;
      // Adjacent string literals are one literal (a text of several lines
      // is written a line a literal).
      if (c == '"' && out.size() >= 3 && out.compare(out.size() - 3, 3, "\"\" ") == 0)
        out.pop_back();
      else {
        out += c;
        out += c;
      }
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      if (out.empty() || out.back() != ' ')
        out += ' ';
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

/// The generated source of the seed model with `name` in every place a name
/// reaches it; empty when the compiler refuses the name (with an error).
std::string generate(const std::string &name) {
  tgc::fuzz::FuzzContext fuzz;
  mlir::MLIRContext &context = fuzz.context();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(seedModule, &context);
  if (!module)
    std::abort(); // the seed itself
  auto located = mlir::FileLineColLoc::get(&context, name, 1, 1);
  module->walk([&](mlir::Operation *op) { op->setLoc(located); });
  tgc::tg::VariableOp first = *module->getOps<tgc::tg::VariableOp>().begin();
  mlir::StringAttr oldName = first.getSymNameAttr();
  auto newName = mlir::StringAttr::get(&context, name);
  if (mlir::SymbolTable::lookupSymbolIn(*module, newName))
    return {}; // another variable's name: not a rename
  if (mlir::failed(mlir::SymbolTable::replaceAllSymbolUses(oldName, newName,
                                                           *module)))
    return {};
  mlir::SymbolTable::setSymbolName(first, newName);
  int before = fuzz.errors();
  fuzz.compile(*module);
  if (fuzz.errors() != before)
    return {};
  tgc::CompiledModelInfo info;
  info.name = name;
  info.manifest = "tgc fuzz\n" + name;
  std::string cpp;
  llvm::raw_string_ostream os(cpp);
  bool failed = mlir::failed(tgc::emitCpp({*module}, info, os));
  fuzz.expectErrorIf(failed);
  return failed ? std::string() : cpp;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::ifstream file(TGC_SOURCE_DIR "/test/lit/passes/Inputs/tiny-lm.mlir");
  std::stringstream text;
  text << file.rdbuf();
  seedModule = text.str();
  std::string plain = generate("plain");
  if (seedModule.empty() || plain.empty())
    std::abort();
  plainCode = codeOf(plain);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string name(reinterpret_cast<const char *>(data), size);
  std::string cpp = generate(name);
  if (!cpp.empty() && codeOf(cpp) != plainCode) {
    if (std::getenv("TGC_FUZZ_VERBOSE")) {
      std::string code = codeOf(cpp);
      size_t at = 0;
      while (at < code.size() && at < plainCode.size() &&
             code[at] == plainCode[at])
        ++at;
      llvm::errs() << "the code differs at character " << at << ":\n"
                   << code.substr(at > 200 ? at - 200 : 0, 400) << "\n---\n"
                   << plainCode.substr(at > 200 ? at - 200 : 0, 400) << "\n";
    }
    std::abort(); // the name changed the code
  }
  return 0;
}
