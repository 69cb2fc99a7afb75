#include "protocol/http/json_tensor_data.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "core/json_text.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/http/json_reader.h"

namespace brigade::protocol::http {
namespace {

using simdjson::ondemand::json_type;

// What an element of each type must look like, for error messages.
std::string Expectation(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return "a BOOL (true or false)";
    case DataType::kFp32:
      return "an FP32 (a number of magnitude at most 3.40282e+38)";
    case DataType::kFp64:
      return "an FP64 (a number)";
    case DataType::kBytes:
      return "a BYTES element (a JSON string)";
    default:
      break;
  }
  const bool is_signed = dtype == DataType::kInt8 || dtype == DataType::kInt16 ||
                         dtype == DataType::kInt32 || dtype == DataType::kInt64;
  const int bits = static_cast<int>(DataTypeSize(dtype)) * 8;
  if (is_signed) {
    const __int128 max = (static_cast<__int128>(1) << (bits - 1)) - 1;
    return StrCat("an ", DataTypeName(dtype), " (an integer in [", static_cast<int64_t>(-max - 1),
                  ", ", static_cast<int64_t>(max), "])");
  }
  const uint64_t max =
      bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  return StrCat("a ", DataTypeName(dtype), " (an integer in [0, ", max, "])");
}

// Shared state of one data array walk: where elements go and how to name them in errors.
struct WalkContext {
  LazyText label;
  DataType dtype;
  int64_t expected;
  int64_t index = 0;
};

absl::Status BadElement(const WalkContext& context, simdjson::ondemand::value& value) {
  return absl::InvalidArgumentError(StrCat(context.label(), ": data element ", context.index, " (",
                                           TokenText(value), ") is not ",
                                           Expectation(context.dtype)));
}

absl::Status TooManyElements(const WalkContext& context) {
  return absl::InvalidArgumentError(StrCat(context.label(), ": data has more than the ",
                                           context.expected, " elements its shape needs"));
}

// Parses one scalar element of C type T.
template <typename T>
absl::Status ParseElement(const WalkContext& context, simdjson::ondemand::value& value, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (value.get_bool().get(*out) != simdjson::SUCCESS) return BadElement(context, value);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    int64_t number;
    if (value.get_int64().get(number) != simdjson::SUCCESS ||
        number < std::numeric_limits<T>::min() || number > std::numeric_limits<T>::max()) {
      return BadElement(context, value);
    }
    *out = static_cast<T>(number);
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t number;
    if (value.get_uint64().get(number) != simdjson::SUCCESS ||
        number > std::numeric_limits<T>::max()) {
      return BadElement(context, value);
    }
    *out = static_cast<T>(number);
  } else {
    double number;
    if (value.get_double().get(number) != simdjson::SUCCESS) return BadElement(context, value);
    if constexpr (std::is_same_v<T, float>) {
      if (std::fabs(number) > FLT_MAX) return BadElement(context, value);
    }
    *out = static_cast<T>(number);
  }
  return absl::OkStatus();
}

// Fixed-size elements go straight into the tensor's storage.
template <typename T>
struct FixedSink {
  T* out;
  absl::Status Add(WalkContext& context, simdjson::ondemand::value& value) {
    if (context.index >= context.expected) return TooManyElements(context);
    BRIGADE_RETURN_IF_ERROR(ParseElement<T>(context, value, &out[context.index]));
    ++context.index;
    return absl::OkStatus();
  }
};

// BYTES elements are serialized (length prefix + bytes) into a growing string.
struct BytesSink {
  std::string* out;
  absl::Status Add(WalkContext& context, simdjson::ondemand::value& value) {
    if (context.index >= context.expected) return TooManyElements(context);
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) return BadElement(context, value);
    if (text.size() > std::numeric_limits<uint32_t>::max()) return BadElement(context, value);
    AppendSerializedString(text, out);
    ++context.index;
    return absl::OkStatus();
  }
};

template <typename Sink>
absl::Status Walk(simdjson::ondemand::value& value, int depth, WalkContext& context, Sink& sink) {
  json_type type;
  if (auto error = value.type().get(type)) return JsonError(context.label(), error);
  if (type != json_type::array) return sink.Add(context, value);
  if (depth > kMaxJsonDepth) {
    return absl::InvalidArgumentError(StrCat(context.label(), ": data is nested deeper than the ",
                                             kMaxJsonDepth, " levels JSON requests may use"));
  }
  simdjson::ondemand::array array;
  if (auto error = value.get_array().get(array)) return JsonError(context.label(), error);
  for (auto element_result : array) {
    simdjson::ondemand::value element;
    if (auto error = element_result.get(element)) return JsonError(context.label(), error);
    BRIGADE_RETURN_IF_ERROR(Walk(element, depth + 1, context, sink));
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Tensor> ReadFixed(simdjson::ondemand::value& data, Shape shape, WalkContext& context,
                                 int depth) {
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(context.dtype, std::move(shape)));
  FixedSink<T> sink{tensor.mutable_values<T>().data()};
  BRIGADE_RETURN_IF_ERROR(Walk(data, depth, context, sink));
  if (context.index != context.expected) {
    return absl::InvalidArgumentError(StrCat(context.label(), ": data has ", context.index,
                                             " elements but shape ", ShapeToString(tensor.shape()),
                                             " needs ", context.expected));
  }
  return tensor;
}

absl::StatusOr<Tensor> ReadBytes(simdjson::ondemand::value& data, Shape shape, WalkContext& context,
                                 int depth) {
  auto storage = std::make_shared<std::string>();
  BytesSink sink{storage.get()};
  BRIGADE_RETURN_IF_ERROR(Walk(data, depth, context, sink));
  if (context.index != context.expected) {
    return absl::InvalidArgumentError(StrCat(context.label(), ": data has ", context.index,
                                             " elements but shape ", ShapeToString(shape),
                                             " needs ", context.expected));
  }
  // The tensor borrows the string it was serialized into: no second copy.
  void* bytes = storage->data();
  const size_t byte_size = storage->size();
  return Tensor::View(DataType::kBytes, std::move(shape), bytes, byte_size, std::move(storage));
}

template <typename T, typename Emit>
void WriteEach(const Tensor& tensor, Emit emit) {
  for (const T value : tensor.values<T>()) emit(value);
}

}  // namespace

absl::StatusOr<Tensor> ReadJsonTensorData(simdjson::ondemand::value& data, DataType dtype,
                                          Shape shape, LazyText label, int depth,
                                          size_t json_bytes) {
  BRIGADE_ASSIGN_OR_RETURN(const int64_t count, ElementCount(shape));
  // Every element takes at least one byte of JSON: refuse impossible shapes before allocating.
  if (static_cast<uint64_t>(count) > json_bytes) {
    return absl::InvalidArgumentError(StrCat(label(), ": shape ", ShapeToString(shape), " needs ",
                                             count, " elements, more than the ", json_bytes,
                                             "-byte JSON body can hold"));
  }
  WalkContext context{label, dtype, count};
  switch (dtype) {
    case DataType::kBool:
      return ReadFixed<bool>(data, std::move(shape), context, depth);
    case DataType::kUint8:
      return ReadFixed<uint8_t>(data, std::move(shape), context, depth);
    case DataType::kUint16:
      return ReadFixed<uint16_t>(data, std::move(shape), context, depth);
    case DataType::kUint32:
      return ReadFixed<uint32_t>(data, std::move(shape), context, depth);
    case DataType::kUint64:
      return ReadFixed<uint64_t>(data, std::move(shape), context, depth);
    case DataType::kInt8:
      return ReadFixed<int8_t>(data, std::move(shape), context, depth);
    case DataType::kInt16:
      return ReadFixed<int16_t>(data, std::move(shape), context, depth);
    case DataType::kInt32:
      return ReadFixed<int32_t>(data, std::move(shape), context, depth);
    case DataType::kInt64:
      return ReadFixed<int64_t>(data, std::move(shape), context, depth);
    case DataType::kFp32:
      return ReadFixed<float>(data, std::move(shape), context, depth);
    case DataType::kFp64:
      return ReadFixed<double>(data, std::move(shape), context, depth);
    case DataType::kBytes:
      return ReadBytes(data, std::move(shape), context, depth);
    case DataType::kFp16:
    case DataType::kBf16:
      return absl::InvalidArgumentError(
          StrCat(label(), ": ", DataTypeName(dtype),
                 " has no JSON representation; send it as binary data (binary_data_size)"));
    case DataType::kInvalid:
      break;
  }
  return absl::InvalidArgumentError(StrCat(label(), ": no datatype"));
}

absl::Status WriteJsonTensorData(const Tensor& tensor, LazyText label, JsonWriter* writer,
                                 JsonDataSide side) {
  const bool input = side == JsonDataSide::kRequestInput;
  if (input && (tensor.dtype() == DataType::kFp16 || tensor.dtype() == DataType::kBf16 ||
                tensor.dtype() == DataType::kInvalid)) {
    return absl::InvalidArgumentError(StrCat(label(), ": ", DataTypeName(tensor.dtype()),
                                             " has no JSON representation; use binary inputs"));
  }
  if (tensor.dtype() == DataType::kBytes) {
    BRIGADE_ASSIGN_OR_RETURN(std::vector<std::string_view> elements, tensor.StringValues());
    for (size_t i = 0; i < elements.size(); ++i) {
      if (IsValidUtf8(elements[i])) continue;
      if (input) {
        return absl::InvalidArgumentError(
            StrCat(label(),
                   ": a BYTES element is not UTF-8 and cannot be sent as JSON; use binary "
                   "inputs"));
      }
      return absl::InvalidArgumentError(
          StrCat(label(), ": BYTES element ", i,
                 " is not UTF-8 and cannot be a JSON string; request the output with "
                 "\"binary_data\": true"));
    }
    writer->BeginArray();
    for (std::string_view element : elements) writer->String(element);
    writer->EndArray();
    return absl::OkStatus();
  }
  writer->BeginArray();
  const auto as_int = [writer](auto value) { writer->Int(static_cast<int64_t>(value)); };
  switch (tensor.dtype()) {
    case DataType::kBool:
      // By byte: a tensor built by a caller may hold bytes other than 0 and 1, which are not
      // valid bools to read as such.
      for (const std::byte b : tensor.bytes()) writer->Bool(b != std::byte{0});
      break;
    case DataType::kUint8:
      WriteEach<uint8_t>(tensor, as_int);
      break;
    case DataType::kUint16:
      WriteEach<uint16_t>(tensor, as_int);
      break;
    case DataType::kUint32:
      WriteEach<uint32_t>(tensor, as_int);
      break;
    case DataType::kUint64:
      WriteEach<uint64_t>(tensor, [writer](uint64_t value) { writer->Uint(value); });
      break;
    case DataType::kInt8:
      WriteEach<int8_t>(tensor, as_int);
      break;
    case DataType::kInt16:
      WriteEach<int16_t>(tensor, as_int);
      break;
    case DataType::kInt32:
      WriteEach<int32_t>(tensor, as_int);
      break;
    case DataType::kInt64:
      WriteEach<int64_t>(tensor, as_int);
      break;
    case DataType::kFp32:
      WriteEach<float>(tensor, [writer](float value) { writer->Float(value); });
      break;
    case DataType::kFp64:
      WriteEach<double>(tensor, [writer](double value) { writer->Double(value); });
      break;
    case DataType::kFp16:
      WriteEach<uint16_t>(tensor, [writer](uint16_t bits) { writer->Float(HalfToFloat(bits)); });
      break;
    case DataType::kBf16:
      WriteEach<uint16_t>(tensor,
                          [writer](uint16_t bits) { writer->Float(Bfloat16ToFloat(bits)); });
      break;
    case DataType::kBytes:
    case DataType::kInvalid:
      return absl::InternalError(StrCat(label(), ": tensor has no data type"));
  }
  writer->EndArray();
  return absl::OkStatus();
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1F;
  const uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  uint32_t out;
  if (exponent == 0x1F) {
    out = sign | 0x7F800000u | (mantissa << 13);  // inf / NaN
  } else {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  }
  float result;
  std::memcpy(&result, &out, sizeof(result));
  return result;
}

float Bfloat16ToFloat(uint16_t bits) {
  const uint32_t out = static_cast<uint32_t>(bits) << 16;
  float result;
  std::memcpy(&result, &out, sizeof(result));
  return result;
}

}  // namespace brigade::protocol::http
