//===- HalfFloat.h - bfloat16 and IEEE half to f32 -------------*- C++ -*-===//
//
// Private to the runtime's sources (and its tests): the exact widening of
// the 16-bit float formats oflow_rt_gemm_lowp takes (abi.h's OFLOW_DT_BF16,
// OFLOW_DT_F16) to f32. Portable bit manipulation, no F16C: every half
// (normal, subnormal, +-0, +-inf, NaN with its payload) and every bfloat16
// has exactly one f32 with the same value.
//
//===----------------------------------------------------------------------===//
#ifndef OFLOW_RT_LIB_HALFFLOAT_H
#define OFLOW_RT_LIB_HALFFLOAT_H

#include <cstdint>
#include <cstring>

namespace oflow_rt::detail {

inline float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// bfloat16 is the upper half of an f32.
inline float bf16ToFloat(uint16_t h) {
  return floatFromBits(static_cast<uint32_t>(h) << 16);
}

/// IEEE 754 binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
inline float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) // inf, or NaN keeping its payload (and quiet bit)
    return floatFromBits(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) // normal: rebias 15 -> 127
    return floatFromBits(sign | ((exp + 112) << 23) | (mant << 13));
  // +-0 or subnormal: mant * 2^-24, exact in f32 (mant < 2^10).
  float v = static_cast<float>(mant) * 0x1p-24f;
  return sign ? -v : v;
}

} // namespace oflow_rt::detail

#endif
