#ifndef BRIGADE_OPTIMIZE_TEST_UTIL_NPY_WRITER_H_
#define BRIGADE_OPTIMIZE_TEST_UTIL_NPY_WRITER_H_

// Test support of src/optimize: writes the .npy files (NumPy format 1.0) the data sets are read
// from, so tests build their evaluation sets in a few lines. Not for production code: no error
// handling beyond what the reader under test checks.
//
// Thread safety: free functions.

#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace brigade::optimize::test_util {

// The bytes of an .npy file: `payload` as dtype `descr` ('<f4', '<i8') and `shape` written as
// NumPy writes it ("(3, 2)", "(1,)"), or as a test wants it to be misread.
inline std::string NpyBytes(const std::string& descr, const std::string& shape,
                            std::string_view payload) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(payload.data(), payload.size());
  return out;
}

// Writes `payload` as an array of dtype `descr` ('<f4', '<i8') and `shape`.
inline void WriteNpyBytes(const std::string& path, const std::string& descr,
                          const std::vector<int64_t>& shape, std::span<const char> payload) {
  std::string dims = "(";
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  dims += ")";
  std::ofstream(path, std::ios::binary)
      << NpyBytes(descr, dims, std::string_view(payload.data(), payload.size()));
}

// An fp32 tensor as .npy.
inline void WriteNpy(const std::string& path, const Tensor& t) {
  WriteNpyBytes(path, "<f4", std::vector<int64_t>(t.shape().begin(), t.shape().end()),
                std::span<const char>(reinterpret_cast<const char*>(t.data()), t.byte_size()));
}

// Integer labels as a 1-D int64 .npy.
inline void WriteNpyLabels(const std::string& path, const std::vector<int64_t>& labels) {
  WriteNpyBytes(path, "<i8", {static_cast<int64_t>(labels.size())},
                std::span<const char>(reinterpret_cast<const char*>(labels.data()),
                                      labels.size() * sizeof(int64_t)));
}

}  // namespace brigade::optimize::test_util

#endif  // BRIGADE_OPTIMIZE_TEST_UTIL_NPY_WRITER_H_
