#ifndef BRIGADE_ENGINE_ONNX_KERNELS_HALF_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_HALF_H_

// IEEE half (fp16) and bfloat16 conversions in portable C++ (round to nearest even, NaN and
// infinity preserved, subnormals handled), for Cast and for reading 16-bit constants.

#include <bit>
#include <cstdint>

namespace brigade::engine::onnx {

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      // Subnormal half: normalize.
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t FloatToHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow → inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): shift the implicit-one mantissa into place, rounding.
    if (abs < 0x33000000u) return sign;
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14 + (112 - exponent + 1) - 1
    const uint32_t half = mantissa >> (shift);
    const uint32_t rem = mantissa & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    uint32_t rounded = half + ((rem > mid || (rem == mid && (half & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | rounded);
  }
  uint32_t value = abs - 0x38000000u;  // rebias exponent 127 → 15
  const uint32_t rem = value & 0x1fffu;
  value >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (value & 1u))) ++value;
  return static_cast<uint16_t>(sign | value);
}

inline float Bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

inline uint16_t FloatToBf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_HALF_H_
