#ifndef BRIGADE_ENGINE_ONNX_KERNELS_PACKED_WEIGHTS_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_PACKED_WEIGHTS_H_

// PackedWeights: constant tensors re-laid out for a primitive (oneDNN's blocked weight formats,
// int8 weights with their compensation), computed once per model and shared by every plan of
// every instance. Kernels ask for "the weights of node N in layout D"; the first request packs
// them, later ones (another batch size, another instance) get the same buffer.
//
// Thread safety: thread-safe; packing runs outside the lock, so two instances asking at once may
// both pack, and the first result stored wins (the other is dropped).
// Ownership: returned buffers are shared_ptr, so a kernel keeps its weights alive on its own.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

class PackedWeights {
 public:
  using Packer = std::function<absl::StatusOr<Tensor>()>;

  // The buffer stored under (`key`, `desc`), computing it with `pack` when absent.
  absl::StatusOr<std::shared_ptr<const Tensor>> GetOrPack(const std::string& key,
                                                          const dnnl::memory::desc& desc,
                                                          const Packer& pack);

  // Number of packed buffers and their total bytes (for inspect and tests).
  size_t count() const;
  size_t total_bytes() const;

 private:
  struct Entry {
    dnnl::memory::desc desc;
    std::shared_ptr<const Tensor> tensor;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<Entry>> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_PACKED_WEIGHTS_H_
