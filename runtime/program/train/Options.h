//===- Options.h - the command line of a generated training binary -*- C++ -*-===//
#ifndef TGC_RUNTIME_TRAIN_OPTIONS_H
#define TGC_RUNTIME_TRAIN_OPTIONS_H

#include "common/Schedule.h"
#include "runtime/data/Tasks.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tgc::runtime {

struct TrainOptions {
  /// A built-in task; unset means --train-* files, or `reverse` without them.
  std::optional<Task> task;
  /// Parallel token-id files (one sentence per line) instead of a task.
  std::string trainSource, trainTarget, validSource, validTarget;
  /// Corpora written by tgc-data encode, and their SentencePiece model.
  std::string trainData, validData, vocabulary;
  /// Validation (loss, perplexity, BLEU) every N steps; 0: off.
  int64_t validEvery = 0;
  /// Pairs validated: unset means the whole validation set (a task's
  /// held-out set: kTaskValidationPairs).
  std::optional<int64_t> validSentences;
  /// Beam of validation's translations (unset: greedy).
  std::optional<int64_t> validBeam;
  /// What <checkpoint>.best and --patience go by (unset: BLEU).
  enum class BestBy { Bleu, Loss };
  std::optional<BestBy> bestBy;
  /// Stop after this many validations without improvement (unset: never).
  std::optional<int64_t> patience;
  /// One JSON record per log line and per validation (Metrics.h).
  std::string metrics;
  /// Translation mode: the text to translate ("-": stdin) and where to.
  std::string translate, output;
  /// A language model's generation: the prompts ("-": stdin), at most
  /// this many new tokens each, and how they are picked (decode/
  /// Translate.h's Sampling: temperature 0 is greedy).
  std::string generate;
  /// --score F.tok: the loss and perplexity of a corpus under the resumed
  /// parameters, nothing trained.
  std::string score;
  int64_t maxNewTokens = 64;
  double temperature = 1.0, topP = 1.0;
  int64_t topK = 0;
  bool samplingFlags = false;
  int64_t beam = 4;
  bool beamGiven = false; ///< --beam was given (greedy search takes none)
  /// --translate: the best N hypotheses of each line, with their scores
  /// (0: the best one's text only).
  int64_t nbest = 0;
  /// --translate: at most this many sentences a decoder call (0: as many
  /// as the compiled batch holds).
  int64_t translateBatch = 0;
  double alpha = 0.6;
  /// --translate with greedy search instead of beam search.
  bool greedy = false;
  /// Recompute whole prefixes with @predict instead of the incremental
  /// decoder (for comparisons; both give the same tokens).
  bool fullDecoding = false;
  int64_t steps = 1000;
  /// Also stop after this many passes over a corpus (--max-epochs; 0: none).
  int64_t maxEpochs = 0;
  /// Also stop after this many seconds of training (--max-time; 0: none).
  int64_t maxSeconds = 0;
  /// Unset: 1, or the checkpoint's on --resume.
  std::optional<uint32_t> seed;
  int64_t logEvery = 100;
  /// Batches whose gradients make one update (--update-freq).
  int64_t updateFreq = 1;
  /// Fill at most this many tokens a batch within the compiled buckets
  /// (--max-tokens; 0: every compiled row). Batcher.h's batchRows.
  int64_t maxTokens = 0;
  /// Global gradient-norm clipping (--clip-norm); 0: off.
  float clipNorm = 0.0f;
  /// AdamW's weight decay (--weight-decay, 0 to 1); unset: the model's.
  std::optional<double> weightDecay;
  /// Run-time hyperparameters of the step (unset: the model's): --dropout,
  /// --attention-dropout, --label-smoothing (each 0 <= x < 1),
  /// --adam-betas B1,B2 (each 0 <= b < 1) and --adam-eps (0 < e < 1).
  std::optional<double> dropout, attentionDropout, labelSmoothing;
  std::optional<double> adamBeta1, adamBeta2, adamEps;
  /// The learning-rate schedule's run-time choices (unset: the model's).
  std::optional<LrScheduler> lrScheduler;
  std::optional<double> lr, lrFactor, minLr;
  std::optional<int64_t> warmup;
  /// Where checkpoints go; empty means "<program>.ckpt", or the --resume file.
  std::string checkpoint;
  /// Also save every N steps (0: only at the end and on SIGINT/SIGTERM).
  int64_t saveEvery = 0;
  /// Keep the last N saves as <checkpoint>.step<S> (0: only the latest),
  /// for checkpoint averaging (tgc-data average --last N).
  int64_t keepLast = 0;
  std::string resume;
  /// Replace existing checkpoints (--overwrite): without it a run writes
  /// only a new checkpoint or the one it resumed (main/ProgramFiles.h).
  bool overwrite = false;
  /// Resume a checkpoint whose config differs from the program's.
  bool forceResume = false;
  /// --profile: time every op of the step, print where the time went.
  bool profile = false;
  /// --shard-optimizer: under mpirun, each process keeps Adam's moments of
  /// 1/N of the parameters (ShardedOptimizer.h).
  bool shardOptimizer = false;
  /// --cuda-graphs[=true|false]: a GPU program replays its step as one CUDA
  /// graph (runtime/program/cuda/StepGraphs.h). Unset: the default, on for
  /// one process's GPU program unless --profile times its ops
  /// (usesCudaGraphs).
  std::optional<bool> cudaGraphs;
  /// --fused-attention: a GPU program's attention with bf16 products runs
  /// as the fused kernels (runtime/kernels/cuda/FusedAttention.h).
  bool fusedAttention = false;
  /// Print the program's manifest and stop.
  bool printVersion = false;
  /// Held-out sentences to translate greedily after training (0: none).
  int64_t evalSentences = 256;
  /// How many of them to print as samples.
  int64_t samples = 3;
  /// Where to write every variable (raw f32, declaration order) at the end.
  std::string dumpParameters;
  /// Where to write each step's loss and token count, one line per step.
  std::string lossLog;
};

/// The largest values of the flags that size allocations or work before
/// the first step (docs/limits.md): --update-freq (a batch each),
/// --beam and --valid-beam (hypotheses per sentence), --eval-sentences,
/// --valid-sentences and --samples (held-out pairs generated and decoded).
/// A larger value is refused, not allocated.
inline constexpr int64_t kMaxUpdateFreq = 4096;
inline constexpr int64_t kMaxBeam = 256;
/// The largest --alpha: GNMT's length penalty is used at 0.6 to 1; past
/// 10 its power overflows for long outputs (1e308 made every score 0).
inline constexpr double kMaxAlpha = 10;
inline constexpr int64_t kMaxSentences = 1000000;
/// The most --max-new-tokens: one decoder call each, a bound on the work.
inline constexpr int64_t kMaxNewTokens = 1000000;
/// The most --steps: the compiled step reads its step (Adam's bias
/// correction) as a 32-bit integer, and a checkpoint past it is refused.
inline constexpr int64_t kMaxSteps = 2147483647;
/// The most batches a run draws (--steps x --update-freq): dropout's key
/// counts them in 32 bits.
inline constexpr uint64_t kMaxBatchesDrawn = 4294967295u;
/// The largest --max-epochs and --max-time (in hours): beyond them a typo,
/// not a plan.
inline constexpr int64_t kMaxEpochs = 1000000;
inline constexpr int64_t kMaxTimeHours = 10000;

/// Parses the flags in kUsage (also `--flag=value`) and `--help`. Returns
/// false when the program should stop: after printing the help (`exitCode`
/// 0) or a problem (`exitCode` 2).
/// The held-out pairs of a built-in task that validation uses unless
/// --valid-sentences says otherwise (a task can generate any number).
inline constexpr int64_t kTaskValidationPairs = 256;

bool parseTrainOptions(int argc, char **argv, TrainOptions &options,
                       int &exitCode);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_OPTIONS_H
