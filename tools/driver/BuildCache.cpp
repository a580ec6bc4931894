//===- BuildCache.cpp - programs tgc compiled, found again -----------------===//
#include "tools/driver/BuildCache.h"
#include "tools/driver/BuildCacheDirectory.h"
#include "tools/driver/HostCompiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdio>
#include <cstdlib>

#include <fcntl.h>
#include <sys/stat.h>

namespace tgc {

std::string compilerOperand(llvm::StringRef path) {
  return path.starts_with("-") ? ("./" + path).str() : path.str();
}

std::vector<std::string> makeRulePrerequisites(llvm::StringRef rule) {
  std::vector<std::string> paths;
  size_t colon = rule.find(": ");
  if (colon == llvm::StringRef::npos)
    return paths;
  rule = rule.drop_front(colon + 2);
  std::string path;
  auto end = [&] {
    if (!path.empty())
      paths.push_back(path);
    path.clear();
  };
  for (size_t i = 0; i < rule.size(); ++i) {
    char c = rule[i];
    if (c == '\\' && i + 1 < rule.size() &&
        (rule[i + 1] == '\n' || rule[i + 1] == '\r')) {
      end(); // a line continuation
      continue;
    }
    if (c == '\\' && i + 1 < rule.size() && rule[i + 1] == ' ') {
      path += ' ';
      ++i;
    } else if (c == '$' && i + 1 < rule.size() && rule[i + 1] == '$') {
      path += '$';
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      end();
    } else {
      path += c;
    }
  }
  end();
  return paths;
}

std::vector<std::string> CompileCommand::arguments() const {
  std::vector<std::string> args = {compiler};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {compilerOperand(source), "-o", output});
  args.insert(args.end(), libraries.begin(), libraries.end());
  return args;
}

namespace {

/// Bumped when what the key covers changes.
constexpr const char *kKeyVersion = "tgc build cache 3";

std::string hex128(llvm::StringRef bytes) {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(bytes));
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx",
                static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return text;
}

/// The hash of a file's bytes (hex128), or false with `why`.
bool fileHash(llvm::StringRef path, std::string &hash, std::string &why) {
  auto contents = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
  if (!contents) {
    why = "cannot read " + path.str() + ": " + contents.getError().message();
    return false;
  }
  hash = hex128((*contents)->getBuffer());
  return true;
}

/// `text` with every occurrence of `path` replaced by a fixed name.
std::string withoutPath(llvm::StringRef text, llvm::StringRef path) {
  if (path.empty())
    return text.str();
  std::string out;
  out.reserve(text.size());
  while (true) {
    size_t at = text.find(path);
    out += text.substr(0, at);
    if (at == llvm::StringRef::npos)
      return out;
    out += "<source>";
    text = text.drop_front(at + path.size());
  }
}

/// A temporary file prefix-XXXXXXXX.suffix in `directory` (empty: the
/// system's), removed on scope exit and on a signal.
bool makeTemporary(llvm::StringRef directory, llvm::StringRef prefix,
                   llvm::StringRef suffix, TemporaryFile &file,
                   std::string &why) {
  llvm::SmallString<256> path;
  std::error_code ec;
  if (directory.empty()) {
    ec = llvm::sys::fs::createTemporaryFile(prefix, suffix, path);
  } else {
    llvm::SmallString<256> model(directory);
    llvm::sys::path::append(model, prefix + "-%%%%%%%%." + suffix);
    int fd;
    ec = llvm::sys::fs::createUniqueFile(model, fd, path);
    if (!ec)
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  if (ec) {
    why = "cannot create a temporary file " +
          (directory.empty() ? systemTemporaryDirectory()
                             : "in " + directory.str()) +
          ": " + ec.message();
    return false;
  }
  file.path = path.str().str();
  file.removeOnSignal();
  return true;
}

/// Writes `bytes` to `path` whole, with permissions `mode`: through a
/// temporary file beside it and a rename, so `path` is either whole or
/// untouched. A `path` that is not a regular file (a device node or a FIFO
/// given as -o) is refused: the rename would replace the node itself.
bool writeWhole(llvm::StringRef path, llvm::StringRef bytes,
                llvm::sys::fs::perms mode, std::string &why) {
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file) {
    why =
        "cannot write " + path.str() + ": it exists and is not a regular file";
    return false;
  }
  llvm::StringRef directory = llvm::sys::path::parent_path(path);
  TemporaryFile partial;
  if (!makeTemporary(directory.empty() ? "." : directory,
                     llvm::sys::path::filename(path), "partial", partial, why))
    return false;
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(partial.path, ec);
    if (!ec) {
      os << bytes;
      os.close();
      if (os.has_error())
        ec = os.error();
    }
  }
  if (!ec)
    ec = llvm::sys::fs::setPermissions(partial.path, mode);
  if (!ec)
    ec = llvm::sys::fs::rename(partial.path, path);
  if (ec) {
    why = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  partial.keepIt(); // renamed: nothing left to remove
  return true;
}

/// A file's bytes and permissions, or false with `why`.
bool readWhole(llvm::StringRef path, std::unique_ptr<llvm::MemoryBuffer> &bytes,
               llvm::sys::fs::perms &mode, std::string &why) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  llvm::ErrorOr<llvm::sys::fs::perms> permissions =
      llvm::sys::fs::getPermissions(path);
  std::error_code ec = buffer ? permissions.getError() : buffer.getError();
  if (ec) {
    why = "cannot read " + path.str() + ": " + ec.message();
    return false;
  }
  bytes = std::move(*buffer);
  mode = *permissions;
  return true;
}

/// The description's last line: the checksum of the entry's bytes.
constexpr llvm::StringLiteral kChecksumLine = "entry ";

/// Puts the compiled output into the cache as `entry`, with its key's
/// description and the entry's checksum beside it (`entry`.txt), written
/// first: an entry is never there without the checksum that vouches for it.
bool store(llvm::StringRef output, llvm::StringRef entry,
           llvm::StringRef description, std::string &why) {
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  llvm::sys::fs::perms mode;
  if (!readWhole(output, bytes, mode, why))
    return false;
  std::string text = description.str() + kChecksumLine.str() +
                     hex128(bytes->getBuffer()) + "\n";
  return writeWhole((entry + ".txt").str(), text,
                    llvm::sys::fs::perms::all_read |
                        llvm::sys::fs::perms::owner_write,
                    why) &&
         writeWhole(entry, bytes->getBuffer(), mode, why);
}

/// Copies `entry` to `output` if the description stored beside it is the
/// key's `description` (the key is its hash: anything else is a forged or
/// colliding entry) and its bytes still match the checksum stored there.
/// False with `why` when it cannot be read or written; false with
/// `damaged` set when it does not match (a disk error, a partial copy by
/// hand, an edit; or two runs that stored one key at once, whose programs
/// differ in the temporary source's name: one compile more).
bool reuse(llvm::StringRef entry, llvm::StringRef output,
           llvm::StringRef description, bool &damaged, std::string &why) {
  damaged = false;
  std::unique_ptr<llvm::MemoryBuffer> bytes, stored;
  llvm::sys::fs::perms mode, ignored;
  if (!readWhole(entry, bytes, mode, why) ||
      !readWhole((entry + ".txt").str(), stored, ignored, why))
    return false;
  llvm::StringRef text = stored->getBuffer().rtrim('\n');
  size_t lastLine = text.rfind('\n') + 1;
  if (text.substr(0, lastLine) != description) {
    damaged = true;
    why = entry.str() + " describes another build than its key's";
    return false;
  }
  llvm::StringRef checksum = text.substr(lastLine);
  if (!checksum.consume_front(kChecksumLine) ||
      checksum != hex128(bytes->getBuffer())) {
    damaged = true;
    why = entry.str() + " does not match its checksum";
    return false;
  }
  return writeWhole(output, bytes->getBuffer(), mode, why);
}

/// What the compiler writes with `flags` and `extraFlags` (the source and
/// -o added), or false with `why`.
bool compilerOutput(const CompileCommand &command,
                    const std::vector<std::string> &extraFlags,
                    std::string &text, std::string &why) {
  TemporaryFile written;
  if (!makeTemporary("", "tgc-preprocessed", "i", written, why))
    return false;
  std::vector<std::string> args = {command.compiler};
  args.insert(args.end(), command.flags.begin(), command.flags.end());
  args.insert(args.end(), extraFlags.begin(), extraFlags.end());
  args.insert(args.end(), {compilerOperand(command.source), "-o", written.path});
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int status = runCompiler(command.compiler, argRefs, error, /*quiet=*/true);
  if (status != 0) {
    why = "the compiler could not preprocess the source (" +
          (error.empty() ? "exit " + std::to_string(status) : error) + ")";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(
      written.path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    why = "cannot read " + written.path + ": " + buffer.getError().message();
    return false;
  }
  text = (*buffer)->getBuffer().str();
  return true;
}

} // namespace

bool buildCacheKey(const CompileCommand &command, std::string &key,
                   std::string &description, std::string &why) {
  std::string text, rule;
  if (!compilerOutput(command, command.preprocessFlags, text, why))
    return false;
  if (!command.dependencyFlags.empty() &&
      !compilerOutput(command, command.dependencyFlags, rule, why))
    return false;

  llvm::raw_string_ostream os(description);
  // The compiler's own bytes: an update that keeps its path and version
  // macros (a distribution's rebuild) is another compiler.
  std::string hash;
  if (!fileHash(command.compiler, hash, why))
    return false;
  os << kKeyVersion << "\ncompiler " << command.compiler << ": " << hash
     << "\n";
  for (const std::string &flag : command.flags)
    os << "flag " << flag << "\n";
  // The text without the source's path: the same code from elsewhere is
  // the same program, unless the program holds its path (a model file:
  // std::source_location names it in the model's errors).
  if (command.holdsSourcePath) {
    llvm::SmallString<256> sourcePath;
    if (llvm::sys::fs::real_path(command.source, sourcePath))
      sourcePath = command.source;
    os << "source path " << sourcePath << "\n";
  }
  const std::string operand = compilerOperand(command.source);
  os << "preprocessed source " << hex128(withoutPath(text, operand)) << "\n";
  // Every file the passes read; the source's bytes under no path (the
  // line above names it where the program holds it).
  for (const std::string &file : makeRulePrerequisites(rule)) {
    if (!fileHash(file, hash, why))
      return false;
    os << "reads " << (file == operand ? "<source>" : file) << ": " << hash
       << "\n";
  }
  // What changes the program from the environment and is not in the
  // preprocessed text: nvcc's extra flags, and where the link looks.
  for (const char *name : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
                           "LIBRARY_PATH", "COMPILER_PATH", "GCC_EXEC_PREFIX"})
    if (const char *value = std::getenv(name))
      os << "environment " << name << "=" << value << "\n";
  for (const std::string &library : command.libraries) {
    if (!llvm::sys::fs::is_regular_file(library)) {
      os << "link " << library << "\n";
      // The linker a -fuse-ld names is a program of its own: its bytes.
      if (llvm::StringRef(library).starts_with("-fuse-ld=")) {
        std::string linker =
            "ld." + llvm::StringRef(library).drop_front(9).str();
        if (auto found = llvm::sys::findProgramByName(linker)) {
          if (!fileHash(*found, hash, why))
            return false;
          os << "linker " << *found << ": " << hash << "\n";
        }
      }
      continue;
    }
    if (!fileHash(library, hash, why))
      return false;
    os << "library " << library << ": " << hash << "\n";
  }
  key = hex128(description);
  return true;
}

int compileWithBuildCache(const CompileCommand &command,
                          llvm::StringRef cacheDirectory, bool verbose,
                          std::string &error) {
  std::vector<std::string> args = command.arguments();
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  if (cacheDirectory.empty())
    return runCompiler(command.compiler, argRefs, error);

  std::string entries, key, description, why;
  if (!openBuildCacheDirectory(cacheDirectory, entries, why)) {
    llvm::errs() << "tgc: warning: build cache: not used: " << why << "\n";
    return runCompiler(command.compiler, argRefs, error);
  }
  if (!buildCacheKey(command, key, description, why)) {
    if (verbose)
      llvm::errs() << "tgc: build cache: not used: " << why << "\n";
    return runCompiler(command.compiler, argRefs, error);
  }
  llvm::SmallString<256> entry(entries);
  llvm::sys::path::append(entry, key);
  if (llvm::sys::fs::is_regular_file(entry)) {
    bool damaged;
    if (reuse(entry, command.output, description, damaged, why)) {
      // Touched: trimBuildCache removes the least recently used first.
      utimensat(AT_FDCWD, entry.c_str(), nullptr, 0);
      if (verbose)
        llvm::errs() << "tgc: build cache: reused " << entry << "\n";
      return 0;
    }
    if (damaged) { // compiled and stored again below
      llvm::sys::fs::remove(entry);
      llvm::sys::fs::remove(entry + ".txt");
    }
    llvm::errs() << "tgc: warning: build cache: " << why
                 << (damaged ? "; removed it, compiling\n" : "; compiling\n");
  }
  int status = runCompiler(command.compiler, argRefs, error);
  if (status != 0)
    return status;
  if (!store(command.output, entry, description, why)) {
    llvm::errs() << "tgc: warning: build cache: not stored: " << why << "\n";
    return 0;
  }
  if (verbose)
    llvm::errs() << "tgc: build cache: stored " << entry << "\n";
  trimBuildCache(cacheDirectory, kBuildCacheBytes);
  return 0;
}

} // namespace tgc
