//===- Options.cpp - parsing a training binary's flags --------------------===//
#include "runtime/train/Options.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <cstdio>
#include <string_view>

namespace tgc::runtime {

namespace {

const char *kUsage =
    "usage: %s [--task copy|reverse] [--steps N] [--seed S] [--log-every K]\n"
    "          [--dump-params FILE] [--loss-log FILE]\n"
    "Trains the compiled model on a built-in task. Defaults: --task reverse\n"
    "--steps 1000 --seed 1 --log-every 100.\n";

template <typename T>
bool parseNumber(std::string_view flag, std::string_view text, T &out,
                 T minimum) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error != std::errc() || end != text.data() + text.size() || out < minimum) {
    std::fprintf(stderr, "error: %.*s needs an integer >= %lld, not '%.*s'\n",
                 static_cast<int>(flag.size()), flag.data(),
                 static_cast<long long>(minimum),
                 static_cast<int>(text.size()), text.data());
    return false;
  }
  return true;
}

} // namespace

bool parseTrainOptions(int argc, char **argv, TrainOptions &options,
                       int &exitCode) {
  exitCode = 2;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::printf(kUsage, argv[0]);
      exitCode = 0;
      return false;
    }
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    static constexpr std::string_view kFlags[] = {
        "--task", "--steps", "--seed", "--log-every", "--dump-params",
        "--loss-log"};
    if (std::find(std::begin(kFlags), std::end(kFlags), arg) ==
        std::end(kFlags)) {
      std::fprintf(stderr, "error: unknown flag '%.*s'\n",
                   static_cast<int>(arg.size()), arg.data());
      std::fprintf(stderr, kUsage, argv[0]);
      return false;
    }
    if (!value.data()) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", argv[i]);
        return false;
      }
      value = argv[++i];
    }
    bool ok = true;
    if (arg == "--task") {
      std::optional<Task> task = parseTask(value);
      if (!task) {
        std::fprintf(stderr, "error: unknown task '%.*s' (known: %s)\n",
                     static_cast<int>(value.size()), value.data(), taskNames());
        return false;
      }
      options.task = *task;
    } else if (arg == "--steps") {
      ok = parseNumber(arg, value, options.steps, int64_t{1});
    } else if (arg == "--seed") {
      ok = parseNumber(arg, value, options.seed, uint32_t{0});
    } else if (arg == "--log-every") {
      ok = parseNumber(arg, value, options.logEvery, int64_t{1});
    } else if (arg == "--dump-params") {
      options.dumpParameters = value;
    } else { // --loss-log, the last of kFlags
      options.lossLog = value;
    }
    if (!ok)
      return false;
  }
  return true;
}

} // namespace tgc::runtime
