//===- AdamEmulatedTest.cpp - the optimizer step's kernels on the host ----===//
//
// runtime/kernels/cuda/AdamKernels.cuh run by KernelEmulator.h as Adam.cu's
// optimizerStep launches them (gradientKernel, normKernel, then adamKernel
// in the phases that update), against cpu::optimizerStep on the same
// tensors: every accumulation phase, AdamW on some tensors, clipping, a
// finite norm past what Adam takes (no update), and a non-finite loss
// (nothing accumulated or updated, as the CPU's step skips the optimizer).
// On a GPU, TrainingTest.cpp's OptimizerStep tests check the same through
// cuda::optimizerStep.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/AdamKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tgc::test {
namespace {

/// The optimizer step on the emulator, as cuda::optimizerStep launches it;
/// returns the norm. `loss`: the step's, on the device (null: none).
float emulatedOptimizerStep(const std::vector<runtime::AdamTensor> &tensors,
                            const runtime::OptimizerControl &control, float lr,
                            int32_t step, float weight,
                            const float *loss = nullptr) {
  std::vector<cuda::Chunk> chunks =
      cuda::chunksOf(tensors.data(), static_cast<int>(tensors.size()));
  const int64_t count = static_cast<int64_t>(chunks.size());
  const dim3 blocks(cuda::rowBlocks(count)), threads(cuda::kThreads);
  std::vector<double> squares(chunks.size(), 7.0);
  float norm = 7.0f, factor = 7.0f;
  emulator::launch(blocks, threads, 0, [&] {
    cuda::gradientKernel(chunks.data(), count, &weight, control.phase,
                         control.accumulator, squares.data(), loss);
  });
  emulator::launch(dim3(1), threads, 0, [&] {
    cuda::normKernel(squares.data(), count, control.clip, &norm, &factor);
  });
  if (control.phase != runtime::kUpdate &&
      control.phase != runtime::kAccumulateUpdate)
    return norm;
  const bool accumulated = control.phase == runtime::kAccumulateUpdate;
  emulator::launch(blocks, threads, 0, [&] {
    cuda::adamKernel(chunks.data(), count, &lr, &step, AdamProblem::beta1,
                     AdamProblem::beta2, AdamProblem::epsilon,
                     control.weightDecay, accumulated ? nullptr : &weight,
                     &factor, accumulated ? control.accumulator : nullptr);
  });
  return norm;
}

/// Both sides' parameters and moments, within the GPU test's bounds.
void expectSameState(const AdamProblem &cpu, const AdamProblem &emulated,
                     const std::string &tag) {
  for (size_t x = 0; x < AdamProblem::kTensors; ++x) {
    std::string where = tag + " tensor " + std::to_string(x);
    expectClose("param" + where, emulated.p[x], cpu.p[x], 1e-5);
    expectClose("moment1" + where, emulated.m[x], cpu.m[x], 1e-5);
    expectClose("moment2" + where, emulated.v[x], cpu.v[x], 1e-5);
  }
}

std::vector<runtime::AdamTensor> decaying(AdamProblem &adam) {
  std::vector<runtime::AdamTensor> tensors = adam.cpuTensors();
  for (size_t x = 0; x < tensors.size(); ++x)
    tensors[x].decays = x != 1; // AdamW on tensors 0 and 2
  return tensors;
}

// Two accumulated batches, a third that accumulates and updates, a fourth
// that updates alone; clipped at 0.5, AdamW's decay 0.1 on two tensors.
TEST(AdamEmulated, OptimizerStepInEveryPhaseAsTheCpu) {
  AdamProblem cpu, emulated;
  int64_t total = 0;
  for (int64_t size : AdamProblem::sizes)
    total += size;
  std::vector<float> cpuAccumulator(total), emulatedAccumulator(total, 7.0f);
  const int32_t phases[4] = {runtime::kAccumulateFirst, runtime::kAccumulate,
                             runtime::kAccumulateUpdate, runtime::kUpdate};
  const float weights[4] = {0.25f, 0.25f, 0.5f, 1.0f};
  for (int k = 0; k < 4; ++k) {
    std::vector<runtime::AdamTensor> cpuTensors = decaying(cpu),
                                     emulatedTensors = decaying(emulated);
    const float norm = cpu::optimizerStep(
        cpuTensors.data(), 3,
        {weights[k], phases[k], 0.5f, cpuAccumulator.data(), 0.1f},
        AdamProblem::lr, 4, AdamProblem::beta1, AdamProblem::beta2,
        AdamProblem::epsilon);
    const float got = emulatedOptimizerStep(
        emulatedTensors,
        {0.0f, phases[k], 0.5f, emulatedAccumulator.data(), 0.1f},
        AdamProblem::lr, 4, weights[k]);
    std::string tag = " batch " + std::to_string(k);
    EXPECT_NEAR(got, norm, 1e-5 * norm) << tag;
    expectSameState(cpu, emulated, tag);
  }
}

// A finite gradient past what Adam takes (an element of 1e20, whose square
// overflows f32): no update without clipping; clipped to norm 1, the CPU's
// update.
TEST(AdamEmulated, NoUpdateFromANormPastWhatAdamTakes) {
  for (float clip : {0.0f, 1.0f}) {
    AdamProblem cpu, emulated;
    cpu.g[2][7] = emulated.g[2][7] = 1e20f;
    const std::vector<std::vector<float>> before = emulated.p;
    std::vector<runtime::AdamTensor> cpuTensors = cpu.cpuTensors(),
                                     emulatedTensors = emulated.cpuTensors();
    const float norm = cpu::optimizerStep(
        cpuTensors.data(), 3, {1.0f, runtime::kUpdate, clip}, AdamProblem::lr,
        1, AdamProblem::beta1, AdamProblem::beta2, AdamProblem::epsilon);
    const float got = emulatedOptimizerStep(
        emulatedTensors, {0.0f, runtime::kUpdate, clip, nullptr, 0.0f},
        AdamProblem::lr, 1, 1.0f);
    std::string tag = " clip " + std::to_string(clip);
    EXPECT_NEAR(got, norm, 1e-5 * norm) << tag;
    if (clip == 0.0f) {
      EXPECT_EQ(emulated.p, before) << tag;
    }
    expectSameState(cpu, emulated, tag);
  }
}

// After a non-finite loss the CPU's step does not call the optimizer (the
// state stays, so that the step can be run again on it to find where the
// NaN came from); the device cannot ask the host, so its kernels read the
// loss: in every phase nothing is accumulated or updated, and the norm is
// NaN.
TEST(AdamEmulated, NothingAccumulatedOrUpdatedAfterANonFiniteLoss) {
  int64_t total = 0;
  for (int64_t size : AdamProblem::sizes)
    total += size;
  for (float loss : {NAN, INFINITY}) {
    for (int32_t phase : {runtime::kAccumulateFirst, runtime::kAccumulate,
                          runtime::kAccumulateUpdate, runtime::kUpdate}) {
      AdamProblem emulated;
      const AdamProblem before = emulated;
      std::vector<float> accumulator(total, 7.0f);
      std::vector<runtime::AdamTensor> tensors = emulated.cpuTensors();
      const float norm = emulatedOptimizerStep(
          tensors, {0.0f, phase, 0.5f, accumulator.data(), 0.0f},
          AdamProblem::lr, 3, 1.0f, &loss);
      std::string tag =
          " loss " + std::to_string(loss) + " phase " + std::to_string(phase);
      EXPECT_TRUE(std::isnan(norm)) << tag;
      EXPECT_EQ(emulated.p, before.p) << tag;
      EXPECT_EQ(emulated.m, before.m) << tag;
      EXPECT_EQ(emulated.v, before.v) << tag;
      EXPECT_EQ(accumulator, std::vector<float>(total, 7.0f)) << tag;
    }
  }
  // A finite loss is the step as before.
  AdamProblem cpu, emulated;
  std::vector<runtime::AdamTensor> cpuTensors = cpu.cpuTensors(),
                                   emulatedTensors = emulated.cpuTensors();
  const float finite = 2.5f;
  const float norm = cpu::optimizerStep(
      cpuTensors.data(), 3, {1.0f, runtime::kUpdate, 0.0f}, AdamProblem::lr, 1,
      AdamProblem::beta1, AdamProblem::beta2, AdamProblem::epsilon);
  const float got = emulatedOptimizerStep(
      emulatedTensors, {0.0f, runtime::kUpdate, 0.0f, nullptr, 0.0f},
      AdamProblem::lr, 1, 1.0f, &finite);
  EXPECT_NEAR(got, norm, 1e-5 * norm);
  expectSameState(cpu, emulated, " finite loss");
}

} // namespace
} // namespace tgc::test
