//===- ThreadDefaults.cpp - passive OpenMP waiting unless the user chose --===//
#include "runtime/program/ThreadDefaults.h"

#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <unistd.h>

// Weak: CUDA programs link this file without OpenMP, and have no OpenMP
// threads to describe or to make wait.
#pragma weak omp_get_max_threads

namespace tgc::runtime {

static bool linksOpenMP() { return &omp_get_max_threads != nullptr; }

void waitPassivelyUnlessChosen(char **argv) {
  if (!linksOpenMP() || std::getenv("OMP_WAIT_POLICY") ||
      std::getenv("GOMP_SPINCOUNT"))
    return;
  if (setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0) != 0)
    return;
  // The same file (argv[0] may be a name looked up in PATH), the same
  // process id, arguments and signal dispositions.
  execv("/proc/self/exe", argv);
  unsetenv("OMP_WAIT_POLICY"); // not in effect: don't report it
}

std::string describeThreads() {
  if (!linksOpenMP())
    return "";
  int threads = omp_get_max_threads();
  std::string text = std::to_string(threads) +
                     (threads == 1 ? " thread" : " threads");
  const char *policy = std::getenv("OMP_WAIT_POLICY");
  if (const char *spin = std::getenv("GOMP_SPINCOUNT"))
    return text + ", GOMP_SPINCOUNT=" + spin;
  if (policy && strcasecmp(policy, "passive") == 0)
    return text + ", passive waiting";
  if (policy)
    return text + ", OMP_WAIT_POLICY=" + policy;
  return text;
}

} // namespace tgc::runtime
