//===- tgc.cpp - the tgc compiler, with the built-in models --------------===//
#include "models/Registration.h"
#include "tools/driver/Driver.h"

int main(int argc, char **argv) {
  tgc::models::registerBuiltinModels();
  return tgc::tgcMain(argc, argv);
}
