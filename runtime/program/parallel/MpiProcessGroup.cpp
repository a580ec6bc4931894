//===- MpiProcessGroup.cpp - a data-parallel group on MPI -----------------===//
//
// One MPI_COMM_WORLD, errors returned rather than fatal so that each names
// the exchange it broke, and a watchdog: a peer that died or hangs leaves
// the others blocked in a collective, so a process that has waited longer
// than TGC_PEER_TIMEOUT seconds (default 300) for one says so and ends
// (mpirun then ends the rest). Under mpirun, a rank that dies is usually
// reported by mpirun itself first, which ends the others.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/parallel/ProcessGroup.h"

#include "runtime/program/ProcessEnd.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace tgc::runtime {

namespace {

using Clock = std::chrono::steady_clock;

class MpiProcessGroup final : public ProcessGroup {
public:
  MpiProcessGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (const char *value = std::getenv("TGC_PEER_TIMEOUT")) {
      char *end = nullptr;
      long seconds = std::strtol(value, &end, 10);
      if (end == value || *end != '\0' || seconds < 1)
        std::fprintf(stderr,
                     "warning: rank %d: TGC_PEER_TIMEOUT=%.40s is not a whole "
                     "number of seconds >= 1; the timeout stays %ld s\n",
                     rank_, value, timeoutSeconds);
      else
        timeoutSeconds = seconds;
    }
    watchdog = std::thread([this] { watch(); });
  }

  ~MpiProcessGroup() override {
    stop = true;
    watchdog.join();
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void sum(float *values, int64_t count, const char *what) override {
    allReduce(values, count, MPI_FLOAT, MPI_SUM, what);
  }
  void sum(double *values, int64_t count, const char *what) override {
    allReduce(values, count, MPI_DOUBLE, MPI_SUM, what);
  }
  void sumAfterFirstsWork(double *values, int64_t count,
                          const char *what) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count),
                        MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
          what);
  }
  void reduceScatter(float *data, const int *counts) override {
    begin("the optimizer's gradient shares");
    check(MPI_Reduce_scatter(MPI_IN_PLACE, data, counts, MPI_FLOAT, MPI_SUM,
                             MPI_COMM_WORLD),
          "the optimizer's gradient shares");
    end();
  }
  void allGather(float *data, const int *counts) override {
    std::vector<int> displacements(static_cast<size_t>(size_), 0);
    for (int r = 1; r < size_; ++r)
      displacements[r] = displacements[r - 1] + counts[r - 1];
    begin("the updated parameters");
    check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, data, counts,
                         displacements.data(), MPI_FLOAT, MPI_COMM_WORLD),
          "the updated parameters");
    end();
  }
  void sumToFirst(float *data, int64_t count) override {
    begin("the Adam moments for a checkpoint");
    check(MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : data, data,
                     static_cast<int>(count), MPI_FLOAT, MPI_SUM, 0,
                     MPI_COMM_WORLD),
          "the Adam moments for a checkpoint");
    end();
  }

  void shareFromFirst(void *data, int64_t bytes) override {
    waitingFor.store("rank 0's NCCL id");
    waitingSince.store(Clock::now().time_since_epoch().count());
    if (MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS) {
      std::fprintf(stderr, "error: rank %d of %d: receiving rank 0's NCCL id "
                           "failed; every process stops\n", rank_, size_);
      abort(1);
    }
    waitingSince.store(0);
  }
  void minMax(uint64_t value, uint64_t &min, uint64_t &max) override {
    uint64_t pair[2] = {value, ~value}; // max of ~v is ~min
    allReduce(pair, 2, MPI_UINT64_T, MPI_MAX, "the parameter checksums");
    max = pair[0];
    min = ~pair[1];
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    endProcessNow(code); // not reached: MPI_Abort ends the processes
  }

private:
  /// The watchdog's view of the exchange under way.
  void begin(const char *what) {
    waitingFor.store(what);
    waitingSince.store(Clock::now().time_since_epoch().count());
  }
  void end() { waitingSince.store(0); }
  void check(int status, const char *what) {
    if (status == MPI_SUCCESS)
      return;
    char message[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, message, &length);
    std::fprintf(stderr,
                 "error: rank %d of %d: exchanging %s with the other processes "
                 "failed: %.*s; every process stops\n",
                 rank_, size_, what, length, message);
    abort(1);
  }

  void allReduce(void *values, int64_t count, MPI_Datatype type, MPI_Op op,
                 const char *what) {
    int bytes = 0;
    MPI_Type_size(type, &bytes);
    char *data = static_cast<char *>(values);
    // MPI counts are int: large buffers go in pieces.
    constexpr int64_t kPiece = 1 << 30;
    begin(what);
    for (int64_t done = 0; done < count; done += kPiece) {
      int n = static_cast<int>(std::min(kPiece, count - done));
      check(MPI_Allreduce(MPI_IN_PLACE, data + done * bytes, n, type, op,
                          MPI_COMM_WORLD),
            what);
    }
    end();
  }

  /// Ends this process when one exchange has waited too long.
  void watch() {
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int64_t since = waitingSince.load();
      if (since == 0)
        continue;
      auto waited = Clock::now() - Clock::time_point(Clock::duration(since));
      if (waited < std::chrono::seconds(timeoutSeconds))
        continue;
      std::fprintf(stderr,
                   "error: rank %d of %d has waited %ld s for the other "
                   "processes while summing %s: one of them has died or "
                   "hangs; this process stops (checkpoints are written only "
                   "whole, so the last one is intact)\n",
                   rank_, size_, timeoutSeconds, waitingFor.load());
      std::fflush(stderr);
      // At once: the main thread is blocked in MPI, and exit handlers
      // could wait for it.
      endProcessNow(1);
    }
  }

  int rank_ = 0, size_ = 1;
  long timeoutSeconds = 300;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> waitingSince{0};
  std::atomic<const char *> waitingFor{""};
  std::thread watchdog;
};

} // namespace

std::unique_ptr<ProcessGroup> openMpiProcessGroup(int &argc, char **&argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    std::fprintf(stderr, "error: MPI_Init failed: this process cannot join "
                         "the run's other processes\n");
    return nullptr;
  }
  return std::make_unique<MpiProcessGroup>();
}

} // namespace tgc::runtime
