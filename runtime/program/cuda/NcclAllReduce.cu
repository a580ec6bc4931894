//===- NcclAllReduce.cu - a GPU program's gradients summed with NCCL -----===//
//
// A data-parallel GPU program (one GPU per process) sums its gradient
// region in device memory with NCCL, on the step's stream. The NCCL
// communicator is made at the first all-reduce (a point every process
// reaches), from a unique id that rank 0 creates and the process group
// (MPI) hands to the others. Built without NCCL, the call records an
// error that the program shell reports after the step.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/Kernels.h"
#include "runtime/program/cuda/DeviceStep.h"
#include "runtime/program/parallel/ProcessGroup.h"

#include <cstdio>
#include <string>

#ifdef TGC_HAVE_NCCL
#include <nccl.h>
#endif

namespace tgc::cuda {

#ifdef TGC_HAVE_NCCL
namespace {

/// False with the failure, naming the NCCL call, kept as the device's first
/// error: the program says it and stops after the step.
bool ncclOk(ncclResult_t status, const char *what) {
  if (status == ncclSuccess)
    return true;
  return TGC_CUDA_FAIL(std::string(what) + ": NCCL error " +
                       std::to_string(static_cast<int>(status)) + ": " +
                       ncclGetErrorString(status));
}

ncclComm_t communicator() {
  static ncclComm_t comm = nullptr;
  static bool tried = false;
  if (tried)
    return comm;
  tried = true;
  runtime::ProcessGroup *group = runtime::activeProcessGroup();
  if (!group)
    return nullptr;
  ncclUniqueId id{};
  if (group->rank() == 0 && !ncclOk(ncclGetUniqueId(&id), "ncclGetUniqueId"))
    group->abort(1);
  group->shareFromFirst(&id, sizeof id, "rank 0's NCCL id");
  ncclComm_t made = nullptr;
  if (ncclOk(ncclCommInitRank(&made, group->size(), id, group->rank()),
             "ncclCommInitRank"))
    comm = made;
  return comm;
}

} // namespace
#endif

void allReduceSum(runtime::StepFrame &f, float *data, int64_t count) {
#ifdef TGC_HAVE_NCCL
  ncclComm_t comm = communicator();
  if (!comm)
    return;
  // The token count slot holds 1 before the sum, so that one NCCL op, which
  // multiplies every value by the process's target tokens before summing,
  // gives the per-token loss sums and the global tokens together.
  static const float one = 1.0f;
  float *slot = data + count - 1;
  TGC_CUDA_CHECK(cudaMemcpyAsync(slot, &one, sizeof one,
                                 cudaMemcpyHostToDevice, stream()));
  float scale = f.batchTokens;
  ncclRedOp_t scaledSum;
  if (!ncclOk(ncclRedOpCreatePreMulSum(&scaledSum, &scale, ncclFloat,
                                       ncclScalarHostImmediate, comm),
              "ncclRedOpCreatePreMulSum"))
    return;
  ncclOk(ncclAllReduce(data, data, static_cast<size_t>(count), ncclFloat,
                       scaledSum, comm, stream()),
         "ncclAllReduce of the gradients and the token count");
  ncclOk(ncclRedOpDestroy(scaledSum, comm), "ncclRedOpDestroy");
  // The optimizer's weight is a host value: wait for the count.
  float tokens = 0.0f;
  TGC_CUDA_CHECK(cudaMemcpyAsync(&tokens, slot, sizeof tokens,
                                 cudaMemcpyDeviceToHost, stream()));
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
  runtime::divideWeightByTokens(f, tokens);
  // The optimizer's kernels read the weight on the device.
  uploadGradWeight(f);
#else
  (void)f;
  (void)data;
  (void)count;
  std::fprintf(stderr, "error: this GPU program was built without NCCL (tgc "
                       "found no nccl.h in the CUDA toolkit): it cannot "
                       "train on several processes\n");
  TGC_CUDA_CHECK(cudaErrorNotSupported);
#endif
}

} // namespace tgc::cuda
