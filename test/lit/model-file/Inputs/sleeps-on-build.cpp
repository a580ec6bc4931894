// A model whose build function marks that it runs ($TGC_TEST_MARK, its
// process id), then waits: a signal sent to tgc then must reach the process
// that runs it.
#include "frontend/ModelRegistry.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <unistd.h>

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &, const tgc::ModelOptions &) {
  if (const char *mark = std::getenv("TGC_TEST_MARK"))
    std::ofstream(mark) << getpid() << "\n";
  std::this_thread::sleep_for(std::chrono::seconds(60));
  return mlir::failure();
}

TGC_REGISTER_MODEL({"sleeps", "waits while building", {"tiny"}, "tiny", build});
