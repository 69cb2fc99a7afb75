#include "testing/temp_repository.h"

#include <unistd.h>

#include <atomic>
#include <fstream>

namespace brigade::testing {

const char kAddSubConfig[] = R"pb(
  backend: "brigade"
  max_batch_size: 8 input
  [ {
    name: "INPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
    , {
      name: "INPUT1"
      data_type: TYPE_INT32
      dims: [ 16 ]
    }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_INT32
    dims: [ 16 ]
  }
    , {
      name: "OUTPUT1"
      data_type: TYPE_INT32
      dims: [ 16 ]
    }]
  parameters {
    key: "op"
    value { string_value: "add_sub" }
  }
)pb";

const char kIdentityConfig[] = R"pb(
  backend: "brigade"
  max_batch_size: 8 input
  [ {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }]
  parameters {
    key: "op"
    value { string_value: "identity" }
  }
)pb";

const char kAddBiasConfig[] = R"pb(
  backend: "onnxruntime"
  max_batch_size: 8 input
  [ {
    name: "x"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }
    , {
      name: "bias"
      data_type: TYPE_FP32
      dims: [ 4 ]
      optional: true
    }] output
  [ {
    name: "y"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }]
)pb";

TempRepository::TempRepository() {
  static std::atomic<int> counter{0};
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("brigade_repo_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  path_ = dir.string();
}

TempRepository::~TempRepository() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

void TempRepository::AddModel(std::string_view name, std::string_view config,
                              std::vector<int> versions) {
  const auto dir = std::filesystem::path(path_) / std::string(name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.pbtxt") << config;
  for (int version : versions) std::filesystem::create_directories(dir / std::to_string(version));
}

void TempRepository::WriteFile(std::string_view relative_path, std::string_view contents) {
  const auto file = std::filesystem::path(path_) / std::string(relative_path);
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << contents;
}

void TempRepository::Remove(std::string_view relative_path) {
  std::filesystem::remove_all(std::filesystem::path(path_) / std::string(relative_path));
}

}  // namespace brigade::testing
