#include "tools/loadgen/input_data.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "core/status_macros.h"
#include "core/strings.h"
#include "tools/loadgen/npy_file.h"

namespace brigade::loadgen {
namespace {

namespace fs = std::filesystem;

bool IsBatched(const protocol::TensorMetadata& input) {
  return !input.shape.empty() && input.shape[0] == -1;
}

absl::Status CheckDims(const protocol::TensorMetadata& input, const Shape& dims) {
  if (dims.size() != input.shape.size() || !ShapeMatches(input.shape, dims)) {
    return absl::InvalidArgumentError(StrCat("input '", input.name, "': shape ",
                                             ShapeToString(dims), " does not match the model's ",
                                             ShapeToString(input.shape)));
  }
  return absl::OkStatus();
}

template <typename T, typename Distribution>
void FillRandom(Tensor* tensor, Distribution distribution, std::mt19937_64* random) {
  for (T& value : tensor->mutable_values<T>()) value = static_cast<T>(distribution(*random));
}

absl::StatusOr<Tensor> RandomTensor(const protocol::TensorMetadata& input, const Shape& shape,
                                    const InputOptions& options, std::mt19937_64* random) {
  if (input.dtype == DataType::kBytes) {
    BRIGADE_ASSIGN_OR_RETURN(const int64_t count, ElementCount(shape));
    std::uniform_int_distribution<int> letter('a', 'z');
    std::vector<std::string> values(static_cast<size_t>(count));
    for (std::string& value : values) {
      value.resize(static_cast<size_t>(options.string_length));
      for (char& c : value) c = static_cast<char>(letter(*random));
    }
    return Tensor::FromStrings(shape, values);
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(input.dtype, shape));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int64_t> small(0, 99);
  switch (input.dtype) {
    case DataType::kBool:
      FillRandom<uint8_t>(&tensor, std::uniform_int_distribution<int>(0, 1), random);
      break;
    case DataType::kUint8:
      FillRandom<uint8_t>(&tensor, small, random);
      break;
    case DataType::kUint16:
      FillRandom<uint16_t>(&tensor, small, random);
      break;
    case DataType::kUint32:
      FillRandom<uint32_t>(&tensor, small, random);
      break;
    case DataType::kUint64:
      FillRandom<uint64_t>(&tensor, small, random);
      break;
    case DataType::kInt8:
      FillRandom<int8_t>(&tensor, small, random);
      break;
    case DataType::kInt16:
      FillRandom<int16_t>(&tensor, small, random);
      break;
    case DataType::kInt32:
      FillRandom<int32_t>(&tensor, small, random);
      break;
    case DataType::kInt64:
      FillRandom<int64_t>(&tensor, small, random);
      break;
    case DataType::kFp32:
      FillRandom<float>(&tensor, unit, random);
      break;
    case DataType::kFp64:
      FillRandom<double>(&tensor, unit, random);
      break;
    case DataType::kFp16:
      // Bit patterns below 0x3C00 (1.0) are the finite halves in [0, 1).
      FillRandom<uint16_t>(&tensor, std::uniform_int_distribution<int>(0, 0x3BFF), random);
      break;
    case DataType::kBf16:
      // Bit patterns below 0x3F80 (1.0) are the finite bfloat16 values in [0, 1).
      FillRandom<uint16_t>(&tensor, std::uniform_int_distribution<int>(0, 0x3F7F), random);
      break;
    case DataType::kBytes:
    case DataType::kInvalid:
      break;
  }
  return tensor;
}

// Gives a sample without a batch dimension one, repeating it batch_size times.
absl::StatusOr<Tensor> AddBatchDimension(const protocol::TensorMetadata& input, Tensor tensor,
                                         const InputOptions& options) {
  if (!IsBatched(input) || tensor.shape().size() + 1 != input.shape.size()) return tensor;
  Shape batched = tensor.shape();
  batched.insert(batched.begin(), 1);
  BRIGADE_ASSIGN_OR_RETURN(Tensor row, tensor.Reshaped(batched));
  std::vector<Tensor> rows(static_cast<size_t>(options.batch_size), row);
  return ConcatRows(rows);
}

absl::StatusOr<Tensor> TensorFromFile(const protocol::TensorMetadata& input,
                                      const std::string& path, const InputOptions& options) {
  Tensor tensor;
  if (path.ends_with(".npy")) {
    BRIGADE_ASSIGN_OR_RETURN(tensor, ReadNpyFile(path));
    if (input.dtype != DataType::kInvalid && tensor.dtype() != input.dtype) {
      return absl::InvalidArgumentError(StrCat("input '", input.name, "': ", path, " holds ",
                                               DataTypeName(tensor.dtype()), ", the model wants ",
                                               DataTypeName(input.dtype)));
    }
    BRIGADE_ASSIGN_OR_RETURN(tensor, AddBatchDimension(input, std::move(tensor), options));
  } else {
    if (input.dtype == DataType::kInvalid) {
      return absl::InvalidArgumentError(StrCat("input '", input.name, "' has datatype '",
                                               input.datatype, "'; raw files need a known type"));
    }
    BRIGADE_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
    BRIGADE_ASSIGN_OR_RETURN(Shape shape, ResolveShape(input, options, bytes.size()));
    absl::StatusOr<Tensor> copied =
        Tensor::Copy(input.dtype, shape, std::as_bytes(std::span(bytes.data(), bytes.size())));
    if (!copied.ok()) {
      return absl::InvalidArgumentError(
          StrCat("input '", input.name, "' from ", path, ": ", ToStd(copied.status().message())));
    }
    tensor = *std::move(copied);
  }
  BRIGADE_RETURN_IF_ERROR(CheckDims(input, tensor.shape()));
  return tensor;
}

// The file for `input` in a sample folder: <input>.npy or <input>.bin.
absl::StatusOr<std::string> FindInputFile(const fs::path& folder, const std::string& input) {
  for (const char* extension : {".npy", ".bin"}) {
    const fs::path candidate = folder / (input + extension);
    if (fs::is_regular_file(candidate)) return candidate.string();
  }
  return absl::InvalidArgumentError(
      StrCat("sample folder ", folder.string(), " has no ", input, ".npy or ", input, ".bin"));
}

absl::StatusOr<std::vector<Sample>> SamplesFromDirectory(const protocol::ModelMetadata& metadata,
                                                         const InputOptions& options) {
  std::error_code error;
  std::vector<fs::path> entries;
  for (const fs::directory_entry& entry : fs::directory_iterator(options.directory, error)) {
    entries.push_back(entry.path());
  }
  if (error) {
    return absl::NotFoundError(
        StrCat("cannot read dataset folder '", options.directory, "': ", error.message()));
  }
  std::sort(entries.begin(), entries.end());
  std::vector<Sample> samples;
  for (const fs::path& entry : entries) {
    Sample sample;
    if (fs::is_directory(entry)) {
      for (const protocol::TensorMetadata& input : metadata.inputs) {
        BRIGADE_ASSIGN_OR_RETURN(std::string path, FindInputFile(entry, input.name));
        BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, TensorFromFile(input, path, options));
        sample.push_back({.name = input.name, .tensor = std::move(tensor), .parameters = {}});
      }
    } else if (entry.extension() == ".npy" || entry.extension() == ".bin") {
      if (metadata.inputs.size() != 1) {
        return absl::InvalidArgumentError(StrCat("dataset folder '", options.directory,
                                                 "': model '", metadata.name, "' has ",
                                                 metadata.inputs.size(),
                                                 " inputs, so each sample must be a folder holding "
                                                 "<input>.npy or <input>.bin per input"));
      }
      const protocol::TensorMetadata& input = metadata.inputs[0];
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, TensorFromFile(input, entry.string(), options));
      sample.push_back({.name = input.name, .tensor = std::move(tensor), .parameters = {}});
    } else {
      continue;  // README files and the like
    }
    samples.push_back(std::move(sample));
  }
  if (samples.empty()) {
    return absl::InvalidArgumentError(StrCat("dataset folder '", options.directory,
                                             "' holds no samples (.npy/.bin files or "
                                             "sample folders)"));
  }
  return samples;
}

}  // namespace

absl::StatusOr<Shape> ResolveShape(const protocol::TensorMetadata& input,
                                   const InputOptions& options, std::optional<size_t> byte_size) {
  const Shape& pattern = input.shape;
  Shape shape = pattern;
  const bool batched = IsBatched(input);
  if (batched) shape[0] = options.batch_size;
  if (auto given = options.shapes.find(input.name); given != options.shapes.end()) {
    if (given->second.size() == pattern.size()) {
      shape = given->second;
    } else if (batched && given->second.size() + 1 == pattern.size()) {
      std::copy(given->second.begin(), given->second.end(), shape.begin() + 1);
    } else {
      return absl::InvalidArgumentError(StrCat("--shape for input '", input.name, "' has ",
                                               given->second.size(), " dims; the model's shape is ",
                                               ShapeToString(pattern)));
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 0 || (pattern[i] >= 0 && shape[i] != pattern[i])) {
        return absl::InvalidArgumentError(StrCat("--shape ", ShapeToString(shape), " for input '",
                                                 input.name, "' does not fit the model's ",
                                                 ShapeToString(pattern)));
      }
    }
  }
  const auto unknown = std::count(shape.begin(), shape.end(), -1);
  if (unknown == 0) return shape;
  const size_t element_size = DataTypeSize(input.dtype);
  if (unknown == 1 && byte_size.has_value() && element_size > 0) {
    int64_t known = 1;
    for (int64_t dim : shape) {
      if (dim >= 0) known *= dim;
    }
    const size_t row = static_cast<size_t>(known) * element_size;
    if (row > 0 && *byte_size % row == 0) {
      *std::find(shape.begin(), shape.end(), -1) = static_cast<int64_t>(*byte_size / row);
      return shape;
    }
  }
  return absl::InvalidArgumentError(StrCat("input '", input.name, "' has variable dimensions ",
                                           ShapeToString(pattern), "; give them with --shape ",
                                           input.name, ":<dims>"));
}

absl::StatusOr<std::vector<Sample>> BuildSamples(const protocol::ModelMetadata& metadata,
                                                 const InputOptions& options) {
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError("batch size must be at least 1");
  }
  for (const auto& [name, path] : options.files) {
    const bool known = std::any_of(
        metadata.inputs.begin(), metadata.inputs.end(),
        [&wanted = name](const protocol::TensorMetadata& in) { return in.name == wanted; });
    if (!known) {
      return absl::InvalidArgumentError(
          StrCat("model '", metadata.name, "' has no input '", name, "' (given a file)"));
    }
  }
  if (!options.directory.empty()) return SamplesFromDirectory(metadata, options);

  std::mt19937_64 random(options.seed);
  std::vector<Sample> samples;
  const int count = std::max(1, options.random_samples);
  for (int s = 0; s < count; ++s) {
    Sample sample;
    for (const protocol::TensorMetadata& input : metadata.inputs) {
      Tensor tensor;
      if (auto file = options.files.find(input.name); file != options.files.end()) {
        BRIGADE_ASSIGN_OR_RETURN(tensor, TensorFromFile(input, file->second, options));
      } else {
        if (input.dtype == DataType::kInvalid) {
          return absl::InvalidArgumentError(StrCat("input '", input.name, "' has datatype '",
                                                   input.datatype,
                                                   "', which bench cannot "
                                                   "generate; give a file"));
        }
        BRIGADE_ASSIGN_OR_RETURN(Shape shape, ResolveShape(input, options, std::nullopt));
        BRIGADE_ASSIGN_OR_RETURN(tensor, RandomTensor(input, shape, options, &random));
      }
      sample.push_back({.name = input.name, .tensor = std::move(tensor), .parameters = {}});
    }
    samples.push_back(std::move(sample));
    // Files give one sample; only random data varies between samples.
    if (options.files.size() == metadata.inputs.size()) break;
  }
  return samples;
}

}  // namespace brigade::loadgen
