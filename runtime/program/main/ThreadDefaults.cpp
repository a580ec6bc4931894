//===- ThreadDefaults.cpp - OpenMP defaults unless the user chose ------===//
#include "runtime/program/main/ThreadDefaults.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <sched.h>
#include <string_view>
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

/// The cores this process may run on (its affinity mask, as taskset and
/// cgroup cpusets set it).
static int availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

/// OMP_NUM_THREADS's list ("8" or "8,2", one count per nesting level) with
/// each count over `cores` cut to `cores`; anything else as it was
/// (libgomp judges it).
static std::string clampThreadCounts(std::string_view list, int cores) {
  std::string clamped;
  for (size_t start = 0; start <= list.size();) {
    size_t end = std::min(list.find(',', start), list.size());
    std::string_view item = list.substr(start, end - start);
    unsigned long long count = 0;
    auto [stop, error] =
        std::from_chars(item.data(), item.data() + item.size(), count);
    bool tooMany = (error == std::errc::result_out_of_range ||
                    (error == std::errc() && count > unsigned(cores))) &&
                   stop == item.data() + item.size();
    clamped += tooMany ? std::to_string(cores) : std::string(item);
    if (end < list.size())
      clamped += ',';
    start = end + 1;
  }
  return clamped;
}

void chooseThreadDefaults(char **argv, double stepFlops) {
  if (!linksOpenMP() || std::getenv(kChosenVariable))
    return;
  std::string chosen;
  const bool spin = stepFlops >= kSpinStepFlops;
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT") &&
      (spin ? setenv("GOMP_SPINCOUNT", kSpinCount, /*overwrite=*/0)
            : setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0)) == 0)
    chosen += "wait";
  if (!std::getenv("OMP_NUM_THREADS") && stepFlops < kSmallStepFlops &&
      setenv("OMP_NUM_THREADS", "1", /*overwrite=*/0) == 0)
    chosen += chosen.empty() ? "threads" : ",threads";
  // 100000 threads crash libgomp (each needs a stack); more threads than
  // cores only wait for each other.
  if (const char *threads = std::getenv("OMP_NUM_THREADS")) {
    int cores = availableCores();
    std::string clamped = clampThreadCounts(threads, cores);
    if (clamped != threads) {
      std::fprintf(stderr,
                   "note: OMP_NUM_THREADS=%s is more than the %d cores this "
                   "process may use: OMP_NUM_THREADS=%s\n",
                   threads, cores, clamped.c_str());
      if (setenv("OMP_NUM_THREADS", clamped.c_str(), 1) == 0)
        chosen += chosen.empty() ? "clamped" : ",clamped";
    }
  }
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
    unsetenv(spin ? "GOMP_SPINCOUNT" : "OMP_WAIT_POLICY");
  if (chosen.find("threads") != std::string::npos)
    unsetenv("OMP_NUM_THREADS");
}

std::string describeThreads() {
  if (!linksOpenMP())
    return "";
  int threads = omp_get_max_threads();
  const char *chosen = std::getenv(kChosenVariable);
  bool fewThreads = chosen && std::strstr(chosen, "threads");
  bool clamped = chosen && std::strstr(chosen, "clamped");
  std::string text = std::to_string(threads) +
                     (threads == 1 ? " thread" : " threads") +
                     (fewThreads ? " (a small step)" : "") +
                     (clamped ? " (OMP_NUM_THREADS cut to the cores)" : "");
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
