#include "engine/onnx/kernels/packed_weights.h"

#include "core/status_macros.h"
#include "core/strings.h"

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

void PackedWeights::NoteSource(const std::string& key, const void* source, size_t bytes,
                               const dnnl::memory::desc& plain) {
  absl::MutexLock lock(&mu_);
  // The first note wins: a rebuilt source (a temporary) must not replace the original's address.
  sources_.try_emplace(key, Source{source, bytes, plain});
}

std::vector<std::string> PackedWeights::KeysPackedFrom(const void* source, size_t bytes) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, src] : sources_) {
    if (src.data != source || src.bytes != bytes) continue;
    if (src.plain.data_type() != dnnl::memory::data_type::f32) continue;
    auto it = entries_.find(key);
    if (it == entries_.end()) continue;
    for (const Entry& entry : it->second) {
      if (entry.desc.data_type() == dnnl::memory::data_type::f32) {
        keys.push_back(key);
        break;
      }
    }
  }
  return keys;
}

absl::StatusOr<PackedWeights::Copy> PackedWeights::Fp32Copy(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto src = sources_.find(key);
  auto it = entries_.find(key);
  if (src != sources_.end() && it != entries_.end() &&
      src->second.plain.data_type() == dnnl::memory::data_type::f32) {
    for (const Entry& entry : it->second) {
      if (entry.desc.data_type() == dnnl::memory::data_type::f32) {
        return Copy{src->second.plain, entry.desc, entry.tensor};
      }
    }
  }
  return absl::NotFoundError(StrCat("packed weights '", key, "': no fp32 copy to rebuild from"));
}

int PackedWeights::rebuilt_sources() const {
  absl::MutexLock lock(&mu_);
  return rebuilt_sources_;
}

void PackedWeights::CountRebuild() {
  absl::MutexLock lock(&mu_);
  ++rebuilt_sources_;
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
