#include "pipeline/classification.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/strings.h"

namespace brigade::pipeline {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// The sort key: NaN ranks below every number (and ties with -inf), so the order is strict weak.
template <typename V>
V Rank(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(v)) return -std::numeric_limits<V>::infinity();
  }
  return v;
}

template <typename T>
T Load(const std::byte* data, size_t i) {
  T value;
  std::memcpy(&value, data + i * sizeof(T), sizeof(T));
  return value;
}

// Per row: the indices of the k highest values (ties: lower index first) and their text.
template <typename T, typename Value, typename Text>
void TopK(const std::byte* data, int64_t rows, int64_t classes, int64_t k,
          std::span<const std::string> labels, const Value& value, const Text& text,
          std::vector<std::string>* out) {
  std::vector<int64_t> order(static_cast<size_t>(classes));
  for (int64_t row = 0; row < rows; ++row) {
    const size_t base = static_cast<size_t>(row * classes);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      const auto va = Rank(value(Load<T>(data, base + a)));
      const auto vb = Rank(value(Load<T>(data, base + b)));
      return va > vb || (!(vb > va) && a < b);
    });
    for (int64_t i = 0; i < k; ++i) {
      const int64_t index = order[i];
      std::string entry = StrCat(text(value(Load<T>(data, base + index))), ":", index);
      if (static_cast<size_t>(index) < labels.size()) entry += StrCat(":", labels[index]);
      out->push_back(std::move(entry));
    }
  }
}

template <typename T>
void TopKOf(const std::byte* data, int64_t rows, int64_t classes, int64_t k,
            std::span<const std::string> labels, std::vector<std::string>* out) {
  auto same = [](T v) { return v; };
  if constexpr (std::is_floating_point_v<T>) {
    TopK<T>(
        data, rows, classes, k, labels, same, [](T v) { return std::to_string(v); }, out);
  } else {
    TopK<T>(
        data, rows, classes, k, labels, same, [](T v) { return StrCat(v); }, out);
  }
}

}  // namespace

absl::StatusOr<Tensor> Classify(std::string_view output_name, const Tensor& output, int64_t k,
                                bool batched, std::span<const std::string> labels) {
  auto error = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("output '", output_name, "': classification ", why));
  };
  if (k < 1) return error(StrCat("count ", k, " is not a positive integer"));
  if (batched && output.shape().empty()) return error("needs a batch dimension");
  const int64_t rows = batched ? output.shape()[0] : 1;
  const int64_t classes = rows == 0 ? 0 : output.num_elements() / rows;
  const int64_t count = std::min(k, classes);
  std::vector<std::string> entries;
  entries.reserve(static_cast<size_t>(rows * count));
  const std::byte* data = output.data();
  switch (output.dtype()) {
    case DataType::kUint8:
      TopKOf<uint8_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kUint16:
      TopKOf<uint16_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kUint32:
      TopKOf<uint32_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kUint64:
      TopKOf<uint64_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kInt8:
      TopKOf<int8_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kInt16:
      TopKOf<int16_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kInt32:
      TopKOf<int32_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kInt64:
      TopKOf<int64_t>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kFp32:
      TopKOf<float>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kFp64:
      TopKOf<double>(data, rows, classes, count, labels, &entries);
      break;
    case DataType::kFp16:
      TopK<uint16_t>(
          data, rows, classes, count, labels, HalfToFloat,
          [](float v) { return std::to_string(v); }, &entries);
      break;
    case DataType::kBf16:
      TopK<uint16_t>(
          data, rows, classes, count, labels, Bf16ToFloat,
          [](float v) { return std::to_string(v); }, &entries);
      break;
    case DataType::kBool:
    case DataType::kBytes:
    case DataType::kInvalid:
      return error(StrCat("needs a numeric output, not ", DataTypeName(output.dtype())));
  }
  Shape shape = batched ? Shape{rows, count} : Shape{count};
  return Tensor::FromStrings(std::move(shape), entries);
}

}  // namespace brigade::pipeline
