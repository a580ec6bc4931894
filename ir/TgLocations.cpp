//===- TgLocations.cpp - an op and its model source line, as text ---------===//
#include "ir/TgLocations.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc {

std::string describeLocation(Location loc) {
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    if (fused.getLocations().empty())
      return "?";
    std::string first = describeLocation(fused.getLocations().front());
    size_t more = fused.getLocations().size() - 1;
    return more ? first + " (+" + std::to_string(more) + " fused)" : first;
  }
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) +
           ":" + std::to_string(file.getColumn());
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return describeLocation(name.getChildLoc());
  return "?";
}

std::string describeOp(Operation *op) {
  std::string what =
      op->getName().getStringRef().str() + " at " + describeLocation(op->getLoc());
  if (auto fused = llvm::dyn_cast<tg::FusedElementwiseOp>(op)) {
    what += " (one of:";
    for (Operation &inner : fused.getBody().front().without_terminator())
      what += " " + inner.getName().getStringRef().str() + " at " +
              describeLocation(inner.getLoc()) + ";";
    what.back() = ')';
  }
  return what;
}

} // namespace tgc
