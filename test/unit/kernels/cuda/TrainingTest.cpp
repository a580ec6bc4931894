//===- TrainingTest.cpp - CUDA loss and Adam against the CPU --------------===//
//
// runtime/kernels/cuda/Loss.cu (cross-entropy and its gradient, with label
// smoothing, ignored targets and many rows; the chunked output loss in f32
// and bf16) and runtime/kernels/cuda/Adam.cu
// (the multi-tensor Adam update, lr and step on the device). Helpers and
// the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"

#include <memory>
#include <type_traits>

namespace tgc::test {
namespace {

//===--- Loss.cu ----------------------------------------------------------===//

// The loss cases (KernelTestCases.h): 64 rows of 1000 classes.
TEST_F(CudaKernels, CrossEntropy) {
  std::vector<float> logits = lossLogits(36);
  DeviceArray<float> dl(logits), dloss(1);
  DeviceArray<int32_t> dtokens(1);
  for (bool allIgnored : {false, true})
    for (float smoothing : {0.0f, 0.1f}) {
      std::vector<int32_t> targets =
          allIgnored ? std::vector<int32_t>(kLossRows, kIgnore)
                     : lossTargets(37);
      float loss = 1.0f;
      int32_t tokens = -1;
      cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens,
                        kLossRows, kClasses, smoothing, kIgnore);
      DeviceArray<int32_t> dt(targets);
      cuda::crossEntropy(dl.get(), dt.get(), dloss.get(), dtokens.get(),
                         kLossRows, kClasses, smoothing, kIgnore);
      std::string tag = " smoothing " + std::to_string(smoothing) +
                        (allIgnored ? " all ignored" : "");
      EXPECT_EQ(dtokens.read()[0], tokens) << tag;
      if (allIgnored) {
        EXPECT_EQ(dloss.read()[0], 0.0f) << tag;
        continue;
      }
      // Double row sums and total on both sides.
      expectClose("crossEntropy" + tag, dloss.read(), {loss}, 1e-6);
    }
}

TEST_F(CudaKernels, CrossEntropyGrad) {
  std::vector<float> logits = lossLogits(38);
  DeviceArray<float> dl(logits);
  const float lossGrad = 1.7f;
  for (float smoothing : {0.0f, 0.1f}) {
    std::vector<int32_t> targets = lossTargets(39);
    std::vector<float> expected(logits.size());
    cpu::crossEntropyGrad(lossGrad, logits.data(), targets.data(),
                          expected.data(), kLossRows, kClasses, smoothing,
                          kIgnore);
    DeviceArray<int32_t> dt(targets);
    DeviceArray<float> out(logits.size(), 5.0f); // ignored rows must be 0
    cuda::crossEntropyGrad(lossGrad, dl.get(), dt.get(), out.get(), kLossRows,
                           kClasses, smoothing, kIgnore);
    expectClose("crossEntropyGrad smoothing " + std::to_string(smoothing),
                out.read(), expected, 1e-5);
  }
  DeviceArray<int32_t> ignored(kLossRows, kIgnore);
  DeviceArray<float> out(logits.size(), 5.0f);
  cuda::crossEntropyGrad(lossGrad, dl.get(), ignored.get(), out.get(),
                         kLossRows, kClasses, 0.1f, kIgnore);
  std::vector<float> result = out.read();
  EXPECT_TRUE(std::all_of(result.begin(), result.end(),
                          [](float x) { return x == 0.0f; }));
}

// More rows than the gradient kernel has blocks (each loops over rows) and
// many loss blocks finishing in any order: the same values as the CPU, and
// the same bits on a second run (the last block adds the rows in order).
TEST_F(CudaKernels, CrossEntropyManyRows) {
  const int64_t rows = 3000, classes = 50;
  std::vector<float> logits = uniform(rows * classes, 44, -4.0f, 4.0f);
  std::vector<int32_t> targets = randomIds(rows, 45, 0, classes - 1);
  float loss = 0.0f;
  int32_t tokens = 0;
  cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens, rows,
                    classes, 0.1f, kIgnore);
  std::vector<float> grad(rows * classes);
  cpu::crossEntropyGrad(1.0f, logits.data(), targets.data(), grad.data(), rows,
                        classes, 0.1f, kIgnore);
  DeviceArray<float> dl(logits), dloss(1), dgrad(grad.size());
  DeviceArray<int32_t> dt(targets), dtokens(1);
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    cuda::crossEntropy(dl.get(), dt.get(), dloss.get(), dtokens.get(), rows,
                       classes, 0.1f, kIgnore);
    EXPECT_EQ(dtokens.read()[0], tokens);
    expectClose("crossEntropy, 3000 rows", dloss.read(), {loss}, 1e-6);
    if (run == 0)
      first = dloss.read();
    else
      EXPECT_EQ(dloss.read(), first) << "the loss changed between runs";
  }
  cuda::crossEntropyGrad(1.0f, dl.get(), dt.get(), dgrad.get(), rows, classes,
                         0.1f, kIgnore);
  expectClose("crossEntropyGrad, 3000 rows", dgrad.read(), grad, 1e-5);
}

/// The rows and classes of an output loss, and its targets.
struct LossProblem {
  int64_t rows, classes;
  std::vector<int32_t> targets;
};

/// The loss cases' 64 rows of 1000 classes (KernelTestCases.h).
LossProblem lossCases() { return {kLossRows, kClasses, lossTargets(42)}; }

/// cuda::outputLoss against cpu::outputLoss on the same hidden [rows, 48]
/// and weight [classes, 48] (f32, or rounded to bf16), chunk by chunk: both run
/// the same GEMMs and round the same logit gradients (bf16: one bf16 step
/// where the two sides' f32 gradients straddle a tie). The loss twice: the
/// same bits (row losses added in order).
template <typename T>
void expectOutputLossAsTheCpu(const LossProblem &problem,
                              const std::vector<T> &hidden,
                              const std::vector<T> &weight, int64_t chunk,
                              double gradientTolerance) {
  constexpr int64_t kWidth = 48;
  const int64_t rows = problem.rows, classes = problem.classes;
  const std::vector<int32_t> &targets = problem.targets;
  const float lossGrad = 1.7f, smoothing = 0.1f;
  float loss = 0.0f;
  int32_t tokens = -1;
  std::vector<float> hiddenGrad(hidden.size()), weightGrad(weight.size()),
      workspace(chunk * classes);
  cpu::outputLoss(hidden.data(), weight.data(), targets.data(), lossGrad,
                  &loss, &tokens, hiddenGrad.data(), weightGrad.data(),
                  workspace.data(), rows, kWidth, classes, chunk,
                  smoothing, kIgnore);
  DeviceArray<T> dh(hidden), dw(weight);
  DeviceArray<int32_t> dt(targets), dtokens(1);
  DeviceArray<float> dloss(1), dhg(hidden.size(), 5.0f),
      dwg(weight.size(), 5.0f), dws(chunk * classes);
  std::string what = std::string(std::is_same_v<T, float> ? "" : "bf16 ") +
                     "outputLoss in chunks of " + std::to_string(chunk);
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    cuda::outputLoss(dh.get(), dw.get(), dt.get(), lossGrad, dloss.get(),
                     dtokens.get(), dhg.get(), dwg.get(), dws.get(), rows,
                     kWidth, classes, chunk, smoothing, kIgnore);
    if (run == 0)
      first = dloss.read();
  }
  EXPECT_EQ(dloss.read(), first) << what << ": the loss changed between runs";
  EXPECT_EQ(dtokens.read()[0], tokens) << what;
  expectClose(what + " loss", dloss.read(), {loss}, 1e-6);
  expectClose(what + " hidden gradient", dhg.read(), hiddenGrad,
              gradientTolerance);
  expectClose(what + " weight gradient", dwg.read(), weightGrad,
              gradientTolerance);
}

// Chunks of 24 rows (the last one 16) and one chunk larger than the rows.
TEST_F(CudaKernels, OutputLoss) {
  std::vector<float> hidden = uniform(kLossRows * 48, 40, -1.0f, 1.0f),
                     weight = uniform(kClasses * 48, 41, -1.0f, 1.0f);
  for (int64_t chunk : {24, 256}) {
    expectOutputLossAsTheCpu(lossCases(), hidden, weight, chunk, 2e-5);
    expectOutputLossAsTheCpu(lossCases(), roundedToBf16(hidden),
                             roundedToBf16(weight), chunk, 2e-4);
  }
}

// A vocabulary as wide as a translation model's (20,000 classes: past 8192,
// each row in shared memory, read from device memory once), targets
// anywhere in it, two rows ignored; chunks of 8 rows.
TEST_F(CudaKernels, OutputLossOverAWideVocabulary) {
  const int64_t rows = 20, classes = 20000;
  LossProblem problem{
      rows, classes,
      randomIds(rows, 43, 0, static_cast<int32_t>(classes - 1))};
  problem.targets[3] = problem.targets[11] = kIgnore;
  std::vector<float> hidden = uniform(rows * 48, 44, -1.0f, 1.0f),
                     weight = uniform(classes * 48, 45, -1.0f, 1.0f);
  expectOutputLossAsTheCpu(problem, hidden, weight, 8, 2e-5);
  expectOutputLossAsTheCpu(problem, roundedToBf16(hidden),
                           roundedToBf16(weight), 8, 2e-4);
}

// Every target ignored: no tokens, a zero loss and zero gradients.
TEST_F(CudaKernels, OutputLossWithEveryTargetIgnored) {
  const int64_t rows = 10, width = 8, classes = 30, chunk = 4;
  DeviceArray<float> dh(uniform(rows * width, 46)),
      dw(uniform(classes * width, 47)), dloss(1, 5.0f),
      dhg(rows * width, 5.0f), dwg(classes * width, 5.0f),
      dws(chunk * classes);
  DeviceArray<int32_t> dt(rows, kIgnore), dtokens(1, -1);
  cuda::outputLoss(dh.get(), dw.get(), dt.get(), 1.0f, dloss.get(),
                   dtokens.get(), dhg.get(), dwg.get(), dws.get(), rows, width,
                   classes, chunk, 0.1f, kIgnore);
  EXPECT_EQ(dtokens.read()[0], 0);
  EXPECT_EQ(dloss.read()[0], 0.0f);
  for (const std::vector<float> &g : {dhg.read(), dwg.read()})
    EXPECT_TRUE(std::all_of(g.begin(), g.end(),
                            [](float x) { return x == 0.0f; }));
}

//===--- Adam.cu ----------------------------------------------------------===//

/// An AdamProblem's parameters, moments and gradients on the device, AdamW
/// on tensors 0 and 2 (where a test gives the optimizer a weight decay).
struct DeviceAdam {
  std::vector<std::unique_ptr<DeviceArray<float>>> arrays;
  std::vector<cuda::AdamTensor> tensors;

  explicit DeviceAdam(const AdamProblem &adam) {
    for (size_t x = 0; x < AdamProblem::kTensors; ++x) {
      for (const std::vector<float> *host :
           {&adam.p[x], &adam.m[x], &adam.v[x], &adam.g[x]})
        arrays.push_back(std::make_unique<DeviceArray<float>>(*host));
      tensors.push_back({arrays[4 * x]->get(), arrays[4 * x + 1]->get(),
                         arrays[4 * x + 2]->get(), arrays[4 * x + 3]->get(),
                         adam.sizes[x], /*decays=*/x != 1});
    }
  }
  /// Tensor x's parameters (0), first (1) or second moments (2).
  std::vector<float> read(size_t x, int which) const {
    return arrays[4 * x + which]->read();
  }

  /// Each tensor's parameters and moments against `adam`'s (the CPU's).
  void expectMatches(const AdamProblem &adam, const std::string &tag) const {
    for (size_t x = 0; x < AdamProblem::kTensors; ++x) {
      std::string where = tag + " tensor " + std::to_string(x);
      expectClose("param" + where, read(x, 0), adam.p[x], 1e-5);
      expectClose("moment1" + where, read(x, 1), adam.m[x], 1e-5);
      expectClose("moment2" + where, read(x, 2), adam.v[x], 1e-5);
    }
  }
};

// A few float operations per element; the bias corrections in double on
// both sides. lr and step are device scalars on the GPU.
TEST_F(CudaKernels, AdamUpdate) {
  DeviceArray<float> dlr(std::vector<float>{AdamProblem::lr});
  for (int32_t step : {1, 7}) {
    DeviceArray<int32_t> dstep(std::vector<int32_t>{step});
    AdamProblem adam;
    DeviceAdam device(adam);
    std::vector<cpu::AdamTensor> cpuTensors = adam.cpuTensors();
    cpu::adamUpdate(cpuTensors.data(), 3, adam.lr, step, adam.beta1, adam.beta2,
                    adam.epsilon);
    cuda::adamUpdate(device.tensors.data(), 3, dlr.get(), dstep.get(),
                     adam.beta1, adam.beta2, adam.epsilon);
    device.expectMatches(adam, "adam step " + std::to_string(step));
  }
}

// The optimizer step against the CPU's, batch by batch: three batches
// accumulated (phases 1, 2, 3) with clipping on, then one plain update
// (phase 0). The weight is read from device memory (the control's is 0),
// the norm comes back there.
TEST_F(CudaKernels, OptimizerStep) {
  DeviceArray<float> dlr(std::vector<float>{AdamProblem::lr});
  DeviceArray<int32_t> dstep(std::vector<int32_t>{4});
  DeviceArray<float> dnorm(1);
  AdamProblem adam;
  DeviceAdam device(adam);
  int64_t total = 0;
  for (int64_t size : adam.sizes)
    total += size;
  std::vector<float> accumulator(static_cast<size_t>(total));
  DeviceArray<float> daccumulator(static_cast<size_t>(total));
  const int32_t phases[4] = {runtime::kAccumulateFirst, runtime::kAccumulate,
                             runtime::kAccumulateUpdate, runtime::kUpdate};
  const float weights[4] = {0.25f, 0.25f, 0.5f, 1.0f};
  for (int k = 0; k < 4; ++k) {
    std::vector<cpu::AdamTensor> cpuTensors = adam.cpuTensors();
    for (size_t x = 0; x < 3; ++x)
      cpuTensors[x].decays = x != 1; // AdamW on tensors 0 and 2
    float norm = cpu::optimizerStep(
        cpuTensors.data(), 3,
        {weights[k], phases[k], 0.5f, accumulator.data(), 0.1f}, adam.lr, 4,
        adam.beta1, adam.beta2, adam.epsilon);
    DeviceArray<float> dweight(std::vector<float>{weights[k]});
    cuda::optimizerStep(device.tensors.data(), 3,
                        {0.0f, phases[k], 0.5f, daccumulator.get(), 0.1f},
                        dlr.get(), dstep.get(), dweight.get(), dnorm.get(),
                        adam.beta1, adam.beta2, adam.epsilon);
    std::string tag = " batch " + std::to_string(k);
    EXPECT_NEAR(dnorm.read()[0], norm, 1e-5 * norm) << tag;
    device.expectMatches(adam, tag);
  }
}

// A finite gradient past what Adam takes (runtime::adamTakes: an element of
// 1e20, whose square overflows f32): no update, as on the CPU; clipped to
// norm 1, the CPU's update.
TEST_F(CudaKernels, OptimizerStepSkipsANormPastWhatAdamTakes) {
  for (float clip : {0.0f, 1.0f}) {
    AdamProblem adam;
    adam.g[2][7] = 1e20f;
    std::vector<std::vector<float>> before = adam.p;
    DeviceAdam device(adam);
    std::vector<cpu::AdamTensor> cpuTensors = adam.cpuTensors();
    float norm = cpu::optimizerStep(cpuTensors.data(), 3,
                                    {1.0f, runtime::kUpdate, clip}, adam.lr,
                                    1, adam.beta1, adam.beta2, adam.epsilon);
    DeviceArray<float> dlr(std::vector<float>{AdamProblem::lr}),
        dweight(std::vector<float>{1.0f}), dnorm(1);
    DeviceArray<int32_t> dstep(std::vector<int32_t>{1});
    cuda::optimizerStep(device.tensors.data(), 3,
                        {0.0f, runtime::kUpdate, clip, nullptr, 0.0f},
                        dlr.get(), dstep.get(), dweight.get(), dnorm.get(),
                        adam.beta1, adam.beta2, adam.epsilon);
    std::string tag = " clip " + std::to_string(clip);
    EXPECT_NEAR(dnorm.read()[0], norm, 1e-5 * norm) << tag;
    if (clip == 0.0f) {
      for (size_t x = 0; x < 3; ++x) {
        EXPECT_EQ(device.read(x, 0), before[x]) << tag << " tensor " << x;
      }
    }
    device.expectMatches(adam, tag);
  }
}

} // namespace
} // namespace tgc::test
