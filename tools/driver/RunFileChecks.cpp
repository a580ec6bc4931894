//===- RunFileChecks.cpp - what one tgc run may write ---------------------===//
#include "tools/driver/RunFileChecks.h"

#include "common/RunFiles.h"
#include "runtime/data/FileChecks.h"

#include "llvm/Support/raw_ostream.h"

#include <sys/stat.h>

namespace tgc {

bool checkRunFiles(const DriverOptions &options) {
  bool binary = options.emitStage == EmitStage::Binary;
  std::string output =
      options.outputFilename == "-" ? std::string() : options.outputFilename;
  std::string input =
      options.inputFilename == "-" ? std::string() : options.inputFilename;
  std::string keptSource;
  if (binary && options.keepSource && !output.empty())
    keptSource = output + (options.target == Target::Cuda ? ".cu" : ".cpp");
  std::vector<RunFile> files = {
      {"the input", input},
      {"--model-file", options.modelFile},
      {"--config", options.configFile},
      {"--corpus", options.corpusFile},
      {"tgc", thisProgram()},
      {"-o", output, /*written=*/true},
      {"--keep-cpp's source", keptSource, true},
      {"--dump-params", options.dumpParams, true},
      {"--loss-log", options.lossLog, true},
  };
  std::string why = findClobberedFile(files);
  if (why.empty())
    why = findUnwritableOutput(files);
  if (!why.empty()) {
    llvm::errs() << "tgc: error: " << why << "\n";
    return false;
  }
  // A program is renamed into place (from the build cache) or written by
  // the linker: either would replace a device node or a FIFO itself.
  struct stat status;
  if (binary && !output.empty() && ::stat(output.c_str(), &status) == 0 &&
      !S_ISREG(status.st_mode)) {
    llvm::errs() << "tgc: error: -o " << output << " is "
                 << runtime::kindOfFile(status.st_mode)
                 << ": a program is written only as a regular file\n";
    return false;
  }
  return true;
}

} // namespace tgc
