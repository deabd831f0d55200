//===- HalfFloat.h - The 2-byte floats as the kernels read them -*- C++ -*-===//
//
// The exact widening of bfloat16 and IEEE binary16 bits to the float32 they
// denote, and the element formats the CPU runtime's GEMM packs its operands
// from: float32 as it is, or 2-byte floats widened as they are packed.
// Branch-free, so a loop of them compiles to vector code.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HALFFLOAT_H
#define REMAT_RUNTIME_HALFFLOAT_H

#include <cstdint>
#include <cstring>

namespace remat::runtime {

inline float bitsToFloat(uint32_t word) {
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

inline uint32_t floatToBits(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  return word;
}

/// bfloat16 bits as the float they denote (exact).
inline float bf16ToFloat(uint16_t bits) {
  return bitsToFloat(uint32_t(bits) << 16);
}

/// IEEE binary16 bits as the float they denote (exact): subnormals
/// normalized, infinities kept, NaNs kept with their payload (a signaling
/// NaN stays signaling). The exponent is rebiased by integer addition; a
/// subnormal's is then one step too low and its implicit bit one too many,
/// which subtracting 2^-14 (exact: the difference is m * 2^-24) takes off.
inline float f16ToFloat(uint16_t bits) {
  constexpr uint32_t kExponent = uint32_t(0x7c00) << 13;
  uint32_t magnitude = uint32_t(bits & 0x7fff) << 13;
  uint32_t exponent = magnitude & kExponent;
  uint32_t rebiased = magnitude + (uint32_t(127 - 15) << 23);
  uint32_t special = rebiased + (uint32_t(128 - 16) << 23);
  float subnormal = bitsToFloat(rebiased + (uint32_t(1) << 23)) -
                    bitsToFloat(uint32_t(127 - 14) << 23);
  uint32_t word = exponent == kExponent ? special
                  : exponent == 0       ? floatToBits(subnormal)
                                        : rebiased;
  return bitsToFloat(word | (uint32_t(bits & 0x8000) << 16));
}

/// How a kernel reads an operand stored as `Element`s: `load` is the float
/// each denotes, exactly, so a product of 2-byte operands accumulates what
/// the same product of their float32 copies does.
struct Float32Format {
  using Element = float;
  static float load(float value) { return value; }
};
struct BFloat16Format {
  using Element = uint16_t;
  static float load(uint16_t bits) { return bf16ToFloat(bits); }
};
struct Float16Format {
  using Element = uint16_t;
  static float load(uint16_t bits) { return f16ToFloat(bits); }
};

} // namespace remat::runtime

#endif // REMAT_RUNTIME_HALFFLOAT_H
