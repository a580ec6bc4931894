//===- MpiProcessGroup.cpp - a data-parallel group on MPI -----------------===//
//
// One MPI_COMM_WORLD, errors returned rather than fatal so that each names
// the exchange it broke, and a watchdog: a peer that died or hangs leaves
// the others blocked in a collective, so a process that has waited longer
// than TGC_PEER_TIMEOUT seconds (default 300) for one says so and ends
// (mpirun then ends the rest). Under mpirun, a rank that dies is usually
// reported by mpirun itself first, which ends the others.
//
// While rank 0 validates, saves or evaluates at the end (beginFirstsWork
// .. sumAfterFirstsWork), which may take far longer than the timeout, its
// progress (noteProgress) sends each other rank an empty message at most
// once each 250 ms (kProgressPeriod, well inside any rank's timeout of 1 s
// or more: the ranks' TGC_PEER_TIMEOUT may differ) (tag kProgressTag). Every process's
// exchanges in that phase are nonblocking ones; the others take each
// message as it comes and count their timeout from the last. The exchange
// that ends the phase carries how many rank 0 sent, so that each rank takes
// every one before the next phase.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/parallel/ProcessGroup.h"

#include "runtime/program/ProcessEnd.h"
#include "runtime/program/Progress.h"

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

/// The tag of rank 0's signs of progress (the only point-to-point messages).
constexpr int kProgressTag = 1;
/// The most signs rank 0 sends a rank in that time.
constexpr std::chrono::milliseconds kProgressPeriod{250};

class MpiProcessGroup final : public ProcessGroup {
public:
  MpiProcessGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (const char *value = std::getenv("TGC_PEER_TIMEOUT")) {
      char *end = nullptr;
      long seconds = std::strtol(value, &end, 10);
      // At most 10^7 s (116 days): the watchdog counts in nanoseconds.
      if (end == value || *end != '\0' || seconds < 1 || seconds > 10000000)
        std::fprintf(stderr,
                     "warning: rank %d: TGC_PEER_TIMEOUT=%.40s is not a whole "
                     "number of seconds from 1 to 10000000; the timeout stays "
                     "%ld s\n",
                     rank_, value, timeoutSeconds);
      else
        timeoutSeconds = seconds;
    }
    if (rank_ == 0 && size_ > 1) {
      listening = this;
      progressListener.store([] { listening->sendProgress(); });
    }
    watchdog = std::thread([this] { watch(); });
  }

  ~MpiProcessGroup() override {
    progressListener.store(nullptr);
    listening = nullptr;
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
  void beginFirstsWork(const char *what) override {
    double here = 0;
    allReduce(&here, 1, MPI_DOUBLE, MPI_SUM, what);
    firstsWork = true;
    sendsProgress = rank_ == 0;
    nextProgress = Clock::time_point{}; // rank 0's first sign goes at once
  }
  void sumAfterFirstsWork(double *values, int64_t count,
                          const char *what) override {
    // One more value: how many signs rank 0 sent (the others add 0).
    std::vector<double> all(values, values + count);
    all.push_back(rank_ == 0 ? static_cast<double>(progressSent) : 0.0);
    sendsProgress = false; // no more signs: their count is in the sum
    allReduce(all.data(), count + 1, MPI_DOUBLE, MPI_SUM, what);
    const char *signs = "rank 0's signs of progress";
    begin(signs);
    if (rank_ == 0) {
      check(MPI_Waitall(static_cast<int>(progressSends.size()),
                        progressSends.data(), MPI_STATUSES_IGNORE),
            signs);
      progressSends.clear();
      progressSent = 0;
    } else {
      // Those still on their way: each arrives before the next wait.
      for (auto sent = static_cast<int64_t>(all[count]);
           progressReceived < sent;)
        receiveProgress(/*wait=*/true);
      progressReceived = 0;
    }
    end();
    firstsWork = false;
    std::copy(all.begin(), all.begin() + count, values);
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
    const char *what = "the Adam moments for a checkpoint";
    begin(what);
    if (firstsWork) {
      // First a small exchange that waits for rank 0's work (with its
      // signs and sleeps), then the sum itself driven by MPI_Wait: progress
      // only by looks a millisecond apart slowed a big tensor's pieces.
      double here = 0;
      MPI_Request request;
      check(MPI_Iallreduce(MPI_IN_PLACE, &here, 1, MPI_DOUBLE, MPI_SUM,
                           MPI_COMM_WORLD, &request),
            what);
      awaitFirst(request, what);
      begin(what);
    }
    // MPI counts are int: a large tensor goes in pieces.
    constexpr int64_t kPiece = 1 << 30;
    for (int64_t done = 0; done < count; done += kPiece) {
      int n = static_cast<int>(std::min(kPiece, count - done));
      const void *sent = rank_ == 0 ? MPI_IN_PLACE : data + done;
      check(MPI_Reduce(sent, data + done, n, MPI_FLOAT, MPI_SUM, 0,
                       MPI_COMM_WORLD),
            what);
    }
    end();
  }

  void shareFromFirst(void *data, int64_t bytes, const char *what) override {
    waitingFor.store(what);
    waitingSince.store(Clock::now().time_since_epoch().count());
    if (MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS) {
      std::fprintf(stderr, "error: rank %d of %d: receiving %s failed; every "
                           "process stops\n", rank_, size_, what);
      abort(1);
    }
    waitingSince.store(0);
  }
  void minMax(uint64_t value, uint64_t &min, uint64_t &max,
              const char *what) override {
    uint64_t pair[2] = {value, ~value}; // max of ~v is ~min
    allReduce(pair, 2, MPI_UINT64_T, MPI_MAX, what);
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

  /// Rank 0, on its progress: a sign to each other rank, at most one each
  /// kProgressPeriod.
  void sendProgress() {
    if (!sendsProgress)
      return;
    Clock::time_point now = Clock::now();
    if (now < nextProgress)
      return;
    nextProgress = now + kProgressPeriod;
    // Empty messages are sent at once: drop the requests that are done.
    std::erase_if(progressSends, [this](MPI_Request &request) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE),
            "rank 0's signs of progress");
      return done != 0;
    });
    for (int r = 1; r < size_; ++r) {
      MPI_Request request;
      check(MPI_Isend(nullptr, 0, MPI_BYTE, r, kProgressTag, MPI_COMM_WORLD,
                      &request),
            "rank 0's signs of progress");
      progressSends.push_back(request);
    }
    ++progressSent;
  }

  /// Takes one sign of rank 0's progress, if one has come (or, with
  /// `wait`, once it comes).
  bool receiveProgress(bool wait) {
    const char *signs = "rank 0's signs of progress";
    int arrived = 1;
    if (!wait)
      check(MPI_Iprobe(0, kProgressTag, MPI_COMM_WORLD, &arrived,
                       MPI_STATUS_IGNORE),
            signs);
    if (!arrived)
      return false;
    check(MPI_Recv(nullptr, 0, MPI_BYTE, 0, kProgressTag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          signs);
    ++progressReceived;
    return true;
  }

  /// Waits for `request`, an exchange during rank 0's long work: on the
  /// others, the timeout counts from rank 0's last sign of progress, and
  /// they sleep between looks (the wait may last minutes, on a core that
  /// others share).
  void awaitFirst(MPI_Request &request, const char *what) {
    if (rank_ == 0) {
      check(MPI_Wait(&request, MPI_STATUS_IGNORE), what);
      return;
    }
    waitingForFirst = true;
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
      if (done)
        break;
      if (receiveProgress(/*wait=*/false))
        begin(what);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    waitingForFirst = false;
  }
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
      if (firstsWork) {
        MPI_Request request;
        check(MPI_Iallreduce(MPI_IN_PLACE, data + done * bytes, n, type, op,
                             MPI_COMM_WORLD, &request),
              what);
        awaitFirst(request, what);
      } else {
        check(MPI_Allreduce(MPI_IN_PLACE, data + done * bytes, n, type, op,
                            MPI_COMM_WORLD),
              what);
      }
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
      if (waitingForFirst)
        std::fprintf(stderr,
                     "error: rank %d of %d has had no sign of progress from "
                     "rank 0 for %ld s while it validates, saves or "
                     "evaluates (waiting for %s): rank 0, or another "
                     "process, has died or hangs; this process stops "
                     "(checkpoints are written only whole, so the last one "
                     "is intact)\n",
                     rank_, size_, timeoutSeconds, waitingFor.load());
      else
        std::fprintf(stderr,
                     "error: rank %d of %d has waited %ld s for the other "
                     "processes while summing %s: one of them has died or "
                     "hangs; this process stops (checkpoints are written "
                     "only whole, so the last one is intact)\n",
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
  /// Whether the exchange under way waits for rank 0's long work.
  std::atomic<bool> waitingForFirst{false};
  std::thread watchdog;

  /// Between beginFirstsWork and the end of sumAfterFirstsWork, every
  /// process's exchanges are nonblocking ones (MPI never matches a blocking
  /// collective with a nonblocking one), and rank 0 sends signs of progress
  /// until sumAfterFirstsWork. Main thread only, as every MPI call.
  bool firstsWork = false, sendsProgress = false;
  Clock::time_point nextProgress{};
  int64_t progressSent = 0, progressReceived = 0;
  std::vector<MPI_Request> progressSends;
  /// Rank 0's group, which progressListener (a plain function) reaches.
  static inline MpiProcessGroup *listening = nullptr;
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
