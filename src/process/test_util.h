#ifndef BRIGADE_PROCESS_TEST_UTIL_H_
#define BRIGADE_PROCESS_TEST_UTIL_H_

// Test support of src/process: reading the committed test images and their references
// (testdata/make_testdata.py writes both). Test code only; aborts the test on a missing file.

#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace brigade::process::testing {

inline std::string ReadTestFile(const std::string& name) {
  const std::string path = std::string(BRIGADE_PROCESS_TESTDATA_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The test images are 64x48.
inline constexpr int kTestWidth = 64;
inline constexpr int kTestHeight = 48;

}  // namespace brigade::process::testing

#endif  // BRIGADE_PROCESS_TEST_UTIL_H_
