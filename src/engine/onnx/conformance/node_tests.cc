// onnx_node_tests: runs ONNX's backend node tests (Debian's libonnx-testdata) through Brigade's
// engine, printing one line per test and a summary.
//
//   onnx_node_tests --dir /usr/share/libonnx-testdata/data/node
//                   [--known-failures FILE] [--min-pass-rate 0.95] [--filter SUBSTRING]
//
// Tests whose model uses an op the engine does not implement at all are skipped (not counted).
// Every other test counts. The known-failures file lists "test_name  reason" lines: those
// failures print their reason. Exit status 1 when the pass rate is below --min-pass-rate or a
// test fails that is not listed (a regression), so CI catches both.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "engine/onnx/conformance/node_test_case.h"

namespace {

std::map<std::string, std::string> ReadKnownFailures(const std::string& path) {
  std::map<std::string, std::string> known;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    const std::string name = line.substr(0, space);
    std::string reason = space == std::string::npos ? "" : line.substr(space);
    reason.erase(0, reason.find_first_not_of(" \t"));
    known[name] = reason;
  }
  return known;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/usr/share/libonnx-testdata/data/node";
  std::string known_path, filter;
  double min_rate = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir") {
      dir = argv[i + 1];
    } else if (flag == "--known-failures") {
      known_path = argv[i + 1];
    } else if (flag == "--min-pass-rate") {
      double rate = 0;
      if (brigade::ParseDouble(argv[i + 1], &rate)) min_rate = rate;
    } else if (flag == "--filter") {
      filter = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const auto known =
      known_path.empty() ? std::map<std::string, std::string>() : ReadKnownFailures(known_path);
  std::vector<std::string> tests;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.find(filter) != std::string::npos) tests.push_back(name);
  }
  if (error || tests.empty()) {
    std::fprintf(stderr, "no node tests under %s\n", dir.c_str());
    return 2;
  }
  std::sort(tests.begin(), tests.end());
  int passed = 0, failed = 0, skipped = 0, unexpected = 0;
  std::vector<std::string> fixed;
  for (const std::string& name : tests) {
    const auto result = brigade::engine::onnx::RunNodeTest(dir + "/" + name);
    using brigade::engine::onnx::NodeTestOutcome;
    switch (result.outcome) {
      case NodeTestOutcome::kPassed:
        ++passed;
        std::printf("PASS %s\n", name.c_str());
        if (known.contains(name)) fixed.push_back(name);
        break;
      case NodeTestOutcome::kSkipped:
        ++skipped;
        std::printf("SKIP %s (%s)\n", name.c_str(), result.detail.c_str());
        break;
      case NodeTestOutcome::kFailed: {
        ++failed;
        auto it = known.find(name);
        if (it != known.end()) {
          std::printf("FAIL %s (known: %s) — %s\n", name.c_str(), it->second.c_str(),
                      result.detail.c_str());
        } else {
          ++unexpected;
          std::printf("FAIL %s (UNEXPECTED) — %s\n", name.c_str(), result.detail.c_str());
        }
        break;
      }
    }
  }
  const int attempted = passed + failed;
  const double rate = attempted == 0 ? 0 : static_cast<double>(passed) / attempted;
  std::printf(
      "\nsummary: %d passed / %d attempted (%.1f%%), %d failed (%d unexpected), "
      "%d skipped (op not implemented or outside the engine's scope)\n",
      passed, attempted, 100 * rate, failed, unexpected, skipped);
  for (const std::string& name : fixed) {
    std::printf("note: %s now passes; remove it from the known failures\n", name.c_str());
  }
  if (rate < min_rate) {
    std::printf("pass rate %.3f is below the required %.3f\n", rate, min_rate);
    return 1;
  }
  return unexpected > 0 ? 1 : 0;
}
