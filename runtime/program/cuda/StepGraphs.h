//===- StepGraphs.h - a CUDA step's ops, replayed as one graph --*- C++ -*-===//
//
// A generated CUDA training step uploads its inputs, runs its ops (one or
// more kernel launches each) and downloads its loss. With --cuda-graphs the
// ops are captured once into a CUDA graph and every later step replays it
// with one launch: the launch gaps between kernels go.
//
// A replay keeps the arguments its kernels were captured with. So what
// changes every step is read from device memory (DeviceFrame::scalars: the
// learning rate, the step, the dropout key, the gradient's weight), and
// what a run sets once (the dropout rates, the optimizer's settings, the
// accumulation phase, this process's first example, the accumulator) is
// the graph's key: a step with other values gets a graph of its own.
//
// The first step of each key runs op by op (it creates the libraries'
// handles and the tables the ops keep), the second is captured. A capture
// that fails (an op that cannot be captured) is no device failure: the run
// goes on op by op, with a note. Data-parallel steps always run op by op:
// their all-reduce reads the global token count on the host mid-step.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_STEPGRAPHS_H
#define TGC_RUNTIME_CUDA_STEPGRAPHS_H

#include "runtime/program/CompiledStep.h"

namespace tgc::cuda {

/// Runs `ops` (a step's op functions, after its upload and before its
/// finish) on stream(): replays their graph when f.cudaGraphs asks for it,
/// else one op after another.
void runStepOps(runtime::StepFrame &f, void (*ops)(runtime::StepFrame &));

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_STEPGRAPHS_H
