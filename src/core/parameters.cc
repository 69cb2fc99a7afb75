#include "core/parameters.h"

#include <limits>

namespace brigade {

void Parameters::Set(std::string key, ParameterValue value) {
  for (Entry& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

const ParameterValue* Parameters::Find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.first == key) return &entry.second;
  }
  return nullptr;
}

bool Parameters::Erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<bool> Parameters::GetBool(std::string_view key) const {
  const ParameterValue* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (const bool* b = std::get_if<bool>(value)) return *b;
  return std::nullopt;
}

std::optional<int64_t> Parameters::GetInt(std::string_view key) const {
  const ParameterValue* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (const int64_t* i = std::get_if<int64_t>(value)) return *i;
  if (const uint64_t* u = std::get_if<uint64_t>(value)) {
    if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(*u);
    }
  }
  return std::nullopt;
}

std::optional<double> Parameters::GetDouble(std::string_view key) const {
  const ParameterValue* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (const double* d = std::get_if<double>(value)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(value)) return static_cast<double>(*i);
  if (const uint64_t* u = std::get_if<uint64_t>(value)) return static_cast<double>(*u);
  return std::nullopt;
}

std::optional<std::string_view> Parameters::GetString(std::string_view key) const {
  const ParameterValue* value = Find(key);
  if (value == nullptr) return std::nullopt;
  if (const std::string* s = std::get_if<std::string>(value)) return std::string_view(*s);
  return std::nullopt;
}

}  // namespace brigade
