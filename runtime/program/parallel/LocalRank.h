//===- LocalRank.h - a process's place among those on its machine -*- C++ -*-===//
//
// One GPU per process: the processes a launcher started on one machine take
// its GPUs in turn by their local rank, which the launcher says in its own
// variables. Read before MPI is joined (the device opens first).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_PARALLEL_LOCALRANK_H
#define TGC_RUNTIME_PROGRAM_PARALLEL_LOCALRANK_H

#include <algorithm>
#include <cstdlib>

namespace tgc::runtime {

struct LocalRank {
  int rank = 0;  ///< among the processes on this machine
  int count = 1; ///< of them, where the launcher says (0: it does not)
};

/// This process's local rank from Open MPI's, MPICH's (and Intel MPI's),
/// MVAPICH's or Slurm's variables; {0, 1} without a launcher. Slurm's task
/// counts per node vary in form ("2(x3)"): its count is not read (0).
inline LocalRank localRank() {
  const char *names[][2] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},
      {"SLURM_LOCALID", nullptr}};
  for (const auto &name : names)
    if (const char *value = std::getenv(name[0])) {
      LocalRank local;
      local.rank = std::max(0, std::atoi(value));
      const char *size = name[1] ? std::getenv(name[1]) : nullptr;
      local.count = size ? std::max(local.rank + 1, std::atoi(size)) : 0;
      return local;
    }
  return {};
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_PARALLEL_LOCALRANK_H
