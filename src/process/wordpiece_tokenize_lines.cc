// Test driver of the reference check (testdata/wordpiece_reference_test.py): tokenizes each
// line of a file with WordPieceTokenizer and prints its ids, one line of space-separated ids
// per input line ("!" and the error for a line that is not UTF-8), so the Python reference's
// output can be compared line by line.
//
//   process_wordpiece_tokenize_lines VOCAB LOWER_CASE(0|1) STRIP_ACCENTS(0|1) FILE

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "process/wordpiece_tokenizer.h"

int main(int argc, char** argv) {
  namespace process = brigade::process;
  if (argc != 5) {
    std::cerr << "usage: " << argv[0] << " VOCAB LOWER_CASE(0|1) STRIP_ACCENTS(0|1) FILE\n";
    return 2;
  }
  process::WordPieceOptions options;
  options.lower_case = std::string_view(argv[2]) == "1";
  options.strip_accents = std::string_view(argv[3]) == "1";
  auto tokenizer = process::WordPieceTokenizer::ReadFile(argv[1], options);
  if (!tokenizer.ok()) {
    std::cerr << tokenizer.status() << "\n";
    return 1;
  }
  std::ifstream in(argv[4], std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << argv[4] << "\n";
    return 1;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  std::vector<int64_t> ids;
  for (std::string_view rest = text;;) {
    const size_t newline = rest.find('\n');
    ids.clear();
    const absl::Status status = (*tokenizer)->Tokenize(rest.substr(0, newline), &ids);
    if (!status.ok()) {
      out += "! ";
      out += std::string(status.message());
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) out += ' ';
      out += std::to_string(ids[i]);
    }
    out += '\n';
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
