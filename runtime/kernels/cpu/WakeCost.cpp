//===- WakeCost.cpp - small GEMMs on the calling thread -------------------===//
#include "runtime/kernels/cpu/WakeCost.h"

#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace tgc::cpu {

bool workersSleep() {
  static const bool sleep = [] {
    const char *policy = std::getenv("OMP_WAIT_POLICY");
    const char *spin = std::getenv("GOMP_SPINCOUNT");
    return (policy && strcasecmp(policy, "passive") == 0) ||
           (spin && std::strspn(spin, " 0") == std::strlen(spin) &&
            std::strchr(spin, '0'));
  }();
  return sleep;
}

CallingThreadOnly::CallingThreadOnly(bool alone) {
  if (!alone || omp_in_parallel())
    return;
  int threads = omp_get_max_threads();
  if (threads > 1) {
    omp_set_num_threads(1);
    restore = threads;
  }
}

CallingThreadOnly::~CallingThreadOnly() {
  if (restore)
    omp_set_num_threads(restore);
}

} // namespace tgc::cpu
