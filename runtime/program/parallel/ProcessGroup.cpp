//===- ProcessGroup.cpp - which group a program was started in ------------===//
#include "runtime/program/parallel/ProcessGroup.h"

#include "runtime/program/CompiledStep.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tgc::runtime {

#ifdef TGC_HAVE_MPI
std::unique_ptr<ProcessGroup> openMpiProcessGroup(int &argc, char **&argv);
#endif

namespace {

ProcessGroup *active = nullptr;

/// The number of processes a launcher started (Open MPI's mpirun, or a
/// PMI-based one such as srun), or 0 without one.
long launchedProcesses() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *value = std::getenv(name))
      return std::strtol(value, nullptr, 10);
  return 0;
}

} // namespace

bool joinProcessGroup(int &argc, char **&argv,
                      std::unique_ptr<ProcessGroup> &group) {
  long processes = launchedProcesses();
  if (processes <= 0)
    return true; // a plain ./train
#ifdef TGC_HAVE_MPI
  group = openMpiProcessGroup(argc, argv);
  active = group.get();
  return group != nullptr;
#else
  (void)argc;
  (void)argv;
  if (processes == 1)
    return true;
  std::fprintf(stderr,
               "error: started as one of %ld processes (mpirun), but this "
               "program was built without MPI (tgc configured without Open "
               "MPI: apt-get install libopenmpi-dev openmpi-bin, then "
               "reconfigure); it trains in one process only\n",
               processes);
  return false;
#endif
}

ProcessGroup *activeProcessGroup() { return active; }

void weighByTokens(const StepFrame &f, float *data, int64_t count) {
  // One thread (GPU programs link no OpenMP): a pass over the gradients,
  // small beside the exchange itself.
  const float tokens = f.batchTokens;
  for (int64_t i = 0; i + 1 < count; ++i)
    data[i] *= tokens;
  data[count - 1] = tokens;
}

void allReduceHostSum(StepFrame &f, float *data, int64_t count) {
  weighByTokens(f, data, count);
  active->sum(data, count, "the gradients and the token count");
  divideWeightByTokens(f, data[count - 1]);
}

void divideWeightByTokens(StepFrame &f, float globalTokens) {
  // A global batch without tokens has zero gradients: any weight will do.
  f.gradWeight /= std::max(globalTokens, 1.0f);
}

} // namespace tgc::runtime
