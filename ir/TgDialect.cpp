//===- TgDialect.cpp - registration of the tg dialect -------------------===//
#include "ir/TgDialect.h"
#include "ir/TgOps.h"

#include "ir/TgDialect.cpp.inc"
#include "ir/TgEnums.cpp.inc"

using namespace tgc::tg;

void TGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/TgOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "ir/TgOps.cpp.inc"
