#ifndef BRIGADE_ENGINE_ONNX_IR_ATTRIBUTE_H_
#define BRIGADE_ENGINE_ONNX_IR_ATTRIBUTE_H_

// Node attributes of the engine's IR: ONNX's AttributeProto reduced to the kinds the engine
// executes (numbers, strings, tensors and lists of those). Subgraph attributes (If/Loop bodies)
// are not represented; the loader refuses nodes that carry them.
//
// Getters never fail: an absent attribute, or one of another kind, yields the caller's default.
// The loader has already run ONNX's checker, which validates attribute kinds against each op's
// schema, so a wrong kind can only come from a hostile file — and then the default is a safe,
// deterministic answer (kernels validate the values they rely on).
//
// Thread safety: a value type; const methods may be called concurrently.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace brigade::engine::onnx {

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kTensor, kInts, kFloats, kStrings };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  Tensor t;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
};

class AttributeMap {
 public:
  bool Has(std::string_view name) const;
  const Attribute* Find(std::string_view name) const;

  int64_t GetInt(std::string_view name, int64_t default_value) const;
  float GetFloat(std::string_view name, float default_value) const;
  std::string GetString(std::string_view name, std::string_view default_value) const;
  // Empty when absent.
  std::span<const int64_t> GetInts(std::string_view name) const;
  std::span<const float> GetFloats(std::string_view name) const;
  std::span<const std::string> GetStrings(std::string_view name) const;
  // Null when absent.
  const Tensor* GetTensor(std::string_view name) const;

  void SetInt(std::string_view name, int64_t value);
  void SetFloat(std::string_view name, float value);
  void SetString(std::string_view name, std::string_view value);
  void SetInts(std::string_view name, std::vector<int64_t> values);
  void SetFloats(std::string_view name, std::vector<float> values);
  void SetStrings(std::string_view name, std::vector<std::string> values);
  void SetTensor(std::string_view name, Tensor value);
  void Set(std::string_view name, Attribute value);
  void Erase(std::string_view name);

  const std::map<std::string, Attribute, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, Attribute, std::less<>> entries_;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_IR_ATTRIBUTE_H_
