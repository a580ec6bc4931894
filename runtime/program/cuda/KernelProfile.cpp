//===- KernelProfile.cpp - a GPU step's kernels, as the device ran them ---===//
#include "runtime/program/cuda/KernelProfile.h"
#include "runtime/kernels/cuda/Kernels.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgc::cuda {
namespace {

/// The CUPTI functions this file calls, from the library loaded at run time.
struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityFlushAll) flushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetResultString) resultString = nullptr;
};

/// A record of the device's work, with the API call that launched it.
struct Launched {
  runtime::DeviceWork work;
  uint32_t correlation;
};

Cupti cupti;
runtime::KernelTimes *sink = nullptr;
bool recording = false; // started, and no CUPTI call has failed since

/// The step being profiled.
double *opSeconds = nullptr;
uint64_t stepBegin = 0;
bool opPushed = false;

/// Filled by CUPTI's buffer callback (from CUPTI's thread too), emptied by
/// endProfiledStep.
std::mutex recordsMutex;
std::vector<Launched> launched;
std::unordered_map<uint32_t, uint64_t> opOfCall;  // correlation -> op + 1
std::unordered_map<uint32_t, uint64_t> callStart; // correlation -> host time

/// The host's op marks of the step: the op of an API call that has no
/// external correlation record, by its host time.
runtime::OpMarks opMarks;

/// libcupti of this CUDA major version: by the loader's search path, then
/// beside the CUDA runtime this program uses (the toolkit's lib64 and
/// extras/CUPTI/lib64, or pip's nvidia/cuda_cupti/lib).
void *openCupti() {
  const std::string name = "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
  std::vector<std::string> candidates = {name, "libcupti.so"};
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&cudaGetDeviceCount), &info) &&
      info.dli_fname) {
    std::string runtime = info.dli_fname;
    std::string directory = runtime.substr(0, runtime.rfind('/') + 1);
    for (const char *relative :
         {"", "../extras/CUPTI/lib64/", "../../cuda_cupti/lib/"})
      candidates.push_back(directory + relative + name);
  }
  for (const std::string &candidate : candidates)
    if (void *library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))
      return library;
  return nullptr;
}

/// dlopen's or dlsym's last message ("" when it has none).
std::string loaderError() {
  const char *message = dlerror();
  return message ? message : "";
}

template <typename Function>
bool resolve(void *library, const char *symbol, Function &function) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  return function != nullptr;
}

/// False, with CUPTI's message for `status` in `why`, unless it succeeded.
bool succeeded(CUptiResult status, const std::string &call, std::string &why) {
  if (status == CUPTI_SUCCESS)
    return true;
  const char *message = nullptr;
  if (!cupti.resultString || cupti.resultString(status, &message) != CUPTI_SUCCESS)
    message = "unknown error";
  why = call + ": " + message;
  return false;
}

/// A CUPTI call of a profiled step failed: recording stops, said once.
void stopRecording(const std::string &why) {
  recording = false;
  std::fprintf(stderr,
               "note: --profile: CUPTI failed (%s): the GPU's work is no "
               "longer recorded\n",
               why.c_str());
}

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size,
                              size_t *maxRecords) {
  constexpr size_t kBytes = size_t{8} << 20;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBytes));
  *size = *buffer ? kBytes : 0; // no buffer: CUPTI drops the records
  *maxRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t,
                              size_t validSize) {
  std::lock_guard<std::mutex> lock(recordsMutex);
  CUpti_Activity *record = nullptr;
  while (cupti.nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
    auto keep = [](runtime::DeviceWork::Kind kind, const char *name,
                   uint64_t start, uint64_t end, uint32_t correlation) {
      if (start <= end) // an unfinished record has no end
        launched.push_back({{kind, name, start, end}, correlation});
    };
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      // The fields read here lead every version of the record.
      auto *kernel = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
      keep(runtime::DeviceWork::Kernel, kernel->name ? kernel->name : "(unnamed)",
           kernel->start, kernel->end, kernel->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto *copy = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
      keep(runtime::DeviceWork::Copy, "", copy->start, copy->end,
           copy->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto *set = reinterpret_cast<const CUpti_ActivityMemset4 *>(record);
      keep(runtime::DeviceWork::Memset, "", set->start, set->end,
           set->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto *external =
          reinterpret_cast<const CUpti_ActivityExternalCorrelation *>(record);
      if (external->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        opOfCall[external->correlationId] = external->externalId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto *call = reinterpret_cast<const CUpti_ActivityAPI *>(record);
      callStart[call->correlationId] = call->start;
      break;
    }
    default:
      break;
    }
  }
  std::free(buffer);
}

/// Delivers every record of finished work to bufferCompleted.
bool flush(std::string &why) {
  return succeeded(cupti.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                   "cuptiActivityFlushAll", why);
}

} // namespace

bool startKernelProfile(runtime::KernelTimes *times, std::string &why) {
  void *library = openCupti();
  if (!library) {
    why = "cannot load CUPTI (libcupti.so." +
          std::to_string(CUDART_VERSION / 1000) +
          ", CUDA's profiling library): " + loaderError();
    return false;
  }
  if (!resolve(library, "cuptiActivityRegisterCallbacks", cupti.registerCallbacks) ||
      !resolve(library, "cuptiActivityEnable", cupti.enable) ||
      !resolve(library, "cuptiActivityFlushAll", cupti.flushAll) ||
      !resolve(library, "cuptiActivityGetNextRecord", cupti.nextRecord) ||
      !resolve(library, "cuptiActivityPushExternalCorrelationId", cupti.push) ||
      !resolve(library, "cuptiActivityPopExternalCorrelationId", cupti.pop) ||
      !resolve(library, "cuptiGetTimestamp", cupti.timestamp) ||
      !resolve(library, "cuptiGetResultString", cupti.resultString)) {
    why = "CUPTI lacks a function this program calls: " + loaderError();
    return false;
  }
  if (!succeeded(cupti.registerCallbacks(&bufferRequested, &bufferCompleted),
                 "cuptiActivityRegisterCallbacks", why))
    return false;
  auto enable = [&](CUpti_ActivityKind kind, std::string &failure) {
    return succeeded(cupti.enable(kind),
                     "cuptiActivityEnable of record kind " +
                         std::to_string(static_cast<int>(kind)),
                     failure);
  };
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET})
    if (!enable(kind, why))
      return false;
  // The API calls' records carry the external correlation ids (the ops),
  // and their host times (the ops by the marks, where no id came). Without
  // them the kernels are still recorded, only no op's time.
  std::string apiFailure;
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION})
    if (apiFailure.empty())
      enable(kind, apiFailure);
  if (!apiFailure.empty())
    std::fprintf(stderr,
                 "note: --profile: %s; the kernels are recorded, but not "
                 "which op launched them\n",
                 apiFailure.c_str());
  sink = times;
  recording = true;
  return true;
}

void beginProfiledStep(double *seconds) {
  if (!recording)
    return;
  // What ran since the last step (validation, a checkpoint's download) is
  // no step's.
  std::string why;
  if (!TGC_CUDA_CHECK(cudaStreamSynchronize(stream())))
    return;
  if (!flush(why))
    return stopRecording(why);
  {
    std::lock_guard<std::mutex> lock(recordsMutex);
    launched.clear();
    opOfCall.clear();
    callStart.clear();
  }
  opMarks.clear();
  opSeconds = seconds;
  if (!succeeded(cupti.timestamp(&stepBegin), "cuptiGetTimestamp", why))
    stopRecording(why);
}

void profileOp(int op) {
  if (!recording)
    return;
  std::string why;
  uint64_t last = 0;
  if (opPushed &&
      !succeeded(cupti.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
                 "cuptiActivityPopExternalCorrelationId", why))
    return stopRecording(why);
  opPushed = false;
  uint64_t now = 0;
  if (!succeeded(cupti.timestamp(&now), "cuptiGetTimestamp", why))
    return stopRecording(why);
  opMarks.mark(now, op);
  if (op < 0)
    return;
  if (!succeeded(cupti.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                            static_cast<uint64_t>(op) + 1),
                 "cuptiActivityPushExternalCorrelationId", why))
    return stopRecording(why);
  opPushed = true;
}

void endProfiledStep() {
  if (!recording)
    return;
  profileOp(-1);
  std::string why;
  uint64_t stepEnd = 0;
  if (!TGC_CUDA_CHECK(cudaStreamSynchronize(stream())))
    return;
  if (!succeeded(cupti.timestamp(&stepEnd), "cuptiGetTimestamp", why) ||
      !flush(why))
    return stopRecording(why);
  std::vector<Launched> step;
  std::unordered_map<uint32_t, uint64_t> ops, starts;
  {
    std::lock_guard<std::mutex> lock(recordsMutex);
    step.swap(launched);
    ops.swap(opOfCall);
    starts.swap(callStart);
  }
  // The op of a piece of work: its launch's external correlation id, else
  // the op the host was in when it made the launching call.
  auto opOf = [&](uint32_t correlation) {
    if (auto op = ops.find(correlation); op != ops.end())
      return static_cast<int>(op->second) - 1;
    if (auto start = starts.find(correlation); start != starts.end())
      return opMarks.opAt(start->second);
    return -1;
  };
  std::vector<runtime::DeviceWork> work;
  work.reserve(step.size());
  for (Launched &l : step) {
    int op = opSeconds ? opOf(l.correlation) : -1;
    if (op >= 0)
      opSeconds[op] += static_cast<double>(l.work.end - l.work.start) / 1e9;
    work.push_back(std::move(l.work));
  }
  sink->addStep(stepBegin, stepEnd, work);
}

} // namespace tgc::cuda
