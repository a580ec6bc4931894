//===- ModelDriverMain.cpp - main() of the drivers tgc_add_model builds --===//
//
// The driver's models are the ones its model files register
// (TGC_REGISTER_MODEL); the training programs it writes are built against
// the tgc package it was built with, TGC_PACKAGE_PREFIX (tgcConfig.cmake).
// It ends the process as tgc does where a runtime library cannot return
// (runtime/program/ProcessEnd.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/program/ProcessEnd.h"
#include "tools/driver/Driver.h"

#include <cstdlib>

namespace {

[[noreturn]] void exitProcess(int status) { std::exit(status); }
[[noreturn]] void exitProcessNow(int status) { std::_Exit(status); }

} // namespace

int main(int argc, char **argv) {
  tgc::runtime::setProcessEnders(exitProcess, exitProcessNow);
  return tgc::tgcMain(argc, argv, TGC_PACKAGE_PREFIX);
}
