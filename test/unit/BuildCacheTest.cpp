// The build cache's key covers what makes a program
// (tools/driver/BuildCache.h): a header the source includes, a library's
// contents, the compiler's bytes and every flag change it; the source file's
// own path does not. A stored entry is reused whole while it matches its
// checksum, a damaged one is compiled again, and trimming removes the least
// recently used entries first and what killed runs left over, and nothing tgc
// did not write: the entries live in a subdirectory tgc made and marked
// (BuildCacheDirectory.h).
#include "tools/driver/BuildCache.h"
#include "tools/driver/BuildCacheDirectory.h"
#include "tools/driver/HostCompiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include <fcntl.h>
#include <sys/stat.h>

namespace tgc {
namespace {

class BuildCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tgc-build-cache-test",
                                                      directory));
    auto compiler = llvm::sys::findProgramByName(chooseCompiler(""));
    ASSERT_TRUE(static_cast<bool>(compiler));
    write("step.h", "inline int answer() { return 42; }\n");
    write("step.cpp", "#include \"step.h\"\nint main() { return answer() - 42; }\n");
    write("libextra.a", "not really an archive, only bytes to hash\n");
    command.compiler = *compiler;
    command.flags = {"-std=c++20", "-O1", "-I" + path("")};
    command.source = path("step.cpp");
    command.output = path("program");
    command.libraries = {path("libextra.a"), "-lm"};
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(directory);
    if (!name.empty())
      llvm::sys::path::append(p, name);
    return p.str().str();
  }
  void write(llvm::StringRef name, llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text;
  }
  std::string read(llvm::StringRef file) {
    auto buffer = llvm::MemoryBuffer::getFile(file);
    return buffer ? (*buffer)->getBuffer().str() : "<unreadable>";
  }
  std::string key(const CompileCommand &c) {
    std::string key, description, why;
    EXPECT_TRUE(buildCacheKey(c, key, description, why)) << why;
    EXPECT_EQ(key.size(), 32u);
    return key;
  }

  llvm::SmallString<128> directory;
  CompileCommand command;
};

TEST_F(BuildCacheTest, KeyCoversHeadersLibrariesAndFlagsButNotTheSourcePath) {
  std::string first = key(command);
  EXPECT_EQ(key(command), first);

  // The same code under another name (a generated step's temporary file).
  write("elsewhere.cpp", read(command.source));
  CompileCommand moved = command;
  moved.source = path("elsewhere.cpp");
  EXPECT_EQ(key(moved), first);
  // ... but not a model file's, whose program names its path in errors.
  CompileCommand model = command, movedModel = moved;
  model.holdsSourcePath = movedModel.holdsSourcePath = true;
  EXPECT_NE(key(movedModel), key(model));
  EXPECT_EQ(key(model), key(model));

  CompileCommand flagged = command;
  flagged.flags.push_back("-DEXTRA=1");
  EXPECT_NE(key(flagged), first);
  CompileCommand optimized = command;
  optimized.flags[1] = "-O2";
  EXPECT_NE(key(optimized), first);
  CompileCommand linked = command;
  linked.libraries.back() = "-lpthread";
  EXPECT_NE(key(linked), first);

  write("libextra.a", "other bytes\n");
  EXPECT_NE(key(command), first);
  write("libextra.a", "not really an archive, only bytes to hash\n");
  EXPECT_EQ(key(command), first);

  write("step.h", "inline int answer() { return 41 + 1; }\n");
  EXPECT_NE(key(command), first);
}

// nvcc -E writes the first architecture's device pass only: the key also
// covers the bytes of every file its passes read (-M), so code that only
// the host compiler or only a later architecture sees changes it.
TEST_F(BuildCacheTest, KeyCoversNvccsHostPassAndEveryArchitecture) {
  auto nvcc = llvm::sys::findProgramByName("nvcc");
  if (!nvcc)
    GTEST_SKIP() << "no nvcc on PATH";
  write("host.h", "inline int onTheHost() { return 1; }\n");
  write("hopper.h", "__device__ inline int onHopper() { return 1; }\n");
  write("step.cu", "#ifdef __CUDA_ARCH__\n#if __CUDA_ARCH__ >= 900\n"
                   "#include \"hopper.h\"\n#endif\n#else\n"
                   "#include \"host.h\"\n#endif\n"
                   "__global__ void kernel() {}\nint main() { return 0; }\n");
  CompileCommand cuda = command;
  cuda.compiler = *nvcc;
  cuda.flags = {"-std=c++17", "-I" + path(""),
                "-gencode=arch=compute_80,code=sm_80",
                "-gencode=arch=compute_90,code=sm_90"};
  cuda.source = path("step.cu");
  cuda.preprocessFlags = {"-E", "-Xcompiler", "-dD"}; // as BinaryBuilder's
  cuda.dependencyFlags = {"-M"};
  std::string first = key(cuda);
  EXPECT_EQ(key(cuda), first);
  write("host.h", "inline int onTheHost() { return 2; }\n");
  std::string second = key(cuda);
  EXPECT_NE(second, first);
  write("hopper.h", "__device__ inline int onHopper() { return 2; }\n");
  EXPECT_NE(key(cuda), second);
}

// A relative source path that starts with '-' is the compiler's operand,
// not an option.
TEST(CompilerOperand, APathLikeAnOptionIsMadeAPath) {
  EXPECT_EQ(compilerOperand("-v.cpp"), "./-v.cpp");
  EXPECT_EQ(compilerOperand("step.cpp"), "step.cpp");
  EXPECT_EQ(compilerOperand("/tmp/-v.cpp"), "/tmp/-v.cpp");
}

TEST(MakeRule, PrerequisitesAsCompilersWriteThem) {
  EXPECT_EQ(makeRulePrerequisites("step.o : \\\n    /tmp/step.cu \\\n"
                                  "    /a/b.h /my\\ dir/c.h \\\n    x$$y.h\n"),
            (std::vector<std::string>{"/tmp/step.cu", "/a/b.h", "/my dir/c.h",
                                      "x$y.h"}));
  EXPECT_TRUE(makeRulePrerequisites("").empty());
}

TEST_F(BuildCacheTest, KeyCoversTheCompilersBytes) {
  // A wrapper at one path, changed in place as a compiler update would be.
  std::string wrapper = path("cxx"), real = command.compiler;
  write("cxx", "#!/bin/sh\nexec " + real + " \"$@\"\n");
  ASSERT_FALSE(llvm::sys::fs::setPermissions(wrapper, llvm::sys::fs::all_all));
  command.compiler = wrapper;
  std::string before = key(command);
  write("cxx", "#!/bin/sh\n# rebuilt\nexec " + real + " \"$@\"\n");
  EXPECT_NE(key(command), before);
}

// Outside the preprocessed text: nvcc's flags from the environment, where
// the link looks, and the linker a -fuse-ld= names (its bytes).
TEST_F(BuildCacheTest, KeyCoversTheEnvironmentAndTheLinker) {
  std::string first = key(command);
  ASSERT_EQ(::setenv("NVCC_APPEND_FLAGS", "-Xptxas -O0", 1), 0);
  EXPECT_NE(key(command), first);
  ASSERT_EQ(::unsetenv("NVCC_APPEND_FLAGS"), 0);
  EXPECT_EQ(key(command), first);

  // A linker of our own on PATH, changed in place as an update would be.
  write("ld.fake", "#!/bin/sh\nexit 0\n");
  ASSERT_FALSE(llvm::sys::fs::setPermissions(path("ld.fake"),
                                             llvm::sys::fs::all_all));
  const char *oldPath = std::getenv("PATH");
  const std::string savedPath = oldPath ? oldPath : "";
  ASSERT_EQ(::setenv("PATH", (path("") + ":" + savedPath).c_str(), 1), 0);
  CompileCommand linked = command;
  linked.libraries.push_back("-fuse-ld=fake");
  std::string before = key(linked);
  write("ld.fake", "#!/bin/sh\n# updated\nexit 0\n");
  std::string after = key(linked);
  ASSERT_EQ(::setenv("PATH", savedPath.c_str(), 1), 0);
  EXPECT_NE(after, before);
}

TEST_F(BuildCacheTest, SourceTheCompilerCannotPreprocessHasNoKey) {
  write("broken.cpp", "#include \"no-such-header.h\"\n");
  command.source = path("broken.cpp");
  std::string key, description, why;
  EXPECT_FALSE(buildCacheKey(command, key, description, why));
  EXPECT_NE(why.find("could not preprocess"), std::string::npos) << why;
}

TEST_F(BuildCacheTest, StoredEntryIsReusedWhole) {
  command.libraries = {"-lm"}; // libextra.a is no archive to link
  std::string cache = path("cache"), error;
  ASSERT_EQ(compileWithBuildCache(command, cache, false, error), 0) << error;
  std::string entry = cache + "/tgc-build-cache/" + key(command);
  ASSERT_TRUE(llvm::sys::fs::is_regular_file(entry));
  EXPECT_EQ(read(entry), read(command.output));
  EXPECT_NE(read(entry + ".txt").find("preprocessed source "), std::string::npos);

  // Reused for another output: the entry's bytes, executable.
  CompileCommand again = command;
  again.output = path("program-again");
  ASSERT_EQ(compileWithBuildCache(again, cache, false, error), 0) << error;
  EXPECT_EQ(read(again.output), read(entry));
  EXPECT_TRUE(llvm::sys::fs::can_execute(again.output));
  EXPECT_EQ(llvm::sys::ExecuteAndWait(again.output, {again.output}), 0);

  // A damaged entry (same size, other bytes) is not copied out: it is
  // removed, the source compiled again, and the entry stored anew.
  std::string good = read(entry);
  write("cache/tgc-build-cache/" + key(command), std::string(good.size(), 'x'));
  CompileCommand third = command;
  third.output = path("program-third");
  ASSERT_EQ(compileWithBuildCache(third, cache, false, error), 0) << error;
  EXPECT_EQ(llvm::sys::ExecuteAndWait(third.output, {third.output}), 0);
  EXPECT_EQ(read(entry), read(third.output));
  EXPECT_NE(read(entry), std::string(good.size(), 'x'));

  // A failed compile stores nothing.
  write("fails.cpp", "int main() { return undeclared; }\n");
  CompileCommand failing = command;
  failing.source = path("fails.cpp");
  failing.output = path("never");
  EXPECT_NE(compileWithBuildCache(failing, cache, false, error), 0);
  EXPECT_FALSE(
      llvm::sys::fs::exists(cache + "/tgc-build-cache/" + key(failing)));

  // A hit never renames its entry over an output that is not a regular
  // file (here a directory; a FIFO or a device node the same).
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("a-directory")));
  CompileCommand intoDirectory = command;
  intoDirectory.output = path("a-directory");
  EXPECT_NE(compileWithBuildCache(intoDirectory, cache, false, error), 0);
  EXPECT_TRUE(llvm::sys::fs::is_directory(path("a-directory")));
}

/// Sets the modification time of `file` to `age` seconds ago.
void age(const std::string &file, time_t seconds) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = time(nullptr) - seconds;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ASSERT_EQ(utimensat(AT_FDCWD, file.c_str(), times, AT_SYMLINK_NOFOLLOW), 0)
      << file;
}

TEST_F(BuildCacheTest, TrimRemovesTheLeastRecentlyUsedFirst) {
  std::string cache = path("cache"), entries, why;
  ASSERT_TRUE(openBuildCacheDirectory(cache, entries, why)) << why;
  EXPECT_EQ(entries, cache + "/tgc-build-cache");
  const char *keys[] = {"00000000000000000000000000000001",
                        "00000000000000000000000000000002",
                        "00000000000000000000000000000003"};
  for (int i = 0; i < 3; ++i) {
    write(std::string("cache/tgc-build-cache/") + keys[i],
          std::string(1000, 'x'));
    write(std::string("cache/tgc-build-cache/") + keys[i] + ".txt",
          "description");
    // Last used 100, 90 and 80 seconds ago.
    age(entries + "/" + keys[i], 100 - 10 * i);
  }
  // A write in progress.
  write(
      "cache/tgc-build-cache/00000000000000000000000000000004-0a1b2c3d.partial",
      std::string(5000, 'y'));
  // What a killed tgc left two hours ago: a temporary, and a description
  // whose entry it never wrote; a description written now waits for its
  // entry.
  const char *leftOver[] = {
      "00000000000000000000000000000005.txt-89abcdef.partial",
      "00000000000000000000000000000009.txt"};
  for (const char *old : leftOver) {
    write(std::string("cache/tgc-build-cache/") + old, "half");
    age(entries + "/" + old, 7200);
  }
  write("cache/tgc-build-cache/0000000000000000000000000000000a.txt",
        "description");
  trimBuildCache(cache, 2500);
  for (const char *old : leftOver)
    EXPECT_FALSE(llvm::sys::fs::exists(entries + "/" + old)) << old;
  EXPECT_TRUE(
      llvm::sys::fs::exists(entries + "/0000000000000000000000000000000a.txt"));
  EXPECT_FALSE(llvm::sys::fs::exists(entries + "/" + keys[0]));
  EXPECT_FALSE(llvm::sys::fs::exists(entries + "/" + keys[0] + ".txt"));
  EXPECT_TRUE(llvm::sys::fs::exists(entries + "/" + keys[1]));
  EXPECT_TRUE(llvm::sys::fs::exists(entries + "/" + keys[2]));
  EXPECT_TRUE(llvm::sys::fs::exists(entries + "/" + keys[2] + ".txt"));
  EXPECT_TRUE(llvm::sys::fs::exists(
      entries + "/00000000000000000000000000000004-0a1b2c3d.partial"));
  trimBuildCache(cache, 2500);
  EXPECT_TRUE(llvm::sys::fs::exists(entries + "/" + keys[1]));
  trimBuildCache(cache, 0);
  EXPECT_FALSE(llvm::sys::fs::exists(entries + "/" + keys[2]));
}

TEST_F(BuildCacheTest, TrimRemovesNothingTgcDidNotWrite) {
  // A user's directory given as --build-cache: old notes named like
  // entries, descriptions and temporaries, beside tgc's subdirectory.
  std::string cache = path("cache"), entries, why;
  ASSERT_TRUE(openBuildCacheDirectory(cache, entries, why)) << why;
  const char *notes[] = {"notes.txt", "00000000000000000000000000000001",
                         "00000000000000000000000000000002.txt",
                         "draft.partial"};
  for (const char *note : notes) {
    write(std::string("cache/") + note, std::string(1000, 'n'));
    age(cache + "/" + note, 7200);
  }
  // In tgc's subdirectory, what it never names so: other names, upper-case
  // hex, a symbolic link named as an entry (its target is the user's).
  const char *strangers[] = {"README", "0000000000000000000000000000000A",
                             "00000000000000000000000000000003.txt.bak",
                             "my-0a1b2c3d.partial"};
  for (const char *stranger : strangers) {
    write(std::string("cache/tgc-build-cache/") + stranger,
          std::string(1000, 's'));
    age(entries + "/" + stranger, 7200);
  }
  std::string link = entries + "/00000000000000000000000000000004";
  ASSERT_FALSE(llvm::sys::fs::create_link(cache + "/notes.txt", link));
  trimBuildCache(cache, 0);
  for (const char *note : notes)
    EXPECT_TRUE(llvm::sys::fs::exists(cache + "/" + note)) << note;
  for (const char *stranger : strangers)
    EXPECT_TRUE(llvm::sys::fs::exists(entries + "/" + stranger)) << stranger;
  EXPECT_EQ(read(cache + "/notes.txt"), std::string(1000, 'n'));
  llvm::sys::fs::file_status status;
  EXPECT_FALSE(llvm::sys::fs::status(link, status, /*Follow=*/false));
}

TEST_F(BuildCacheTest, ASubdirectoryTgcDidNotMakeIsLeftAlone) {
  // tgc-build-cache/ made by someone else (no marker, or another one):
  // not used, not trimmed; the build still compiles.
  std::string cache = path("cache"), entries, why;
  ASSERT_FALSE(llvm::sys::fs::create_directories(cache + "/tgc-build-cache"));
  write("cache/tgc-build-cache/00000000000000000000000000000001", "user data");
  for (const char *marker :
       {"", "Signature: 8a477f597d28d172789f06886806bc55\n"}) {
    if (*marker)
      write("cache/tgc-build-cache/CACHEDIR.TAG", marker);
    EXPECT_FALSE(openBuildCacheDirectory(cache, entries, why));
    EXPECT_NE(why.find("was not made by tgc"), std::string::npos) << why;
    trimBuildCache(cache, 0);
    EXPECT_EQ(read(cache + "/tgc-build-cache/00000000000000000000000000000001"),
              "user data");
  }
  command.libraries = {"-lm"};
  std::string error;
  ASSERT_EQ(compileWithBuildCache(command, cache, false, error), 0) << error;
  EXPECT_EQ(llvm::sys::ExecuteAndWait(command.output, {command.output}), 0);
  EXPECT_FALSE(
      llvm::sys::fs::exists(cache + "/tgc-build-cache/" + key(command)));
}

} // namespace
} // namespace tgc
