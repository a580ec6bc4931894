//===- ModelState.cpp - a compiled model's memory -------------------------===//
#include "runtime/program/train/ModelState.h"

#include "runtime/data/AtomicFile.h"
#include "runtime/program/Progress.h"
#include "runtime/program/train/Batcher.h"
#include "runtime/program/train/Initializers.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <sys/mman.h>

namespace tgc::runtime {
namespace {

/// Buffers of at least this size are aligned to it and asked to be backed
/// by transparent huge pages: the step streams through hundreds of MiB, and
/// with 4 KiB pages its GEMMs miss the TLB (3L bf16 step: 1-4% faster).
constexpr size_t kHugePage = size_t{2} << 20;

/// 64-byte (from kHugePage bytes up, kHugePage) aligned, zero-filled
/// storage for `bytes` bytes of `what`; null after a message when the
/// machine has too little memory.
void *allocateZeroed(int64_t bytes, const char *what) {
  size_t align = static_cast<size_t>(bytes) >= kHugePage ? kHugePage : 64;
  size_t rounded = (static_cast<size_t>(bytes) + align - 1) / align * align;
  void *p = std::aligned_alloc(align, rounded > 0 ? rounded : 64);
  // Advice only: where the kernel has no huge pages, 4 KiB pages serve.
  if (p && align == kHugePage)
    madvise(p, rounded, MADV_HUGEPAGE);
  if (!p) {
    std::fprintf(stderr, "error: cannot allocate %lld bytes for the %s\n",
                 static_cast<long long>(bytes), what);
    return nullptr;
  }
  std::memset(p, 0, rounded);
  return p;
}

} // namespace

std::unique_ptr<ModelState> ModelState::allocate(const CompiledModel &model) {
  StateBuffer state(
      static_cast<float *>(allocateZeroed(model.stateFloats * 4, "state")));
  if (!state)
    return nullptr;
  // A GPU model keeps its arena on the device.
  ArenaBuffer arena(static_cast<char *>(
      allocateZeroed(model.device ? 0 : model.arenaBytes, "arena")));
  if (!arena)
    return nullptr;
  return std::unique_ptr<ModelState>(
      new ModelState(model, std::move(state), std::move(arena)));
}

bool ModelState::initialize(uint32_t seed) {
  for (int i = 0; i < model.numVariables; ++i) {
    const CompiledVariable &v = model.variables[i];
    std::span<const int64_t> shape(v.shape, static_cast<size_t>(v.rank));
    if (!initializeTensor(state() + v.offset, shape,
                          static_cast<InitKind>(v.init), v.initScale, seed,
                          v.name)) {
      std::fprintf(stderr, "error: cannot initialize variable %s\n", v.name);
      return false;
    }
  }
  return true;
}

std::vector<CheckpointTensor> ModelState::tensors() {
  std::vector<CheckpointTensor> tensors;
  for (int i = 0; i < model.numVariables; ++i) {
    const CompiledVariable &v = model.variables[i];
    tensors.push_back({v.name, std::vector<int64_t>(v.shape, v.shape + v.rank),
                       state() + v.offset});
  }
  return tensors;
}

std::string ModelState::configText() const {
  std::string buckets = describeBuckets(model);
  char text[512];
  std::snprintf(text, sizeof text,
                "model %s; buckets (batch x source x target) %s; vocabulary "
                "%lld; %d variables; schedule warmup d_model %lld, warmup "
                "%lld, factor %.17g",
                model.name, buckets.c_str(),
                static_cast<long long>(model.vocabulary), model.numVariables,
                static_cast<long long>(model.scheduleDModel),
                static_cast<long long>(model.scheduleWarmup),
                model.scheduleFactor);
  return text;
}

template <typename Bad>
const char *ModelState::firstVariableWhere(bool trainableOnly, Bad bad,
                                           float &value) {
  for (int i = 0; i < model.numVariables; ++i) {
    const CompiledVariable &v = model.variables[i];
    if (trainableOnly && !v.trainable)
      continue;
    const float *values = state() + v.offset;
    for (int64_t j = 0; j < v.size; ++j)
      if (bad(values[j])) {
        value = values[j];
        return v.name;
      }
  }
  return nullptr;
}

const char *ModelState::firstNonFinite() {
  float value;
  return firstVariableWhere(
      false, [](float x) { return !std::isfinite(x); }, value);
}

const char *ModelState::firstBeyond(float bound, float &value) {
  return firstVariableWhere(
      true, [bound](float x) { return std::fabs(x) > bound; }, value);
}

bool ModelState::dumpParameters(const std::string &path) {
  // Whole or not at all: a failed dump leaves what the file held.
  AtomicFile file(path);
  for (int i = 0; i < model.numVariables; ++i) {
    const CompiledVariable &v = model.variables[i];
    file.write(state() + v.offset, static_cast<size_t>(v.size) * sizeof(float));
    noteProgress(); // rank 0 may dump after its final save
  }
  if (std::string error = file.commit(); !error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return false;
  }
  return true;
}

} // namespace tgc::runtime
