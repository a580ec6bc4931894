//===- ThreadDefaults.cpp - OpenMP defaults unless the user chose ------===//
#include "runtime/program/main/ThreadDefaults.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

// Weak: CUDA programs link this file without OpenMP, and have no OpenMP
// threads to describe or to make wait.
#pragma weak omp_get_max_threads

namespace tgc::runtime {

/// Set for the second start: which defaults this program chose.
static constexpr const char *kChosenVariable = "TGC_THREAD_DEFAULTS";

static bool linksOpenMP() { return &omp_get_max_threads != nullptr; }

/// The path of the running program's file, or "" when it cannot be named
/// safely: removed or replaced since it started (another file at the path
/// would be a different program).
static std::string ownExecutable() {
  char path[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0)
    return "";
  path[length] = '\0';
  struct stat running, named;
  if (stat("/proc/self/exe", &running) != 0 || stat(path, &named) != 0 ||
      running.st_dev != named.st_dev || running.st_ino != named.st_ino)
    return "";
  return path;
}

void chooseThreadDefaults(char **argv, double stepFlops) {
  if (!linksOpenMP() || std::getenv(kChosenVariable))
    return;
  std::string chosen;
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT") &&
      setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0) == 0)
    chosen += "wait";
  if (!std::getenv("OMP_NUM_THREADS") && stepFlops < kSmallStepFlops &&
      setenv("OMP_NUM_THREADS", "1", /*overwrite=*/0) == 0)
    chosen += chosen.empty() ? "threads" : ",threads";
  if (chosen.empty() || setenv(kChosenVariable, chosen.c_str(), 1) != 0)
    return;
  // The same file by its own path (argv[0] may be a name looked up in PATH),
  // so that the process keeps its name for ps, top and pgrep (the kernel
  // names a process after the file it executes: "/proc/self/exe" would make
  // it "exe"); the same process id, arguments and signal dispositions.
  std::string self = ownExecutable();
  if (!self.empty())
    execv(self.c_str(), argv);
  // Not in effect: don't report them.
  unsetenv(kChosenVariable);
  if (chosen.find("wait") != std::string::npos)
    unsetenv("OMP_WAIT_POLICY");
  if (chosen.find("threads") != std::string::npos)
    unsetenv("OMP_NUM_THREADS");
}

std::string describeThreads() {
  if (!linksOpenMP())
    return "";
  int threads = omp_get_max_threads();
  const char *chosen = std::getenv(kChosenVariable);
  bool fewThreads = chosen && std::strstr(chosen, "threads");
  std::string text = std::to_string(threads) +
                     (threads == 1 ? " thread" : " threads") +
                     (fewThreads ? " (a small step)" : "");
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
