//===- KernelProfile.h - a GPU step's kernels, as the device ran them -*- C++ -*-===//
//
// `--profile` on a GPU program: CUPTI's activity records (every kernel,
// copy and memset, with the device's start and end) for the steps that
// run through the generated profileTrainStep, which runs the ops one by
// one and marks each (profileOp): the time of an op is that of the work it
// launched, cuBLAS's included (CUPTI's external correlation ids, else the
// host time of the launching call against the ops' marks: OpMarks). The
// records of each step go to runtime/program/main/KernelTimes.h.
//
// CUPTI (libcupti, part of the CUDA toolkit) is loaded when profiling
// starts, not linked: a program that is not profiled does not need it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_KERNELPROFILE_H
#define TGC_RUNTIME_CUDA_KERNELPROFILE_H

#include "runtime/program/main/KernelTimes.h"

#include <string>

namespace tgc::cuda {

/// Loads CUPTI and starts recording for the profiled steps into `sink`:
/// false with the reason when it cannot (no libcupti, or CUPTI refuses).
/// DeviceHooks::startProfile.
bool startKernelProfile(runtime::KernelTimes *sink, std::string &why);

/// profileTrainStep, first: the step's start; its ops' times are added to
/// seconds[i] (the bucket's stepOps order). Nothing when not started.
void beginProfiledStep(double *seconds);
/// Before op `op` of the step: what is launched from here on is its work;
/// -1: no op's (the step's finish).
void profileOp(int op);
/// profileTrainStep, last: waits for the device, collects the step's
/// records, adds each op's time and hands the step to the sink.
void endProfiledStep();

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_KERNELPROFILE_H
