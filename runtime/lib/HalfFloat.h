//===- HalfFloat.h - bfloat16 and IEEE half to f32 -------------*- C++ -*-===//
//
// Private to the runtime's sources (and its tests): the exact widening of
// the 16-bit float formats oflow_rt_gemm_lowp takes (abi.h's OFLOW_DT_BF16,
// OFLOW_DT_F16) to f32. Portable bit manipulation, no F16C: every half
// (normal, subnormal, +-0, +-inf, NaN with its payload) and every bfloat16
// has exactly one f32 with the same value. And the narrowing back, rounded
// to nearest, ties to even, as the GPU's cvt.rn (__float2bfloat16_rn,
// __float2half_rn) does, so that the CPU reference of the fused attention
// (AttentionReference.h) rounds its GEMM operands exactly as the kernels do.
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

inline uint32_t bitsOfFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// f32 -> bfloat16, round to nearest even; overflow gives +-inf, NaN stays a
/// (quiet) NaN with the sign and the upper payload bits.
inline uint16_t floatToBf16(float f) {
  uint32_t bits = bitsOfFloat(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit carries into the kept half exactly
  // when the dropped half is above the midpoint, or at it with an odd result.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/// f32 -> IEEE binary16, round to nearest even (subnormal results too);
/// magnitudes from 65520 up give +-inf, NaN stays a quiet NaN.
inline uint16_t floatToF16(float f) {
  uint32_t bits = bitsOfFloat(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t x = bits & 0x7fffffffu;
  if (x > 0x7f800000u) // NaN: quiet, the payload's top bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  if (x >= 0x477ff000u) // >= 65520 (the midpoint above 65504, odd): inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t exp = x >> 23;
  // Round `value >> shift` to nearest even.
  auto roundShift = [](uint32_t value, uint32_t shift) {
    uint32_t kept = value >> shift;
    uint32_t rest = value & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (kept & 1u)))
      ++kept;
    return kept;
  };
  if (exp >= 113) { // normal half (a carry may reach the next exponent: right)
    uint32_t rebased = ((exp - 112) << 23) | (x & 0x7fffffu);
    return static_cast<uint16_t>(sign | roundShift(rebased, 13));
  }
  if (exp < 102) // below 2^-25 (half the smallest subnormal): +-0
    return sign;
  // Subnormal: the value in units of 2^-24 (may round up to the smallest
  // normal, 0x0400, which is the right encoding).
  uint32_t mant = (x & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | roundShift(mant, 126 - exp));
}

} // namespace oflow_rt::detail

#endif
