//===- StepGraphs.cu - a CUDA step's ops, replayed as one graph ----------===//
#include "runtime/program/cuda/StepGraphs.h"
#include "runtime/kernels/cuda/Kernels.h"
#include "runtime/program/cuda/DeviceStep.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace tgc::cuda {
namespace {

/// What a step's kernels take by value from the frame (and the device
/// frame's accumulator): two steps replay one graph only when all agree.
using GraphKey = std::tuple<void (*)(runtime::StepFrame &), int32_t, float,
                            float, float, float, float, float, float, float,
                            int64_t, float *>;

GraphKey keyOf(const runtime::StepFrame &f, void (*ops)(runtime::StepFrame &)) {
  return {ops,          f.updatePhase, f.clipNorm,    f.weightDecay,
          f.labelSmoothing, f.adamBeta1, f.adamBeta2, f.adamEps,
          f.dropout,    f.attentionDropout, f.firstExample,
          deviceFrame().gradAccumulator};
}

/// A key's state: run once op by op, then its graph.
struct StepGraph {
  bool warm = false;
  cudaGraphExec_t exec = nullptr;
};

std::map<GraphKey, StepGraph> graphs;
bool captureFailed = false;

/// Says once how many kernels a captured step launches (cuBLAS's
/// included): the launches per step that its replay makes one.
void reportKernels(cudaGraph_t graph) {
  static bool told = false;
  size_t nodes = 0;
  if (told)
    return;
  std::vector<cudaGraphNode_t> all;
  if (cudaGraphGetNodes(graph, nullptr, &nodes) != cudaSuccess ||
      (all.resize(nodes), cudaGraphGetNodes(graph, all.data(), &nodes)) !=
          cudaSuccess) {
    (void)cudaGetLastError(); // only a count lost: no device failure
    return;
  }
  size_t kernels = 0;
  for (cudaGraphNode_t node : all) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    kernels += type == cudaGraphNodeTypeKernel;
  }
  told = true;
  std::printf("note: --cuda-graphs: a step is one graph of %zu kernels "
              "(%zu nodes)\n",
              kernels, nodes);
}

/// Captures `ops` on stream(); null (the failure forgotten, a note printed
/// once) when they cannot be captured.
cudaGraphExec_t capture(runtime::StepFrame &f,
                        void (*ops)(runtime::StepFrame &)) {
  // Thread-local mode: only this thread's calls that would break the
  // capture (a synchronous copy, an allocation outside the pool) fail it.
  cudaError_t began =
      cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = began;
  if (began == cudaSuccess) {
    ops(f);
    ended = cudaStreamEndCapture(stream(), &graph);
  }
  cudaGraphExec_t exec = nullptr;
  std::string why;
  bool failed = firstError(why) || ended != cudaSuccess;
  if (!failed)
    reportKernels(graph);
  if (cudaError_t made = failed ? cudaSuccess
                                : cudaGraphInstantiate(&exec, graph, 0);
      made != cudaSuccess) {
    why = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made);
    failed = true;
    exec = nullptr;
  }
  if (graph)
    cudaGraphDestroy(graph);
  if (!failed)
    return exec;
  if (why.empty())
    why = std::string(began != cudaSuccess ? "cudaStreamBeginCapture: "
                                           : "cudaStreamEndCapture: ") +
          cudaGetErrorString(ended);
  forgetFailure();
  std::fprintf(stderr,
               "note: --cuda-graphs: the step cannot be captured as a CUDA "
               "graph (%s); it runs op by op\n",
               why.c_str());
  return nullptr;
}

} // namespace

void runStepOps(runtime::StepFrame &f, void (*ops)(runtime::StepFrame &)) {
  // A failure before the ops (the inputs' upload, its accumulator's
  // allocation): none of them runs; the shell reports it after the step.
  // (A data-parallel step runs them: its all-reduce is one, which every
  // process must join.)
  if (std::string failure; !f.allReduceSum && firstError(failure))
    return;
  if (!f.cudaGraphs || f.allReduceSum || captureFailed) {
    ops(f);
    return;
  }
  StepGraph &graph = graphs[keyOf(f, ops)];
  if (!graph.warm) {
    ops(f);
    graph.warm = true;
    return;
  }
  if (!graph.exec) {
    graph.exec = capture(f, ops);
    if (!graph.exec) {
      captureFailed = true;
      ops(f);
      return;
    }
  }
  // A launch that fails (its memory, say) leaves the step to the ops; a
  // device that has failed fails them too, and that is kept.
  if (cudaError_t launched = cudaGraphLaunch(graph.exec, stream());
      launched != cudaSuccess) {
    (void)cudaGetLastError();
    std::fprintf(stderr,
                 "note: --cuda-graphs: the step's graph did not launch (%s); "
                 "it runs op by op\n",
                 cudaGetErrorString(launched));
    captureFailed = true;
    ops(f);
  }
}

} // namespace tgc::cuda
