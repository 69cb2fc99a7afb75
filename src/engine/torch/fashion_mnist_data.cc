#include "engine/torch/fashion_mnist_data.h"

#include <zlib.h>

#include <filesystem>
#include <memory>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine {
namespace {

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};

absl::StatusOr<std::string> ReadGzip(const std::string& path) {
  if (!std::filesystem::exists(path)) return absl::NotFoundError(StrCat(path, " not found"));
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) return absl::InvalidArgumentError(StrCat("cannot open ", path));
  std::string data;
  char buffer[1 << 16];
  int read = 0;
  while ((read = gzread(file.get(), buffer, sizeof(buffer))) > 0) data.append(buffer, read);
  if (read < 0) return absl::InvalidArgumentError(StrCat(path, ": not a valid gzip file"));
  return data;
}

uint32_t BigEndian32(const std::string& data, size_t offset) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data() + offset);
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

// Returns the dims of an unsigned-byte IDX file and sets *payload to its first value's offset.
absl::StatusOr<std::vector<uint32_t>> IdxDims(const std::string& path, const std::string& data,
                                              size_t* payload) {
  if (data.size() < 4 || data[0] != 0 || data[1] != 0 || data[2] != 0x08) {
    return absl::InvalidArgumentError(StrCat(path, ": not an unsigned-byte IDX file"));
  }
  const size_t ndim = static_cast<unsigned char>(data[3]);
  *payload = 4 + 4 * ndim;
  if (data.size() < *payload) return absl::InvalidArgumentError(StrCat(path, ": truncated"));
  std::vector<uint32_t> dims;
  size_t count = 1;
  for (size_t i = 0; i < ndim; ++i) {
    dims.push_back(BigEndian32(data, 4 + 4 * i));
    count *= dims.back();
  }
  if (data.size() - *payload != count) {
    return absl::InvalidArgumentError(
        StrCat(path, ": expected ", count, " values, found ", data.size() - *payload));
  }
  return dims;
}

}  // namespace

absl::StatusOr<FashionMnistSplit> ReadFashionMnist(const std::string& dir,
                                                   const std::string& prefix) {
  const std::string images_path = StrCat(dir, "/", prefix, "-images-idx3-ubyte.gz");
  const std::string labels_path = StrCat(dir, "/", prefix, "-labels-idx1-ubyte.gz");
  BRIGADE_ASSIGN_OR_RETURN(std::string images, ReadGzip(images_path));
  BRIGADE_ASSIGN_OR_RETURN(std::string labels, ReadGzip(labels_path));
  size_t image_offset = 0;
  size_t label_offset = 0;
  BRIGADE_ASSIGN_OR_RETURN(std::vector<uint32_t> image_dims,
                           IdxDims(images_path, images, &image_offset));
  BRIGADE_ASSIGN_OR_RETURN(std::vector<uint32_t> label_dims,
                           IdxDims(labels_path, labels, &label_offset));
  if (image_dims.size() != 3 || image_dims[1] != 28 || image_dims[2] != 28 ||
      label_dims.size() != 1 || label_dims[0] != image_dims[0]) {
    return absl::InvalidArgumentError(
        StrCat(dir, "/", prefix, ": expected N 28x28 images and N labels"));
  }
  const int64_t count = image_dims[0];
  FashionMnistSplit split;
  BRIGADE_ASSIGN_OR_RETURN(split.images, Tensor::Allocate(DataType::kFp32, {count, 1, 28, 28}));
  auto pixels = split.images.mutable_values<float>();
  for (size_t i = 0; i < pixels.size(); ++i) {
    pixels[i] = static_cast<float>(static_cast<unsigned char>(images[image_offset + i])) / 255.0f;
  }
  for (int64_t i = 0; i < count; ++i) {
    split.labels.push_back(static_cast<unsigned char>(labels[label_offset + i]));
  }
  return split;
}

}  // namespace brigade::engine
