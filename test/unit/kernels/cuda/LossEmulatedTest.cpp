//===- LossEmulatedTest.cpp - the loss kernels on the host ----------------===//
//
// runtime/kernels/cuda/LossKernels.cuh's kernels run by KernelEmulator.h,
// against the CPU's cross-entropy and its gradient on the same logits:
// lossAndGradRowKernel (a wide vocabulary's row in shared memory, read
// once) and lossAndGradKernel (the rows read twice), which it replaces for
// rows past 8192 classes, then meanLossKernel; and tg.cross_entropy's
// kernels as Loss.cu launches them (crossEntropyKernel, whose last block
// adds up the rows, then countTokensKernel and crossEntropyGradKernel). On
// a GPU, TrainingTest.cpp's OutputLossOverAWideVocabulary checks the first
// through cuda::outputLoss.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/LossKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

namespace tgc::test {
namespace {

/// One kernel's per-row losses and logit gradient (as G) on the emulator.
struct LossKernelRun {
  std::vector<double> rowLoss;
  std::vector<float> grad;
};

float asFloat(float x) { return x; }
float asFloat(runtime::Bf16 x) { return runtime::widen(x); }

template <typename G, typename Kernel>
LossKernelRun runLossKernel(Kernel kernel, unsigned threads, size_t shared,
                            const std::vector<float> &logits,
                            const std::vector<int32_t> &targets,
                            int64_t classes, float lossGrad, float smoothing,
                            int32_t count) {
  const int64_t rows = static_cast<int64_t>(targets.size());
  std::vector<G> grad(logits.size(), cuda::convertedTo<G>(5.0f)); // garbage
  std::vector<double> rowLoss(rows, 7.0);
  emulator::launch(
      dim3(static_cast<unsigned>(rows)), dim3(threads), shared, [&] {
        kernel(logits.data(), grad.data(), targets.data(), &count,
               rowLoss.data(), lossGrad, rows, classes, smoothing, kIgnore);
      });
  LossKernelRun run{rowLoss, {}};
  for (G g : grad)
    run.grad.push_back(asFloat(g));
  return run;
}

// 6 rows of 20,000 classes (a translation model's vocabulary), one target
// ignored; the gradient in f32 and in bf16 (rounded once).
TEST(LossEmulated, RowKernelIsTheCpusCrossEntropy) {
  const int64_t classes = 20000;
  std::vector<int32_t> targets =
      randomIds(6, 51, 1, static_cast<int32_t>(classes - 1));
  targets[2] = kIgnore;
  const int32_t count = 5;
  const std::vector<float> logits =
      uniform(targets.size() * classes, 52, -4.0f, 4.0f);
  const int64_t rows = static_cast<int64_t>(targets.size());
  const float lossGrad = 1.7f;
  for (float smoothing : {0.0f, 0.1f}) {
    const std::string tag = "smoothing " + std::to_string(smoothing);
    float loss = 0.0f;
    int32_t tokens = -1;
    cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens, rows,
                      classes, smoothing, kIgnore);
    ASSERT_EQ(tokens, count);
    std::vector<float> expected(logits.size());
    cpu::crossEntropyGrad(lossGrad, logits.data(), targets.data(),
                          expected.data(), rows, classes, smoothing, kIgnore);

    const size_t rowBytes = classes * sizeof(float);
    const LossKernelRun row = runLossKernel<float>(
        cuda::lossAndGradRowKernel<float>, cuda::kRowThreads, rowBytes, logits,
        targets, classes, lossGrad, smoothing, count);
    double total = 0.0;
    for (double x : row.rowLoss)
      total += x;
    EXPECT_EQ(row.rowLoss[2], 0.0) << tag << ": an ignored row's loss";
    expectClose("emulated row kernel loss " + tag,
                {static_cast<float>(total / count)}, {loss}, 1e-6);
    expectClose("emulated row kernel gradient " + tag, row.grad, expected,
                1e-5);

    // The kernel it replaces, on the same rows: the same row losses (up to
    // the order of their sums) and gradients.
    const LossKernelRun twice = runLossKernel<float>(
        cuda::lossAndGradKernel<float>, cuda::kThreads, 0, logits, targets,
        classes, lossGrad, smoothing, count);
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_NEAR(row.rowLoss[r], twice.rowLoss[r], 1e-9 * classes)
          << tag << " row " << r;
    expectClose("emulated row kernel against the two-pass kernel " + tag,
                row.grad, twice.grad, 1e-6);

    // A bf16 gradient is the f32 one rounded once.
    const LossKernelRun rounded = runLossKernel<runtime::Bf16>(
        cuda::lossAndGradRowKernel<runtime::Bf16>, cuda::kRowThreads, rowBytes,
        logits, targets, classes, lossGrad, smoothing, count);
    int64_t differing = 0;
    for (size_t i = 0; i < row.grad.size(); ++i)
      differing += runtime::roundToBf16(row.grad[i]).bits !=
                   runtime::roundToBf16(rounded.grad[i]).bits;
    EXPECT_EQ(differing, 0) << tag << ": bf16 gradients not rounded once";
  }
}

// tg.cross_entropy and its gradient as Loss.cu launches them, on 64 rows of
// 1000 classes with about one target in eight ignored; crossEntropyKernel
// twice (its last block resets the count of finished blocks for the next
// call), and meanLossKernel over the same row losses.
TEST(LossEmulated, CrossEntropyKernelsAreTheCpus) {
  const std::vector<float> logits = lossLogits(61);
  const std::vector<int32_t> targets = lossTargets(62);
  const int64_t rows = kLossRows, classes = kClasses;
  const float lossGrad = 0.7f;
  for (float smoothing : {0.0f, 0.1f}) {
    const std::string tag = " smoothing " + std::to_string(smoothing);
    float loss = 0.0f;
    int32_t tokens = -1;
    cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens, rows,
                      classes, smoothing, kIgnore);
    std::vector<float> expected(logits.size());
    cpu::crossEntropyGrad(lossGrad, logits.data(), targets.data(),
                          expected.data(), rows, classes, smoothing, kIgnore);
    ASSERT_GT(tokens, 0);
    ASSERT_LT(tokens, rows);

    std::vector<double> rowLoss(rows, 7.0);
    for (int call = 0; call < 2; ++call) {
      float gotLoss = -1.0f;
      int32_t gotTokens = -1;
      emulator::launch(dim3(cuda::rowBlocks(rows)), dim3(cuda::kThreads), 0,
                       [&] {
                         cuda::crossEntropyKernel(
                             logits.data(), targets.data(), rowLoss.data(),
                             &gotLoss, &gotTokens, rows, classes, smoothing,
                             kIgnore);
                       });
      EXPECT_EQ(gotTokens, tokens) << tag << " call " << call;
      expectClose("emulated crossEntropy" + tag, {gotLoss}, {loss}, 1e-6);
    }
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_TRUE(targets[r] != kIgnore || rowLoss[r] == 0.0)
          << tag << ": ignored row " << r << " has loss " << rowLoss[r];

    int32_t count = -1;
    emulator::launch(dim3(1), dim3(cuda::kThreads), 0, [&] {
      cuda::countTokensKernel(targets.data(), rows, kIgnore, &count);
    });
    EXPECT_EQ(count, tokens) << tag;
    std::vector<float> grad(logits.size(), 7.0f);
    emulator::launch(dim3(cuda::rowBlocks(rows)), dim3(cuda::kThreads), 0,
                     [&] {
                       cuda::crossEntropyGradKernel(
                           lossGrad, logits.data(), targets.data(), &count,
                           grad.data(), rows, classes, smoothing, kIgnore);
                     });
    expectClose("emulated crossEntropyGrad" + tag, grad, expected, 1e-5);

    float meanLoss = -1.0f;
    int32_t meanTokens = -1;
    emulator::launch(dim3(1), dim3(cuda::kThreads), 0, [&] {
      cuda::meanLossKernel(rowLoss.data(), &count, rows, &meanLoss,
                           &meanTokens);
    });
    EXPECT_EQ(meanTokens, tokens) << tag;
    expectClose("emulated meanLoss" + tag, {meanLoss}, {loss}, 1e-6);
  }
}

} // namespace
} // namespace tgc::test
