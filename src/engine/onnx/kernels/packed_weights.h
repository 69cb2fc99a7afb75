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
//
// Sources: each pack notes where it read its source (address, bytes, plain layout), so that the
// model can free an fp32 initializer once every reader of it has packed it
// (CompiledModel::ReleaseSource). A later plan asking such a key for another layout gets the
// source back from a stored fp32 copy (Fp32Copy): a reorder between two fp32 layouts moves
// values without rounding, so the rebuilt source equals the one freed, bit for bit.

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

  // Notes that `key` was packed from `bytes` bytes at `source`, laid out as `plain`.
  void NoteSource(const std::string& key, const void* source, size_t bytes,
                  const dnnl::memory::desc& plain);
  // The keys packed from exactly [source, source + bytes) as an fp32 source with an fp32 copy
  // stored: each of them can rebuild the source (Fp32Copy).
  std::vector<std::string> KeysPackedFrom(const void* source, size_t bytes) const;

  struct Copy {
    dnnl::memory::desc plain;  // the source's layout
    dnnl::memory::desc desc;   // the stored copy's
    std::shared_ptr<const Tensor> tensor;
  };
  // An fp32 copy stored under `key` whose source was fp32, or NOT_FOUND.
  absl::StatusOr<Copy> Fp32Copy(const std::string& key) const;

  // Number of packed buffers and their total bytes (for inspect and tests).
  size_t count() const;
  size_t total_bytes() const;
  // Sources rebuilt from a packed copy (RebuildSource in dnnl_util.h), for tests.
  int rebuilt_sources() const;
  void CountRebuild();

 private:
  struct Entry {
    dnnl::memory::desc desc;
    std::shared_ptr<const Tensor> tensor;
  };
  struct Source {
    const void* data = nullptr;
    size_t bytes = 0;
    dnnl::memory::desc plain;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Source> sources_ ABSL_GUARDED_BY(mu_);
  int rebuilt_sources_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_PACKED_WEIGHTS_H_
