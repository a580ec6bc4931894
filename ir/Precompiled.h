// The headers that nearly every MLIR-side file of tgc includes, compiled once
// per build as CMake's precompiled header (tgc_use_precompiled_mlir in the
// top-level CMakeLists.txt) instead of once per file: a pass then compiles in
// about 5 s instead of 11. Only include-guarded headers whose meaning does not
// depend on a macro a file sets belong here (never a *.inc).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include "ir/TgOps.h"
