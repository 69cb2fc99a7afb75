#ifndef BRIGADE_TESTING_TEMP_REPOSITORY_H_
#define BRIGADE_TESTING_TEMP_REPOSITORY_H_

// TempRepository: a model repository in a fresh temporary directory, removed on destruction,
// for tests that need real config.pbtxt files and version directories. Test-only.
//
//   TempRepository repo;
//   repo.AddModel("simple", kAddSubConfig);          // config.pbtxt + version 1
//   auto server = InferenceServer::Create({.model_repository = repo.path()});
//
// Not thread-safe; one per test.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace brigade::testing {

// Triton's "simple" model on the builtin backend: INPUT0/INPUT1 INT32 [16] →
// OUTPUT0 = sum, OUTPUT1 = difference; max_batch_size 8.
extern const char kAddSubConfig[];
// Identity on the builtin backend: INPUT0 FP32 [-1] → OUTPUT0; max_batch_size 8.
extern const char kIdentityConfig[];
// y = x + bias on the ONNX engine (engine::onnx::AddBiasGraph() as 1/model.onnx): x and the
// optional bias FP32 [4] → y; max_batch_size 8.
extern const char kAddBiasConfig[];

class TempRepository {
 public:
  TempRepository();
  ~TempRepository();
  TempRepository(const TempRepository&) = delete;
  TempRepository& operator=(const TempRepository&) = delete;

  const std::string& path() const { return path_; }

  // Writes <root>/<name>/config.pbtxt and creates the version directories.
  void AddModel(std::string_view name, std::string_view config, std::vector<int> versions = {1});
  // Writes a file relative to the root (creating directories).
  void WriteFile(std::string_view relative_path, std::string_view contents);
  void Remove(std::string_view relative_path);

 private:
  std::string path_;
};

}  // namespace brigade::testing

#endif  // BRIGADE_TESTING_TEMP_REPOSITORY_H_
