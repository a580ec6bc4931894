//===- ModelDriverMain.cpp - main() of the drivers tgc_add_model builds --===//
//
// The driver's models are the ones its model files register
// (TGC_REGISTER_MODEL); the training programs it writes are built against
// the tgc package it was built with, TGC_PACKAGE_PREFIX (tgcConfig.cmake).
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Driver.h"

int main(int argc, char **argv) {
  return tgc::tgcMain(argc, argv, TGC_PACKAGE_PREFIX);
}
