//===- Checkpoint.cpp - training checkpoints ------------------------------===//
#include "runtime/program/checkpoint/Checkpoint.h"

#include "runtime/data/FileChecks.h"
#include "runtime/program/Progress.h"
#include "runtime/program/checkpoint/Checkpoint.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/wire_format_lite.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string_view>
#include <sys/file.h>
#include <tuple>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

namespace tgc::runtime {
namespace {

constexpr char kMagic[8] = {'T', 'G', 'C', 'C', 'K', 'P', 'T', '\n'};
constexpr size_t kHeaderBytes = 24;
constexpr size_t kDataAlignment = 64;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoints store little-endian values as they are in memory");

uint32_t crc32Of(const void *data, size_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  auto *p = static_cast<const Bytef *>(data);
  while (bytes > 0) { // zlib takes at most 4 GiB per call
    uInt chunk = bytes > (1u << 30) ? (1u << 30) : static_cast<uInt>(bytes);
    crc = crc32(crc, p, chunk);
    p += chunk;
    bytes -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

size_t alignUp(size_t n) {
  return (n + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
}

std::string shapeText(const auto &shape) {
  std::string s = "[";
  for (int i = 0; i < static_cast<int>(shape.size()); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A tg tensor holds at most 2^40 elements (the verifier's bound).
constexpr uint64_t kMaxTensorElements = uint64_t{1} << 40;
/// The most steps a checkpoint may count: the compiled step's counter is 32
/// bits (StepFrame::step).
constexpr int64_t kMaxCheckpointStep = INT32_MAX;

/// Whether `entry`'s shape has elements, at most kMaxTensorElements of them,
/// its byte count is theirs, and it lies inside `dataBytes` (no sum or
/// product here can overflow).
bool sizeIsConsistent(const proto::CheckpointTensor &entry,
                      uint64_t dataBytes) {
  uint64_t elements = 1;
  for (int64_t d : entry.shape()) {
    // No model has a tensor without elements (the verifier refuses a zero
    // dimension), and a negative one has no size.
    if (d <= 0 || static_cast<uint64_t>(d) > kMaxTensorElements / elements)
      return false;
    elements *= static_cast<uint64_t>(d);
  }
  return entry.bytes() == elements * sizeof(float) &&
         entry.offset() <= dataBytes && entry.bytes() <= dataBytes - entry.offset();
}

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Calls `io` (::read or ::write) until all `bytes` have moved; false on an
/// error or an early end of file.
template <typename Io, typename Byte>
bool transferAll(Io io, int fd, Byte *data, size_t bytes) {
  while (bytes > 0) {
    ssize_t n = io(fd, data, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const void *data, size_t bytes) {
  return transferAll(::write, fd, static_cast<const char *>(data), bytes);
}

bool readAll(int fd, void *data, size_t bytes) {
  return transferAll(::read, fd, static_cast<char *>(data), bytes);
}

void putU32(char *at, uint32_t value) { std::memcpy(at, &value, 4); }
uint32_t getU32(const char *at) {
  uint32_t value;
  std::memcpy(&value, at, 4);
  return value;
}

/// The checkpoints this process owns: their lock files, open and locked,
/// removed (then closed) when the process exits normally.
struct Claims {
  std::mutex mutex;
  std::map<std::string, int> locks; ///< lock file -> descriptor
};

void releaseClaims(bool waitForClaims);

Claims &claims() {
  static Claims *all = [] {
    auto *created = new Claims; // never destroyed: atexit uses it last
    std::atexit([] { releaseClaims(/*waitForClaims=*/false); });
    return created;
  }();
  return *all;
}

/// Removes and closes every lock file this process holds. An exit handler
/// does not wait for a thread that exit stopped inside a claim: that lock
/// file stays, and the next run takes it over.
void releaseClaims(bool waitForClaims) {
  Claims &all = claims();
  std::unique_lock<std::mutex> guard(all.mutex, std::defer_lock);
  if (waitForClaims)
    guard.lock();
  else if (!guard.try_lock())
    return;
  for (auto &[lockPath, fd] : all.locks) {
    ::unlink(lockPath.c_str()); // while still locked: see claimCheckpoint
    ::close(fd);
  }
  all.locks.clear();
}

/// Removes the temporary files of `path` (temporaryPathFor) that processes
/// which no longer run left behind (killed during a save), those of this
/// pid too: called as the lock is taken, before this process writes.
void removeStaleTemporaries(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string directory = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  DIR *dir = ::opendir(directory.c_str());
  if (!dir)
    return;
  while (const dirent *entry = ::readdir(dir)) {
    if (!isStaleTemporary(entry->d_name, base, /*ownAreStale=*/true))
      continue;
    std::string stale =
        directory + (slash == std::string::npos ? "/" : "") + entry->d_name;
    // writeCheckpoint creates regular files; anything else is not its own.
    struct stat status;
    if (::lstat(stale.c_str(), &status) == 0 && S_ISREG(status.st_mode))
      ::unlink(stale.c_str());
  }
  ::closedir(dir);
}

/// The most a lock file holds: a pid and a newline.
constexpr size_t kLockFileBytes = 24;

/// The pid recorded in a lock file (claimCheckpoint writes "<pid>\n"), or
/// an empty string when it holds nothing (an owner killed between creating
/// and writing it). False when it holds anything else: not a lock file
/// tgc wrote.
bool readLockOwner(int fd, std::string &owner) {
  char text[kLockFileBytes + 1] = {};
  ssize_t n = ::pread(fd, text, sizeof text, 0);
  if (n < 0)
    return false;
  owner.assign(text, static_cast<size_t>(n));
  if (owner.empty())
    return true;
  if (owner.back() != '\n')
    return false;
  owner.pop_back();
  return isCanonicalNumber(owner);
}

/// Opens `lockPath` as claimCheckpoint's lock file: created if missing,
/// never through a symbolic link (O_NOFOLLOW), and an existing file only if
/// it is one that claimCheckpoint wrote (a regular file of one link holding
/// a pid): a user's file that happens to be named <checkpoint>.lock is
/// neither truncated nor taken. -1 with `why` otherwise.
int openLockFile(const std::string &lockPath, std::string &owner,
                 std::string &why) {
  auto notOurs = [&](const std::string &what) {
    why = lockPath + " is not a lock file of a training program (" + what +
          "): remove it, or give another --checkpoint";
    return -1;
  };
  // Not even opened when it is no regular file: opening a device may act.
  struct stat status;
  if (::lstat(lockPath.c_str(), &status) == 0 && !S_ISREG(status.st_mode))
    return notOurs(S_ISLNK(status.st_mode) ? "a symbolic link"
                                           : kindOfFile(status.st_mode));
  // O_NOFOLLOW and O_NONBLOCK: a link or a FIFO planted since the lstat.
  int fd = ::open(lockPath.c_str(),
                  O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ELOOP)
      return notOurs("a symbolic link");
    why = "creating " + lockPath + ": " + std::strerror(errno);
    return -1;
  }
  Descriptor opened{fd};
  if (::fstat(fd, &status) != 0) {
    why = "reading " + lockPath + ": " + std::strerror(errno);
    return -1;
  }
  if (!S_ISREG(status.st_mode))
    return notOurs(kindOfFile(status.st_mode));
  if (status.st_nlink != 1)
    return notOurs("a file with other names: hard links");
  if (static_cast<size_t>(status.st_size) > kLockFileBytes ||
      !readLockOwner(fd, owner))
    return notOurs("it holds other data");
  opened.fd = -1; // the caller's now
  return fd;
}

} // namespace

std::string claimCheckpoint(const std::string &path) {
  if (std::string why = checkReplaceable(path); !why.empty())
    return "cannot write checkpoint: " + why +
           " (a checkpoint only ever replaces a regular file)";
  std::string lockPath = linkedFile(path) + ".lock";
  Claims &all = claims();
  std::lock_guard<std::mutex> guard(all.mutex);
  if (all.locks.count(lockPath))
    return {};
  // A lock file is removed by its owner at exit while still locked, so one
  // locked after it was removed is not the path's: open it again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string owner, why;
    int fd = openLockFile(lockPath, owner, why);
    if (fd < 0)
      return "cannot lock checkpoint " + path + ": " + why;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int error = errno;
      readLockOwner(fd, owner); // written by the holder since the open
      ::close(fd);
      if (error == ENOLCK || error == EOPNOTSUPP)
        return {}; // a file system without locks: go on unlocked
      if (owner == std::to_string(::getpid()))
        return {}; // this process, under another spelling of the path
      if (error == EWOULDBLOCK)
        return "checkpoint " + path + " is in use by another run" +
               (owner.empty() ? std::string() : " (pid " + owner + ")") +
               ": its lock " + lockPath + " is held";
      return "cannot lock checkpoint " + path + ": " + lockPath + ": " +
             std::strerror(error);
    }
    struct stat opened, named;
    if (::fstat(fd, &opened) != 0 || ::stat(lockPath.c_str(), &named) != 0 ||
        opened.st_ino != named.st_ino || opened.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, pid.data(), pid.size(), 0) !=
            static_cast<ssize_t>(pid.size())) {
      int error = errno;
      ::unlink(lockPath.c_str());
      ::close(fd);
      return "cannot lock checkpoint " + path + ": writing " + lockPath +
             ": " + std::strerror(error);
    }
    all.locks[lockPath] = fd;
    // Saves write beside the file a link names (writeCheckpoint).
    removeStaleTemporaries(linkedFile(path));
    return {};
  }
  return "cannot lock checkpoint " + path + ": " + lockPath +
         " keeps being replaced";
}

void releaseCheckpointClaims() { releaseClaims(/*waitForClaims=*/true); }

std::string writeCheckpoint(const std::string &path, const CheckpointInfo &info,
                            std::span<const CheckpointTensor> tensors) {
  proto::Checkpoint metadata;
  metadata.set_model(info.model);
  metadata.set_config(info.config);
  metadata.set_step(info.step);
  metadata.mutable_rng()->set_seed(info.seed);
  metadata.mutable_rng()->set_next_step(info.step);
  metadata.set_data(info.data);
  if (info.bestBleu >= 0)
    metadata.set_best_bleu(info.bestBleu);
  if (info.bestLoss >= 0)
    metadata.set_best_loss(info.bestLoss);
  metadata.set_stale_validations(info.staleValidations);
  metadata.set_manifest(info.manifest);
  metadata.set_processes(info.processes);
  metadata.set_global_batch(info.globalBatch);
  metadata.set_schedule(info.schedule);
  metadata.set_hyperparameters(info.hyperparameters);
  metadata.set_run(info.run);
  metadata.set_batches_drawn(info.batchesDrawn);
  if (info.validatedStep >= 0)
    metadata.set_validated_step(info.validatedStep);
  metadata.set_batch_plan(info.batchPlan);
  metadata.set_data_fingerprint(info.dataFingerprint);
  metadata.set_vocabulary_hash(info.vocabularyHash);
  if (info.epochs >= 0)
    metadata.set_epochs(info.epochs);
  uint64_t offset = 0;
  for (const CheckpointTensor &t : tensors) {
    proto::CheckpointTensor *entry = metadata.add_tensors();
    entry->set_name(t.name);
    for (int64_t d : t.shape)
      entry->add_shape(d);
    uint64_t bytes = static_cast<uint64_t>(elementsOf(t.shape)) * sizeof(float);
    entry->set_offset(offset);
    entry->set_bytes(bytes);
    entry->set_crc32(crc32Of(t.data, bytes));
    noteProgress(); // a big model's checkpoint may take minutes
    offset += bytes;
  }
  metadata.set_data_bytes(offset);
  std::string encoded;
  if (!metadata.SerializeToString(&encoded))
    return "cannot encode the metadata of checkpoint " + path;

  char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, sizeof kMagic);
  putU32(header + 8, kCheckpointVersion);
  putU32(header + 12, static_cast<uint32_t>(encoded.size()));
  putU32(header + 16, crc32Of(encoded.data(), encoded.size()));
  size_t prefix = kHeaderBytes + encoded.size();
  std::string padding(alignUp(prefix) - prefix, '\0');

  if (std::string why = claimCheckpoint(path); !why.empty())
    return why;
  // A link stays a link: the file it names is replaced.
  std::string target = linkedFile(path);
  std::string temporary;
  bool created = false;
  auto fail = [&](const char *what) {
    std::string message = "cannot write checkpoint " + path + ": " + what +
                          " " + temporary + ": " + std::strerror(errno);
    if (created)
      ::unlink(temporary.c_str()); // the previous checkpoint stays as it was
    return message;
  };
  Descriptor file{createTemporaryFor(target, temporary)};
  if (file.fd < 0)
    return fail("creating");
  created = true;
  if (!keepPermissionsOf(target, file.fd))
    return fail("setting the permissions of");
  bool ok = writeAll(file.fd, header, sizeof header) &&
            writeAll(file.fd, encoded.data(), encoded.size()) &&
            writeAll(file.fd, padding.data(), padding.size());
  // The data goes to the disk a piece at a time, each followed by a sign
  // of progress: one fsync of a big checkpoint at the end (on a network
  // file system, say) could outlast the other processes' peer timeout.
  constexpr size_t kSyncedPiece = size_t{64} << 20;
  size_t unsynced = 0;
  for (const CheckpointTensor &t : tensors) {
    auto *data = reinterpret_cast<const char *>(t.data);
    size_t bytes = static_cast<size_t>(elementsOf(t.shape)) * sizeof(float);
    while (ok && bytes > 0) {
      size_t piece = std::min(bytes, kSyncedPiece - unsynced);
      ok = writeAll(file.fd, data, piece);
      data += piece;
      bytes -= piece;
      unsynced += piece;
      if (ok && unsynced == kSyncedPiece) {
        ok = ::fdatasync(file.fd) == 0;
        unsynced = 0;
        noteProgress();
      }
    }
    noteProgress();
  }
  if (!ok)
    return fail("writing");
  if (::fsync(file.fd) != 0)
    return fail("flushing");
  int closed = ::close(file.fd);
  file.fd = -1;
  if (closed != 0)
    return fail("closing");
  if (::rename(temporary.c_str(), target.c_str()) != 0)
    return fail("renaming");
  if (std::string warning = syncDirectoryOf(target); !warning.empty())
    std::fprintf(stderr, "%s\n", warning.c_str());
  return {};
}

namespace {

/// The most tensors and shape values a checkpoint's metadata may list:
/// models have thousands. Parsed, an empty tensor entry of 2 bytes took
/// about 100: a forged 64 MiB of them took 3 GB before any other check.
constexpr int64_t kMaxCheckpointTensors = int64_t{1} << 20;
constexpr int64_t kMaxShapeValues = int64_t{8} << 20;

/// Counts an encoded Checkpoint's tensor entries (field 6) and, at most,
/// their shape values (field 2 of each; a packed run counted by its
/// bytes) from the wire format, without parsing it. False where the wire
/// format breaks (ParseFromString says so then).
bool countEntries(const std::string &encoded, int64_t &tensors,
                  int64_t &shapeValues) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(encoded.data()),
      static_cast<int>(encoded.size()));
  tensors = shapeValues = 0;
  while (uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) != 6 ||
        WireFormatLite::GetTagWireType(tag) !=
            WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag))
        return false;
      continue;
    }
    ++tensors;
    uint32_t length = 0;
    if (!in.ReadVarint32(&length))
      return false;
    auto limit = in.PushLimit(static_cast<int>(length));
    while (uint32_t inner = in.ReadTag()) {
      if (WireFormatLite::GetTagFieldNumber(inner) == 2 &&
          WireFormatLite::GetTagWireType(inner) ==
              WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t packed = 0;
        if (!in.ReadVarint32(&packed) || !in.Skip(static_cast<int>(packed)))
          return false;
        shapeValues += packed;
        continue;
      }
      if (WireFormatLite::GetTagFieldNumber(inner) == 2)
        ++shapeValues;
      if (!WireFormatLite::SkipField(&in, inner))
        return false;
    }
    if (in.BytesUntilLimit() != 0)
      return false;
    in.PopLimit(limit);
  }
  return true;
}

/// What readCheckpoint and readCheckpointTensors share: every check but the
/// model's, in the order a refusal is cheapest (the data is read last).
class CheckpointReader {
public:
  explicit CheckpointReader(const std::string &path) : path(path) {}

  /// Opens the file and checks its header, metadata, size and the tensors'
  /// extents. Returns an empty string or why the file was refused.
  std::string open();
  /// Reads the data section and checks every tensor's CRC-32.
  std::string readData(std::vector<char> &data);

  std::string refuse(const std::string &why) const {
    return "checkpoint " + path + " refused: " + why;
  }
  const proto::Checkpoint &metadata() const { return metadata_; }
  CheckpointInfo info() const;

private:
  const std::string &path;
  Descriptor file;
  proto::Checkpoint metadata_;
  uint64_t dataStart = 0;
};

std::string CheckpointReader::open() {
  // O_NONBLOCK: a FIFO would block the open until a writer came; regular
  // files ignore it.
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0)
    return "cannot open checkpoint " + path + ": " + std::strerror(errno);
  struct stat status;
  if (::fstat(file.fd, &status) != 0)
    return "cannot read checkpoint " + path + ": " + std::strerror(errno);
  if (!S_ISREG(status.st_mode))
    return refuse(std::string("it is ") + kindOfFile(status.st_mode) +
                  ", not a checkpoint file");
  if (status.st_size == 0)
    return refuse("it is empty (0 bytes)");
  uint64_t fileBytes = static_cast<uint64_t>(status.st_size);

  char header[kHeaderBytes];
  if (fileBytes < kHeaderBytes || !readAll(file.fd, header, sizeof header))
    return refuse("it is shorter than a checkpoint header (truncated?)");
  if (std::memcmp(header, kMagic, sizeof kMagic) != 0)
    return refuse("it is not a tgc checkpoint (bad magic)");
  if (uint32_t version = getU32(header + 8); version != kCheckpointVersion)
    return refuse("format version " + std::to_string(version) +
                  ", this program reads version " +
                  std::to_string(kCheckpointVersion));
  // Bytes outside both checksums are written zero: anything else is a
  // corrupt file (a flip there was taken as good and written back).
  if (getU32(header + 20) != 0)
    return refuse("its header's reserved word is not zero (corrupt file)");
  uint32_t metadataBytes = getU32(header + 12);
  if (kHeaderBytes + uint64_t{metadataBytes} > fileBytes)
    return refuse("the metadata runs past the end of the file (truncated)");
  // Names, shapes, the manifest and the vocabulary's model take kilobytes to
  // a few megabytes: a larger claim is a corrupt file, refused before it is
  // allocated (a 4 GiB claim aborted tgc-data average).
  constexpr uint32_t kMaxMetadataBytes = uint32_t{64} << 20;
  if (metadataBytes > kMaxMetadataBytes)
    return refuse("its metadata claims " + std::to_string(metadataBytes) +
                  " bytes, more than a checkpoint's 64 MiB (corrupt file)");
  std::string encoded(metadataBytes, '\0');
  if (!readAll(file.fd, encoded.data(), encoded.size()))
    return refuse("cannot read its metadata");
  if (crc32Of(encoded.data(), encoded.size()) != getU32(header + 16))
    return refuse("the metadata's checksum does not match (corrupt file)");
  // Protobuf logs what it rejects (e.g. a string that is not UTF-8) to
  // stderr: the refusal says it for the user.
  google::protobuf::LogSilencer quiet;
  int64_t tensorEntries = 0, shapeValues = 0;
  if (countEntries(encoded, tensorEntries, shapeValues) &&
      (tensorEntries > kMaxCheckpointTensors ||
       shapeValues > kMaxShapeValues))
    return refuse("its metadata lists " + std::to_string(tensorEntries) +
                  " tensors with " + std::to_string(shapeValues) +
                  " shape values, more than a checkpoint's " +
                  std::to_string(kMaxCheckpointTensors) + " and " +
                  std::to_string(kMaxShapeValues) + " (a corrupt or forged "
                  "file)");
  try {
    if (!metadata_.ParseFromString(encoded))
      return refuse("its metadata does not parse");
  } catch (const std::bad_alloc &) {
    return refuse("its metadata does not fit in this machine's memory");
  }

  dataStart = alignUp(kHeaderBytes + metadataBytes);
  char padding[kDataAlignment] = {};
  size_t paddingBytes = dataStart - (kHeaderBytes + metadataBytes);
  if (dataStart <= fileBytes) {
    if (!readAll(file.fd, padding, paddingBytes))
      return refuse("cannot read the padding after its metadata");
    if (std::any_of(padding, padding + paddingBytes,
                    [](char c) { return c != 0; }))
      return refuse("the padding after its metadata is not zero (corrupt "
                    "file)");
  }
  // Compared without the sum, which a forged size could wrap past 2^64.
  if (dataStart > fileBytes ||
      metadata_.data_bytes() != fileBytes - dataStart) {
    const bool wraps = metadata_.data_bytes() > UINT64_MAX - dataStart;
    return refuse("it has " + std::to_string(fileBytes) +
                  " bytes, its metadata says " +
                  (wraps ? "more than 2^64"
                         : std::to_string(dataStart + metadata_.data_bytes())) +
                  (dataStart > fileBytes || wraps ||
                           dataStart + metadata_.data_bytes() > fileBytes
                       ? " (truncated)"
                       : ""));
  }
  // A step count a run can have made: a resumed run counts on from it (a
  // negative one gave a negative learning rate).
  if (metadata_.step() < 0 || metadata_.step() > kMaxCheckpointStep)
    return refuse("its step count " + std::to_string(metadata_.step()) +
                  " is not one a run makes (0 to " +
                  std::to_string(kMaxCheckpointStep) + ")");
  // Validation records a run writes: a NaN best was never beaten (no
  // .best, and --patience stopped a run that improved), and a stale count
  // near 2^63 overflowed at the next validation.
  for (auto [has, value, name] :
       {std::tuple{metadata_.has_best_bleu(), metadata_.best_bleu(), "BLEU"},
        std::tuple{metadata_.has_best_loss(), metadata_.best_loss(), "loss"}})
    if (has && !(std::isfinite(value) && value >= 0))
      return refuse(std::string("its best validation ") + name + " " +
                    std::to_string(value) + " is not one a run records");
  if (metadata_.stale_validations() < 0 ||
      metadata_.stale_validations() > kMaxCheckpointStep)
    return refuse("its count of validations without improvement " +
                  std::to_string(metadata_.stale_validations()) +
                  " is not one a run makes (0 to " +
                  std::to_string(kMaxCheckpointStep) + ")");
  // The structure, not only the checksums: every tensor once, each with
  // elements, inside the data section and apart from the others (a tensor
  // listed twice with another missing left the missing one zero).
  std::set<std::string_view> seen;
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (const proto::CheckpointTensor &entry : metadata_.tensors()) {
    if (entry.name().empty())
      return refuse("a tensor has no name");
    if (!seen.insert(entry.name()).second)
      return refuse("tensor '" + entry.name() + "' is listed twice");
    if (!sizeIsConsistent(entry, metadata_.data_bytes()))
      return refuse("tensor '" + entry.name() + "' has an inconsistent size");
    extents.emplace_back(entry.offset(), entry.bytes());
  }
  std::sort(extents.begin(), extents.end());
  for (size_t i = 1; i < extents.size(); ++i)
    if (extents[i - 1].first + extents[i - 1].second > extents[i].first)
      return refuse("the data of two tensors overlap (a corrupt or forged "
                    "file)");
  // Apart and inside it, the tensors fill the data section whole, as
  // written: bytes past them (a forged size over a sparse file) would
  // only be read into memory.
  uint64_t tensorBytes = 0;
  for (const auto &[offset, bytes] : extents)
    tensorBytes += bytes;
  if (tensorBytes != metadata_.data_bytes())
    return refuse("its data section has " +
                  std::to_string(metadata_.data_bytes()) +
                  " bytes, its tensors " + std::to_string(tensorBytes) +
                  " (a corrupt or forged file)");
  return {};
}

std::string CheckpointReader::readData(std::vector<char> &data) {
  // Past the machine's memory and swap it cannot be read; a tool whose new
  // handler aborts (LLVM's) would not see bad_alloc.
  struct sysinfo machine;
  const bool tooBig =
      ::sysinfo(&machine) == 0 &&
      metadata_.data_bytes() / machine.mem_unit >
          uint64_t{machine.totalram} + machine.totalswap;
  const std::string noRoom = refuse(
      "its " + std::to_string(metadata_.data_bytes()) +
      " bytes of tensor data do not fit in this machine's memory");
  if (tooBig)
    return noRoom;
  try {
    data.resize(metadata_.data_bytes());
  } catch (const std::bad_alloc &) {
    return noRoom;
  }
  if (::lseek(file.fd, static_cast<off_t>(dataStart), SEEK_SET) < 0 ||
      !readAll(file.fd, data.data(), data.size()))
    return refuse("cannot read its tensor data");
  for (const proto::CheckpointTensor &entry : metadata_.tensors())
    if (crc32Of(data.data() + entry.offset(), entry.bytes()) != entry.crc32())
      return refuse("the data of tensor '" + entry.name() +
                    "' does not match its checksum (corrupt file)");
  return {};
}

CheckpointInfo CheckpointReader::info() const {
  CheckpointInfo info;
  info.model = metadata_.model();
  info.config = metadata_.config();
  info.step = metadata_.step();
  info.seed = metadata_.rng().seed();
  info.data = metadata_.data();
  info.bestBleu = metadata_.has_best_bleu() ? metadata_.best_bleu() : -1;
  info.bestLoss = metadata_.has_best_loss() ? metadata_.best_loss() : -1;
  info.staleValidations = metadata_.stale_validations();
  info.manifest = metadata_.manifest();
  info.processes = metadata_.processes();
  info.globalBatch = metadata_.global_batch();
  info.schedule = metadata_.schedule();
  info.hyperparameters = metadata_.hyperparameters();
  info.run = metadata_.run();
  info.batchesDrawn = metadata_.batches_drawn();
  info.validatedStep =
      metadata_.has_validated_step() ? metadata_.validated_step() : -1;
  info.batchPlan = metadata_.batch_plan();
  info.dataFingerprint = metadata_.data_fingerprint();
  info.vocabularyHash = metadata_.vocabulary_hash();
  info.epochs = metadata_.has_epochs() && metadata_.epochs() >= 0 &&
                        std::isfinite(metadata_.epochs())
                    ? metadata_.epochs()
                    : -1;
  return info;
}

} // namespace

std::string readCheckpoint(const std::string &path, CheckpointInfo &info,
                           std::span<const CheckpointTensor> tensors) {
  CheckpointReader reader(path);
  if (std::string error = reader.open(); !error.empty())
    return error;
  const proto::Checkpoint &metadata = reader.metadata();

  // The model check: the same tensors, by name and shape.
  std::map<std::string_view, const CheckpointTensor *> wanted;
  for (const CheckpointTensor &t : tensors)
    wanted[t.name] = &t;
  std::string modelNote = " (written by model '" + metadata.model() + "')";
  if (metadata.tensors_size() != static_cast<int>(tensors.size()))
    return reader.refuse("it has " + std::to_string(metadata.tensors_size()) +
                         " tensors, this model has " +
                         std::to_string(tensors.size()) + modelNote);
  for (const proto::CheckpointTensor &entry : metadata.tensors()) {
    auto it = wanted.find(entry.name());
    if (it == wanted.end())
      return reader.refuse("tensor '" + entry.name() +
                           "' is not in this model" + modelNote);
    const std::vector<int64_t> &shape = it->second->shape;
    if (!std::equal(shape.begin(), shape.end(), entry.shape().begin(),
                    entry.shape().end()))
      return reader.refuse("tensor '" + entry.name() + "' has shape " +
                           shapeText(entry.shape()) + ", this model's is " +
                           shapeText(shape) + modelNote);
  }

  // Stage and verify every byte before the model's tensors change.
  std::vector<char> data;
  if (std::string error = reader.readData(data); !error.empty())
    return error;
  for (const proto::CheckpointTensor &entry : metadata.tensors())
    std::memcpy(wanted[entry.name()]->data, data.data() + entry.offset(),
                entry.bytes());
  info = reader.info();
  return {};
}

std::string readCheckpointInfo(const std::string &path, CheckpointInfo &info) {
  CheckpointReader reader(path);
  if (std::string error = reader.open(); !error.empty())
    return error;
  info = reader.info();
  return {};
}

std::string readCheckpointTensors(const std::string &path, CheckpointInfo &info,
                                  std::vector<OwnedTensor> &tensors) {
  CheckpointReader reader(path);
  std::vector<char> data;
  if (std::string error = reader.open(); !error.empty())
    return error;
  if (std::string error = reader.readData(data); !error.empty())
    return error;
  tensors.clear();
  for (const proto::CheckpointTensor &entry : reader.metadata().tensors()) {
    OwnedTensor &t = tensors.emplace_back();
    t.name = entry.name();
    t.shape.assign(entry.shape().begin(), entry.shape().end());
    t.values.resize(entry.bytes() / sizeof(float));
    std::memcpy(t.values.data(), data.data() + entry.offset(), entry.bytes());
  }
  info = reader.info();
  return {};
}

} // namespace tgc::runtime
