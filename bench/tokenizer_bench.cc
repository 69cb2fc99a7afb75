// WordPiece tokenization speed: every line of a corpus file through WordPieceTokenizer::Encode
// (BERT's [CLS] ... [SEP] + padding to max_length), on one thread, repeated; prints the best
// repeat's sentences/s and pieces/s. bench/tokenizer_compare.py runs it beside the Python
// reference on the same corpus.
//
//   build/bench/tokenizer_bench VOCAB CORPUS [--max_length=128] [--repeat=5] [--cased]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "process/wordpiece_tokenizer.h"

int main(int argc, char** argv) {
  namespace process = brigade::process;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s VOCAB CORPUS [--max_length=N] [--repeat=N] [--cased]\n",
                 argv[0]);
    return 2;
  }
  int max_length = 128;
  int repeat = 5;
  process::WordPieceOptions options;
  for (int i = 3; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--max_length=")) max_length = std::stoi(std::string(arg.substr(13)));
    if (arg.starts_with("--repeat=")) repeat = std::stoi(std::string(arg.substr(9)));
    if (arg == "--cased") options.lower_case = options.strip_accents = false;
  }
  auto tokenizer = process::WordPieceTokenizer::ReadFile(argv[1], options);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(tokenizer.status().message()).c_str());
    return 1;
  }
  std::ifstream in(argv[2], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string_view> lines;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t newline = rest.find('\n');
    lines.push_back(rest.substr(0, newline));
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
  }
  std::vector<int64_t> ids(max_length), mask(max_length), types(max_length);
  double best_s = 1e30;
  int64_t tokens = 0;
  for (int r = 0; r < repeat; ++r) {
    tokens = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const std::string_view line : lines) {
      const auto count = (*tokenizer)->Encode(line, ids, mask, types);
      if (!count.ok()) {
        std::fprintf(stderr, "%s\n", std::string(count.status().message()).c_str());
        return 1;
      }
      tokens += *count;
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best_s = std::min(best_s, s);
  }
  std::printf(
      "lines %zu bytes %zu tokens %lld max_length %d best_s %.6f sentences_per_s %.0f "
      "tokens_per_s %.0f\n",
      lines.size(), text.size(), static_cast<long long>(tokens), max_length, best_s,
      lines.size() / best_s, tokens / best_s);
  return 0;
}
