# lit configuration of tgc's FileCheck tests (test/lit/...).
import os
import lit.formats

config.name = "tgc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "check_op_coverage.py"]
config.test_source_root = os.path.dirname(__file__)
# ctest starts one lit per file, two at a time; each gets its own exec root
# (tgc_exec_root), because lit rewrites .lit_test_times.txt in the exec root
# without locking, and a lit reading it mid-write fails before running a test.
config.test_exec_root = lit_config.params.get(
    "tgc_exec_root", os.path.join(os.path.dirname(config.tgc_tools_dir), "test", "lit"))

# tgc, tgc-opt first; then FileCheck, not, split-file from LLVM.
config.environment["PATH"] = os.pathsep.join(
    [config.tgc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])

# Programs and model files the tests compile are kept in the build tree's
# build cache (tools/driver/BuildCache.h): many tests compile the same model,
# and a rerun of the suite compiles only what changed. Always this one, so
# that a user's $TGC_BUILD_CACHE never feeds a test.
config.environment["TGC_BUILD_CACHE"] = os.path.join(
    os.path.dirname(config.tgc_tools_dir), "test", "build-cache")

# The sanitizer stage (test/sanitizers.sh) stretches the timing tests' limits.
if "TGC_TIME_SCALE" in os.environ:
    config.environment["TGC_TIME_SCALE"] = os.environ["TGC_TIME_SCALE"]

import sys
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%tgc_src", config.tgc_source_dir))

# Tests that build --target=cuda programs need a tgc built with nvcc; they
# run without a GPU (the programs must then say so and stop).
if getattr(config, "tgc_have_cuda", False):
    config.available_features.add("cuda")

# The cross-checks against PyTorch (test/lit/pytorch) run the Python that
# has it (Debian's python3-torch), which CMake found.
if getattr(config, "tgc_torch_python", ""):
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", config.tgc_torch_python))

# The sanitizer stage's build (test/sanitizers.sh): long training runs that
# add no code to the rest of the suite say `UNSUPPORTED: sanitizers`.
if getattr(config, "tgc_sanitize", False):
    config.available_features.add("sanitizers")

# The terminal test (test/lit/tgc/terminal-log.test) runs a program on a
# pseudo-terminal with util-linux's script.
import shutil
if shutil.which("script"):
    config.available_features.add("script")

# Data-parallel tests (test/lit/mpi) run 2 processes under mpirun: only with
# a tgc built with MPI (CMake found it) and mpirun on the PATH.
if getattr(config, "tgc_have_mpi", False) and shutil.which("mpirun"):
    config.available_features.add("mpi")
config.substitutions.append(
    ("%mpirun", "sh " + os.path.join(config.tgc_source_dir, "test/lit/mpi/Inputs/mpirun.sh")))
# Two machines on one (test/lit/mpi/two-hosts.test) need network namespaces:
# root and a working `ip netns`.
import subprocess
if "mpi" in config.available_features and os.geteuid() == 0 and shutil.which("ip"):
    try:
        if subprocess.run(["ip", "netns", "list"], capture_output=True,
                          timeout=10).returncode == 0:
            config.available_features.add("netns")
    except (OSError, subprocess.SubprocessError):
        pass
