//===- ProgramTarget.h - where the C++ and CUDA programs differ -*- C++ -*-===//
//
// The lowering (FileEmitter, EmitContext, the elementwise expressions and
// codegen/calls/) writes one program for either target; every place where
// the CPU program (codegen/cpp/) and the CUDA program (codegen/cuda/) write
// something else is a virtual method here, so the shared part has no
// target tests. The CPU keeps everything in StepFrame `f`; CUDA keeps the
// state, the arena and the inputs on the device (`g`), writes kernels for
// elementwise loops and copies results back for the host.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_PROGRAMTARGET_H
#define TGC_CODEGEN_LOWERING_PROGRAMTARGET_H

#include "codegen/lowering/Bucket.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc::cpp {

class EmitContext;

/// One call of an entry function, in order: an op's function, or one the
/// lowering adds (`op` null: CUDA's input upload, the return's finish).
struct OpCall {
  std::string function;
  mlir::Operation *op = nullptr;
};

/// What a function's entry (trainStep, predict, ...) calls.
struct EntryFunction {
  FunctionKind kind;
  std::string name;
  mlir::func::FuncOp function;
  llvm::SmallVector<OpCall> calls;
};

/// An array an elementwise pass reads or writes: the pointer declared
/// before the pass (`in0`, `out0`), the local holding an element's value
/// (`v3`, f32), and whether the array holds bf16 (widened as it loads,
/// rounded as it stores).
struct ElementwiseArray {
  std::string pointer, local;
  bool bf16 = false;
};

/// An elementwise op or group as one pass over `count` elements: the
/// pointers and dropout sites are declared before it (as locals of the
/// op's function, and as `parameters`/`arguments` for a kernel of its own).
/// Per element, the target loads `inputs` into their locals, runs
/// `constants` and `body` (statements four spaces deep, reading the
/// locals), then stores `outputs` (after every load: a result may share
/// bytes with an input).
struct ElementwiseLoop {
  int64_t count = 0;
  llvm::SmallVector<ElementwiseArray> inputs, outputs;
  std::string constants, body;
  llvm::SmallVector<std::string> parameters, arguments;
  /// The dropout sites, in order (the targets draw their factors for
  /// several elements at once).
  std::vector<std::string> dropoutSites;
};

/// `text`'s lines `spaces` deeper.
std::string indented(llvm::StringRef text, int spaces);

/// The finish of a function returning logits: its body and what the
/// comment above it says.
struct LogitsRead {
  std::string body, comment;
};

/// The sizes the device hooks allocate.
struct ProgramSizes {
  int64_t stateFloats = 0, gradientFloats = 0, arenaBytes = 0;
};

class ProgramTarget {
public:
  virtual ~ProgramTarget() = default;

  // Where values live, for EmitContext and the kernel calls.

  /// The expression of a function argument the kernels read, by its role:
  /// source_ids, target_in_ids, target_out_ids (the ids), lr and step (the
  /// scalars, by pointer). The other roles are host values on both.
  virtual std::string inputArgument(llvm::StringRef role) const = 0;
  /// The frame holding the state, the decoding caches and the gradient
  /// accumulator where the kernels read them.
  virtual std::string stateFrame() const = 0;
  std::string stateBase() const { return stateFrame() + ".state"; }
  std::string cacheBase() const { return stateFrame() + ".cache"; }
  /// Where the host reads `value`, which is neither a constant nor the
  /// dropout key; fails with a diagnostic where only the device has it.
  virtual mlir::FailureOr<std::string> hostRead(mlir::Value value,
                                                EmitContext &context) const = 0;
  /// A kernel argument taking scalar input `pointer` (lr, step).
  virtual std::string scalarArgument(const std::string &pointer) const = 0;
  /// A statement copying `bytes` from `source` to `target` (same memory).
  virtual std::string copy(const std::string &target, const std::string &source,
                           int64_t bytes) const = 0;
  /// The statement of kernels::optimizerStep: `head` its tensors, their
  /// count and the control; `lr` and `step` scalar arguments; the gradient
  /// norm goes to `norm`; `hyper` is beta1, beta2, epsilon; `loss` points
  /// to the step's loss (an update from a non-finite one is skipped: the
  /// CPU's step does not call the optimizer then, CheckedStep.cpp).
  virtual std::string optimizerStep(const std::string &head,
                                    const std::string &lr,
                                    const std::string &step,
                                    const std::string &norm,
                                    const std::string &hyper,
                                    const std::string &loss) const = 0;

  /// The braced fields of a site's kernels::Dropout, from the host key
  /// `key` (int32_t[2]): its op id, rate and index offset, and on CUDA the
  /// device copy of the step's key when `stepKey` (the site reads the
  /// function's dropout_key).
  std::string dropoutSite(const std::string &key, bool stepKey, uint64_t opId,
                          const std::string &rate,
                          const std::string &indexOffset) const {
    std::string device = stepKey ? dropoutKeyOnDevice() : std::string();
    return "{uint32_t(" + key + "[0]), uint32_t(" + key +
           "[1]), " + std::to_string(opId) + "u, " + rate + ", " +
           indexOffset + (device.empty() ? "" : ", " + device) + "}";
  }
  /// Where the kernels read the step's dropout key instead of the site's
  /// copy (Dropout::deviceKey); empty where they take the copy.
  virtual std::string dropoutKeyOnDevice() const = 0;

  // Elementwise ops and groups.

  /// The expression of dropout site `site`'s factor for the element the
  /// pass's body is at.
  virtual std::string dropoutFactor(const std::string &site) const = 0;
  /// Writes the pass over the elements after `n` is declared: into `os`
  /// (the op's function) and, for a kernel `<name>_kernel`, into `kernels`
  /// (file scope, before the function).
  virtual void writeElementwise(const ElementwiseLoop &loop,
                                llvm::StringRef name, llvm::raw_ostream &os,
                                llvm::raw_ostream &kernels) const = 0;

  // The functions.

  /// After constant `name` (a static array of `type` in `bucket`) is
  /// written: what the kernels read instead, declared in `os`.
  virtual std::string placeConstant(const Bucket &bucket, llvm::StringRef name,
                                    llvm::StringRef type,
                                    llvm::raw_ostream &os) = 0;
  /// The body of a function run before the first op that hands it its
  /// inputs (`sourceIds`, `targetIds` ids), if the target needs one.
  virtual std::optional<std::string> inputUpload(int64_t sourceIds,
                                                 int64_t targetIds) const = 0;
  /// The step's finish: the loss, tokens, cross-entropy part and gradient
  /// norm (pointers, or "nullptr" where the step has none) into the frame.
  virtual std::string readLoss(const std::string &loss,
                               const std::string &tokens,
                               const std::string &crossEntropy,
                               const std::string &norm) const = 0;
  /// The finish of @predict and @decode_step: where the frame finds the
  /// `elements` logits at `logits`.
  virtual LogitsRead readLogits(const std::string &logits,
                                int64_t elements) const = 0;
  /// Writes `entry`, which runs its calls in order.
  virtual mlir::LogicalResult writeEntry(const EntryFunction &entry,
                                         EmitContext &context,
                                         llvm::raw_ostream &os) const = 0;

  // The file and the model's tables.

  /// What the file's first line adds after "generated by tgc".
  virtual llvm::StringRef generatedFor() const = 0;
  /// The includes of the kernels and the frame, and what says so.
  virtual void writeIncludes(llvm::raw_ostream &os) const = 0;
  /// "cpu": the namespace `kernels::` stands for.
  virtual llvm::StringRef kernelNamespace() const = 0;
  /// The arena accessors F, I and H (and what they read).
  virtual void writeArenaAccessors(llvm::raw_ostream &os) const = 0;
  /// CompiledBucket's checking step of `bucket`, and its profiling step
  /// with its ops and their count: every target's writeEntry writes
  /// checkTrainStep (FiniteChecks.h), profileTrainStep and kTrainStepOps.
  std::string checkingStep(const Bucket &bucket) const {
    return "&" + qualified(bucket, "checkTrainStep");
  }
  std::string profilingStep(const Bucket &bucket) const {
    return "&" + qualified(bucket, "profileTrainStep") + ", " +
           qualified(bucket, "kTrainStepOps") + ", std::size(" +
           qualified(bucket, "kTrainStepOps") + ")";
  }
  /// Writes the DeviceHooks the model names (deviceHooks()), if any.
  virtual void writeDeviceHooks(const ProgramSizes &sizes,
                                llvm::ArrayRef<Bucket> buckets,
                                llvm::raw_ostream &os) const = 0;
  virtual llvm::StringRef deviceHooks() const = 0;
};

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_PROGRAMTARGET_H
