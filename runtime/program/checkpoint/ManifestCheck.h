//===- ManifestCheck.h - does a checkpoint come from this program? -*- C++ -*-===//
//
// A program's manifest (CompiledModel::manifest, tools/driver/Manifest.h)
// goes into each checkpoint it writes. On --resume the two are compared line
// by line: another config (a "config ..." line) means another model, and
// resuming it is refused unless forced; other differences (tgc's revision,
// buckets, the code, the compiler) are reported and allowed.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_MANIFESTCHECK_H
#define TGC_RUNTIME_PROGRAM_MANIFESTCHECK_H

#include <string>
#include <vector>

namespace tgc::runtime {

struct ManifestDifference {
  /// Lines only the checkpoint's manifest has, and only the program's.
  std::vector<std::string> checkpointOnly, programOnly;
  bool configDiffers = false;
  bool empty() const { return checkpointOnly.empty() && programOnly.empty(); }
  /// "  checkpoint: LINE" and "  program:    LINE" lines.
  std::string format() const;
};

ManifestDifference compareManifests(const std::string &checkpoint,
                                    const std::string &program);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_MANIFESTCHECK_H
