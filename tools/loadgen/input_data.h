#ifndef BRIGADE_TOOLS_LOADGEN_INPUT_DATA_H_
#define BRIGADE_TOOLS_LOADGEN_INPUT_DATA_H_

// The inputs a benchmark sends: a list of samples, each one complete set of input tensors for the
// model, which the workers cycle through. Built once before the run, so the request loop never
// touches a file or a random generator.
//
// Sources, for each input the model declares (from its metadata):
//   * a file given for it (`files[name]`): .npy (dtype and shape from the file) or raw
//     little-endian bytes (dtype from the metadata, shape resolved as below);
//   * a dataset folder (`directory`): either one subfolder per sample holding `<input>.npy` or
//     `<input>.bin` for each input, or — for a single-input model — one file per sample;
//     samples in name order;
//   * otherwise random data (seeded): floats uniform in [0, 1), integers in [0, 100) within the
//     type's range, bools, ASCII strings of `string_length` bytes.
//
// Shapes: a leading -1 in the metadata is the batch dimension and becomes `batch_size`; other -1
// dims come from `shapes[name]`, given either without the batch dimension or in full; for raw
// files one remaining unknown dim is deduced from the file size. A sample with no batch dimension
// for a batching model gets one, repeated `batch_size` times.
//
// Failure: INVALID_ARGUMENT naming the input and what is missing or mismatched (unknown dims,
// dtype or shape disagreeing with the metadata), NOT_FOUND for unreadable files. Pure apart from
// reading the named files.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/infer_request.h"
#include "tools/client/client_types.h"

namespace brigade::loadgen {

struct InputOptions {
  int64_t batch_size = 1;
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::string> files;
  std::string directory;
  // Distinct random samples to cycle through.
  int random_samples = 1;
  int64_t string_length = 16;
  uint64_t seed = 1;
};

using Sample = std::vector<InferInput>;

absl::StatusOr<std::vector<Sample>> BuildSamples(const protocol::ModelMetadata& metadata,
                                                 const InputOptions& options);

// The concrete shape to send for `input`; `byte_size`, when given, resolves one unknown dim of a
// fixed-size type.
absl::StatusOr<Shape> ResolveShape(const protocol::TensorMetadata& input,
                                   const InputOptions& options, std::optional<size_t> byte_size);

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_INPUT_DATA_H_
