// Brigade's image pre-processing (src/process) on real files, one thread: the per-image time of
// decode -> Resize(256) -> CenterCrop(224) -> ToTensor -> Normalize (FP32, NCHW) in exact and
// fast mode, and optionally each output tensor, for bench/process_compare.py to compare with
// PIL + torchvision and to time against PIL and OpenCV in the same run:
//
//   build/bench/process_bench [--iterations=N] [--dump=DIR] [--mode=exact|fast|both] IMAGE...
//
// Prints one line per image and mode: `time <file> <mode> <median_ms> <mean_ms> <min_ms>`.
// With --dump, writes DIR/<file name>.<mode>.f32 (3x224x224 float32, little-endian).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "process/image_preprocess.h"

namespace {

using brigade::process::ImagePreprocessor;
using brigade::process::PreprocessMode;
using brigade::process::PreprocessOptions;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "process_bench: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 30;
  std::string dump;
  std::string modes = "both";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--iterations=")) {
      iterations = std::max(1, std::atoi(argv[i] + 13));
    } else if (arg.starts_with("--dump=")) {
      dump = std::string(arg.substr(7));
    } else if (arg.starts_with("--mode=")) {
      modes = std::string(arg.substr(7));
    } else {
      files.emplace_back(arg);
    }
  }
  std::vector<std::pair<std::string, PreprocessMode>> runs;
  if (modes == "both" || modes == "exact") runs.emplace_back("exact", PreprocessMode::kExact);
  if (modes == "both" || modes == "fast") runs.emplace_back("fast", PreprocessMode::kFast);
  for (const std::string& file : files) {
    const std::string encoded = ReadFile(file);
    for (const auto& [name, mode] : runs) {
      PreprocessOptions options;
      options.mode = mode;
      auto preprocessor = ImagePreprocessor::Create(options);
      if (!preprocessor.ok()) return 1;
      std::vector<std::byte> out(preprocessor->output_bytes());
      std::vector<double> ms;
      for (int i = -3; i < iterations; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const absl::Status status = preprocessor->Run(encoded, out);
        const auto end = std::chrono::steady_clock::now();
        if (!status.ok()) {
          std::fprintf(stderr, "process_bench: %s: %s\n", file.c_str(),
                       std::string(status.message()).c_str());
          return 1;
        }
        if (i >= 0) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
      }
      std::sort(ms.begin(), ms.end());
      const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
      std::printf("time %s %s %.3f %.3f %.3f\n", file.c_str(), name.c_str(), ms[ms.size() / 2],
                  mean, ms.front());
      if (!dump.empty()) {
        const std::filesystem::path path =
            std::filesystem::path(dump) /
            (std::filesystem::path(file).filename().string() + "." + name + ".f32");
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(out.data()),
                static_cast<std::streamsize>(out.size()));
      }
    }
  }
  return 0;
}
