#include "engine/onnx/ir/attribute.h"

#include <utility>

#include "engine/onnx/ir/graph.h"

namespace brigade::engine::onnx {

SubgraphPtr::SubgraphPtr() = default;
SubgraphPtr::SubgraphPtr(Graph graph) : graph_(std::make_unique<Graph>(std::move(graph))) {}
SubgraphPtr::SubgraphPtr(const SubgraphPtr& other)
    : graph_(other.graph_ == nullptr ? nullptr : std::make_unique<Graph>(*other.graph_)) {}
SubgraphPtr& SubgraphPtr::operator=(const SubgraphPtr& other) {
  if (this != &other) {
    graph_ = other.graph_ == nullptr ? nullptr : std::make_unique<Graph>(*other.graph_);
  }
  return *this;
}
SubgraphPtr::SubgraphPtr(SubgraphPtr&& other) noexcept = default;
SubgraphPtr& SubgraphPtr::operator=(SubgraphPtr&& other) noexcept = default;
SubgraphPtr::~SubgraphPtr() = default;

bool AttributeMap::Has(std::string_view name) const { return Find(name) != nullptr; }

const Attribute* AttributeMap::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

Attribute* AttributeMap::FindMutable(std::string_view name) {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

int64_t AttributeMap::GetInt(std::string_view name, int64_t default_value) const {
  const Attribute* a = Find(name);
  return a != nullptr && a->kind == Attribute::Kind::kInt ? a->i : default_value;
}

float AttributeMap::GetFloat(std::string_view name, float default_value) const {
  const Attribute* a = Find(name);
  return a != nullptr && a->kind == Attribute::Kind::kFloat ? a->f : default_value;
}

std::string AttributeMap::GetString(std::string_view name, std::string_view default_value) const {
  const Attribute* a = Find(name);
  return a != nullptr && a->kind == Attribute::Kind::kString ? a->s : std::string(default_value);
}

std::span<const int64_t> AttributeMap::GetInts(std::string_view name) const {
  const Attribute* a = Find(name);
  if (a == nullptr || a->kind != Attribute::Kind::kInts) return {};
  return a->ints;
}

std::span<const float> AttributeMap::GetFloats(std::string_view name) const {
  const Attribute* a = Find(name);
  if (a == nullptr || a->kind != Attribute::Kind::kFloats) return {};
  return a->floats;
}

std::span<const std::string> AttributeMap::GetStrings(std::string_view name) const {
  const Attribute* a = Find(name);
  if (a == nullptr || a->kind != Attribute::Kind::kStrings) return {};
  return a->strings;
}

const Tensor* AttributeMap::GetTensor(std::string_view name) const {
  const Attribute* a = Find(name);
  return a != nullptr && a->kind == Attribute::Kind::kTensor ? &a->t : nullptr;
}

const Attribute* AttributeMap::GetGraph(std::string_view name) const {
  const Attribute* a = Find(name);
  return a != nullptr && a->kind == Attribute::Kind::kGraph && a->g != nullptr ? a : nullptr;
}

void AttributeMap::Set(std::string_view name, Attribute value) {
  entries_.insert_or_assign(std::string(name), std::move(value));
}

void AttributeMap::SetInt(std::string_view name, int64_t value) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = value;
  Set(name, std::move(a));
}

void AttributeMap::SetFloat(std::string_view name, float value) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = value;
  Set(name, std::move(a));
}

void AttributeMap::SetString(std::string_view name, std::string_view value) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::string(value);
  Set(name, std::move(a));
}

void AttributeMap::SetInts(std::string_view name, std::vector<int64_t> values) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(values);
  Set(name, std::move(a));
}

void AttributeMap::SetFloats(std::string_view name, std::vector<float> values) {
  Attribute a;
  a.kind = Attribute::Kind::kFloats;
  a.floats = std::move(values);
  Set(name, std::move(a));
}

void AttributeMap::SetStrings(std::string_view name, std::vector<std::string> values) {
  Attribute a;
  a.kind = Attribute::Kind::kStrings;
  a.strings = std::move(values);
  Set(name, std::move(a));
}

void AttributeMap::SetTensor(std::string_view name, Tensor value) {
  Attribute a;
  a.kind = Attribute::Kind::kTensor;
  a.t = std::move(value);
  Set(name, std::move(a));
}

void AttributeMap::Erase(std::string_view name) {
  auto it = entries_.find(name);
  if (it != entries_.end()) entries_.erase(it);
}

}  // namespace brigade::engine::onnx
