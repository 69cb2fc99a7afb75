#include "engine/onnx/kernels/packed_weights.h"

#include "core/status_macros.h"

namespace brigade::engine::onnx {

absl::StatusOr<std::shared_ptr<const Tensor>> PackedWeights::GetOrPack(
    const std::string& key, const dnnl::memory::desc& desc, const Packer& pack) {
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      for (const Entry& entry : it->second) {
        if (entry.desc == desc) return entry.tensor;
      }
    }
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor packed, pack());
  auto shared = std::make_shared<const Tensor>(std::move(packed));
  absl::MutexLock lock(&mu_);
  std::vector<Entry>& list = entries_[key];
  for (const Entry& entry : list) {
    if (entry.desc == desc) return entry.tensor;
  }
  list.push_back(Entry{desc, shared});
  return shared;
}

size_t PackedWeights::count() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, list] : entries_) n += list.size();
  return n;
}

size_t PackedWeights::total_bytes() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, list] : entries_) {
    for (const Entry& entry : list) n += entry.tensor->byte_size();
  }
  return n;
}

}  // namespace brigade::engine::onnx
