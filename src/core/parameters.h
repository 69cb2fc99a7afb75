#ifndef BRIGADE_CORE_PARAMETERS_H_
#define BRIGADE_CORE_PARAMETERS_H_

// Parameters: the protocol's key/value maps on a request, an input, an output or a response
// (KServe v2 "parameters"; gRPC InferParameter with Triton's double and uint64 additions).
//
// Stored as a small vector in insertion order: requests carry a handful of keys, a linear scan
// beats hashing at that size, and encoders emit keys in the order they arrived.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace brigade {

using ParameterValue = std::variant<bool, int64_t, uint64_t, double, std::string>;

class Parameters {
 public:
  using Entry = std::pair<std::string, ParameterValue>;

  // Replaces the value when the key exists.
  void Set(std::string key, ParameterValue value);
  const ParameterValue* Find(std::string_view key) const;
  bool Contains(std::string_view key) const { return Find(key) != nullptr; }
  bool Erase(std::string_view key);

  // Typed reads. Integers convert between signed and unsigned when the value fits; nothing else
  // converts (a string "5" is not an int), so a wrongly typed parameter is visible to the caller.
  std::optional<bool> GetBool(std::string_view key) const;
  std::optional<int64_t> GetInt(std::string_view key) const;
  std::optional<double> GetDouble(std::string_view key) const;  // also accepts integers
  std::optional<std::string_view> GetString(std::string_view key) const;

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

  friend bool operator==(const Parameters&, const Parameters&) = default;

 private:
  std::vector<Entry> entries_;
};

}  // namespace brigade

#endif  // BRIGADE_CORE_PARAMETERS_H_
