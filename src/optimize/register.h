#ifndef BRIGADE_OPTIMIZE_REGISTER_H_
#define BRIGADE_OPTIMIZE_REGISTER_H_

// `--register REPO`: places an optimized ONNX model in a Triton-style model repository, so the
// server (and a router over it) sees it as one more model:
//
//   REPO/NAME absent   a new model: REPO/NAME/config.pbtxt (the source model's config renamed
//                      when the source lives in a repository, its label files beside it; else a
//                      minimal onnxruntime_onnx config), version 1/model.onnx (and model.pt);
//   REPO/NAME present  a new version (the highest numeric one + 1) of that ONNX model.
//
// Either way the config carries the measurements (`fields`: accuracy, drop, latencies, what made
// the model, and "version": the version they describe) as `parameters` entries keyed
// "brigade_optimize.*", which the repository passes to the backend untouched and the ONNX backend
// ignores; a later registration replaces the block (it is delimited by comment lines) with its own.
//
// Nothing half-written: a new model is assembled in a dot-folder of REPO (which the repository
// scan skips) and renamed into place; a new version likewise inside REPO/NAME, the rewritten
// config through a temporary file and a rename. NAME must be one plain folder name inside REPO
// (letters, digits, '_', '-', '.'; not "." or ".."; no symlink out of REPO).
//
// Thread safety: a free function; two registrations into one model at once may pick the same
// version (the second rename fails, nothing is overwritten).
// Errors: INVALID_ARGUMENT / NOT_FOUND naming --register or --register-name.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::optimize {

struct RegisterOptions {
  std::string repository;
  std::string model_name;
  std::string model_file;         // the ONNX model to place as <version>/model.onnx
  std::string torchscript_file;   // optional: also <version>/model.pt
  std::string source_model_path;  // the fp32 model: its repository config is reused
  std::vector<std::pair<std::string, std::string>> fields;  // key (after the prefix), value
};

struct Registration {
  std::string model_dir;
  int64_t version = 0;
  bool new_model = false;
};

absl::StatusOr<Registration> RegisterVariant(const RegisterOptions& options);

// The checks RegisterVariant starts with (the repository exists, the name is one folder inside
// it), for callers that want them before spending time: the model folder's path.
absl::StatusOr<std::string> CheckRegisterTarget(const std::string& repository,
                                                const std::string& model_name);

// The config text with the measurement block (see above) replaced by one holding `fields`, and,
// when `name` is not empty, the top-level `name:` set to it.
std::string WithMeasurements(std::string config, const std::string& name,
                             const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace brigade::optimize

#endif  // BRIGADE_OPTIMIZE_REGISTER_H_
