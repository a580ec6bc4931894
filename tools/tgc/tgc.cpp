//===- tgc.cpp - the tgc compiler, with the built-in models --------------===//
#include "models/Registration.h"
#include "runtime/program/ProcessEnd.h"
#include "tools/driver/Driver.h"
#include "tools/driver/ModelCodeWatch.h"

#include <cstdlib>

namespace {

/// Where a runtime library tgc links cannot return to it (ProcessEnd.h: an
/// interrupt outside the training loop), tgc exits as a training program
/// does: with the status it is given, exit handlers and all.
[[noreturn]] void exitProcess(int status) { std::exit(status); }
/// An end at once is tgc's own, after its message: not the model file's
/// _exit() that a watching parent reports (ModelCodeWatch.h).
[[noreturn]] void exitProcessNow(int status) {
  tgc::markModelCodeRunning(false);
  std::_Exit(status);
}

} // namespace

int main(int argc, char **argv) {
  tgc::runtime::setProcessEnders(exitProcess, exitProcessNow);
  tgc::models::registerBuiltinModels();
  return tgc::tgcMain(argc, argv);
}
