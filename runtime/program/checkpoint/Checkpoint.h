//===- Checkpoint.h - training checkpoints: save, verify, restore -*- C++ -*-===//
//
// A checkpoint is one file:
//
//   "TGCCKPT\n"            8 bytes, the magic
//   u32 format version     kCheckpointVersion
//   u32 metadata bytes     n
//   u32 metadata crc32     of the next n bytes
//   u32 zero
//   metadata               proto::Checkpoint (Checkpoint.proto), n bytes
//   zero padding           to a multiple of 64 bytes from the file's start
//   data                   every tensor's raw little-endian f32 values
//
// Writing is atomic: the bytes go to "<path>.tmp.<pid>.<n>" (in <path>'s
// directory), every write is checked, the file is flushed to disk and
// renamed over <path>, so a crash, kill -9 or a full disk leaves the
// previous checkpoint as it was. Only a regular file is ever replaced (a
// directory, a device such as /dev/full or a FIFO is refused). Reading
// checks the magic, the version, both kinds of checksums, that the zero
// word and the padding (outside both checksums) are zero, the file's size
// and that the tensors are exactly the model's (names and shapes) before it
// changes any of them.
//
// One process owns a checkpoint path at a time: claimCheckpoint (the first
// writeCheckpoint does it too) takes an advisory lock, flock on
// "<path>.lock" holding the owner's pid, for as long as the process runs;
// another process's claim is refused ("checkpoint X is in use by another
// run (pid N)"). The lock file is removed at a normal exit (or earlier:
// releaseCheckpointClaims); one left by a
// killed process holds no lock and is taken over, as are the temporary
// files such a process left. Only tgc's own are: the lock file is opened
// with O_NOFOLLOW and taken only when it holds what a claim writes (a
// regular file of one link, a pid or nothing), and a temporary is removed
// only by its exact name (isStaleTemporary) when it is a regular file.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CHECKPOINT_H
#define TGC_RUNTIME_CHECKPOINT_H

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tgc::runtime {

inline constexpr uint32_t kCheckpointVersion = 1;

/// One tensor of the training state, in the caller's memory.
struct CheckpointTensor {
  std::string name;
  std::vector<int64_t> shape;
  float *data;
};

/// What a checkpoint records besides the tensors.
struct CheckpointInfo {
  std::string model;  ///< the compiled model's name
  std::string config; ///< its shapes, optimizer and schedule, as text
  int64_t step = 0;   ///< steps completed
  uint32_t seed = 0;  ///< with `step`, the whole RNG state
  std::string data;   ///< where batches came from, e.g. "task reverse"
  double bestBleu = -1; ///< best validation BLEU so far; -1 before any
  double bestLoss = -1; ///< best validation loss so far; -1 before any
  int64_t staleValidations = 0; ///< validations since the best one
  std::string manifest; ///< of the program that wrote it; empty: unknown
  /// The run that wrote it: data-parallel processes and the sentences of
  /// one update over all of them; 0: not recorded (older checkpoints).
  int32_t processes = 0;
  int64_t globalBatch = 0;
  /// The learning-rate schedule in force and AdamW's weight decay.
  std::string schedule;
  /// The step's run-time hyperparameters in force ("label smoothing 0.1;
  /// adam betas (0.9, 0.98); adam eps 1e-09; dropout 0.1"); empty in
  /// older checkpoints.
  std::string hyperparameters;
  /// The run it belongs to: a hash of what a run that starts afresh starts
  /// from (seed, data, shapes, schedule, hyperparameters), kept by every
  /// resume; 0: not recorded (older checkpoints).
  uint64_t run = 0;
  /// The training data's batches drawn by all processes together; 0: not
  /// recorded (older checkpoints).
  uint64_t batchesDrawn = 0;
  /// The last step whose validation completed (0: none yet); -1: the run
  /// did not validate, or not recorded (older checkpoints).
  int64_t validatedStep = -1;
  /// What a corpus's batches depended on besides its pairs and the seed
  /// (TrainingData::batchPlan), and the passes over it drawn; empty and -1
  /// for a task, or not recorded (older checkpoints).
  std::string batchPlan;
  double epochs = -1;
  /// What the training data holds, whatever its files are called
  /// (TrainingData::contentFingerprint); empty: not recorded.
  std::string dataFingerprint;
  /// The vocabulary of the text trained on (TrainingData::vocabularyHash);
  /// 0: token ids without one, or not recorded.
  uint64_t vocabularyHash = 0;
};

/// Makes this process the owner of checkpoint `path` until it exits (see
/// above); refuses a path that exists and is not a regular file. Returns an
/// empty string or why not, naming the file. Cheap after the first call.
std::string claimCheckpoint(const std::string &path);

/// Gives up every checkpoint this process claimed: their lock files are
/// removed. main calls it once the run has saved for the last time, before
/// a data-parallel run's MPI teardown, which mpirun may cut short with
/// SIGKILL (after Ctrl-C it kills its processes about a second after their
/// SIGTERM, whatever they are doing); exit handlers call it too.
void releaseCheckpointClaims();

/// Claims `path` and writes `info` and `tensors` to it atomically. Returns
/// an empty string or what went wrong, naming the file.
std::string writeCheckpoint(const std::string &path, const CheckpointInfo &info,
                            std::span<const CheckpointTensor> tensors);

/// Reads `path` into `info` and the `tensors`, which must be exactly the
/// checkpoint's (matched by name; shapes must agree). Returns an empty string
/// or why the file was refused; on refusal nothing is written to `tensors`.
std::string readCheckpoint(const std::string &path, CheckpointInfo &info,
                           std::span<const CheckpointTensor> tensors);

/// Reads only `path`'s metadata into `info` (its header and metadata
/// checked, not its tensors' data). Returns an empty string or why the file
/// was refused.
std::string readCheckpointInfo(const std::string &path, CheckpointInfo &info);

/// One tensor of a checkpoint read without knowing the model in advance.
struct OwnedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// Reads `path` into `info` and `tensors` (all of the checkpoint's, in the
/// file's order), with readCheckpoint's checks but the model's: for tools
/// such as `tgc-data average`. Returns an empty string or why the file was
/// refused.
std::string readCheckpointTensors(const std::string &path, CheckpointInfo &info,
                                  std::vector<OwnedTensor> &tensors);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_CHECKPOINT_H
