//===- BinaryBuilder.h - generated C++ -> a training binary ----*- C++ -*-===//
//
// Compiles the C++ of a training step with the host compiler and links it
// with the runtime (runtime/program, runtime/kernels/cpu, OpenBLAS, OpenMP) into a
// standalone program. The compiler is --cxx, else $TGC_CXX, else the one tgc
// was built with.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_BINARYBUILDER_H
#define TGC_TOOLS_DRIVER_BINARYBUILDER_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tgc {

struct BinaryOptions {
  /// empty: $TGC_CXX or the build's compiler ($TGC_NVCC or nvcc for CUDA)
  std::string compiler;
  bool keepSource = false; ///< keep <output>.cpp next to the binary
  bool verbose = false;    ///< print the compile command
  /// CUDA: the GPU architectures, "80,90" for sm_80 and sm_90.
  std::string cudaArchitectures = "80,90";
  /// An installed tree to compile against (Toolchain.h); empty: found.
  std::string toolchainPrefix;
  /// The build cache's directory (BuildCache.h); empty: none.
  std::string buildCache;
};

/// The compiler and the flags buildBinary (or, with `cuda`,
/// buildCudaBinary) compiles with, for the program's manifest.
std::string compileCommand(const BinaryOptions &options, bool cuda);

/// Why --cuda-arch's list ("80,90") is refused, or empty when it is a list of
/// architecture numbers.
std::string cudaArchitecturesError(llvm::StringRef list);

/// Writes `cppSource` to a file, compiles and links it into `output`.
/// Reports problems on stderr ("tgc: error: ...") and returns false.
bool buildBinary(llvm::StringRef cppSource, llvm::StringRef output,
                 const BinaryOptions &options);

/// The same for a CUDA step (.cu): compiled by nvcc for each architecture,
/// linked with runtime/kernels/cuda, cuBLAS and the CUDA runtime. Fails with a
/// message when tgc was built without CUDA.
bool buildCudaBinary(llvm::StringRef cuSource, llvm::StringRef output,
                     const BinaryOptions &options);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_BINARYBUILDER_H
