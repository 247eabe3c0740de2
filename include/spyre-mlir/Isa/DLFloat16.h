//===- DLFloat16.h - the card's 16-bit floating-point format ---*- C++ -*-===//
//
// DLFloat16 as modelled here (docs/isa.md, "Numerics"): 1 sign bit, an
// exponent and a fraction whose widths come from the architecture
// description (6 and 9 on the card), IEEE-style bias, all-ones exponent for
// infinity (fraction 0) and NaN (fraction != 0), no subnormals: results that
// round below the smallest normal become a signed zero. Rounding from f32 is
// to nearest, ties to even. python/spyre_mlir/dlfloat16.py is the numpy
// reference the tests compare this against, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_ISA_DLFLOAT16_H
#define SPYRE_ISA_DLFLOAT16_H

#include <cstdint>
#include <cstring>
#include <memory>

namespace spyre {

class DLFloat16 {
public:
  DLFloat16(int exponentBits, int fractionBits)
      : fracBits(fractionBits), expMax((1u << exponentBits) - 1),
        bias((1 << (exponentBits - 1)) - 1), shift(23 - fractionBits),
        table(new float[1 << 16]) {
    // Decoding is a pure function of 16 bits: tabulate it once.
    for (uint32_t bits = 0; bits < (1u << 16); ++bits)
      table[bits] = decode(static_cast<uint16_t>(bits));
  }

  uint16_t fromFloat(float value) const {
    int64_t unused = 0;
    return encode<false>(value, unused);
  }

  /// Also counts in `overflows` a finite value that became an infinity.
  uint16_t fromFloat(float value, int64_t &overflows) const {
    return encode<true>(value, overflows);
  }

  float toFloat(uint16_t bits) const { return table[bits]; }

  /// Encodes `n` values to `out` (2 bytes each, any alignment) and returns
  /// how many finite values became infinities. The parameters are copied
  /// to locals so that the compiler keeps them in registers, instead of
  /// reloading them after every store through the byte pointer.
  int64_t fromFloat(const float *values, uint8_t *out, int64_t n) const {
    const DLFloat16 local(*this, /*withoutTable=*/true);
    int64_t overflows = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits = local.fromFloat(values[i], overflows);
      std::memcpy(out + 2 * i, &bits, 2);
    }
    return overflows;
  }

  /// Decodes `n` values stored at `bits`; branch-free so that the compiler vectorises it,
  /// which beats table lookups on long rows (matmul operands).
  void toFloat(const uint8_t *bits, float *out, int64_t n) const {
    const uint32_t fracMask = (1u << fracBits) - 1, exponentShift = fracBits;
    const uint32_t rebias = 127 - bias;
    for (int64_t i = 0; i < n; ++i) {
      uint16_t raw;
      std::memcpy(&raw, bits + 2 * i, 2); // LX addresses need not be aligned
      uint32_t b = raw;
      uint32_t sign = (b & 0x8000u) << 16;
      uint32_t e = (b >> exponentShift) & expMax;
      uint32_t m = b & fracMask;
      uint32_t normal = sign | ((e + rebias) << 23) | (m << shift);
      uint32_t special = sign | 0x7f800000u | (m ? 0x400000u : 0u);
      uint32_t u = e == 0 ? sign : (e == expMax ? special : normal);
      std::memcpy(out + i, &u, sizeof u);
    }
  }

  /// Rounds an f32 value to the nearest DLFloat16 value, as an f32.
  float round(float value) const { return toFloat(fromFloat(value)); }

private:
  /// Counting is compiled out of the plain conversion.
  template <bool Count>
  uint16_t encode(float value, int64_t &overflows) const {
    uint32_t u;
    std::memcpy(&u, &value, sizeof u);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t e8 = (u >> 23) & 0xffu;
    uint32_t m23 = u & 0x7fffffu;
    if (e8 == 0xffu) // inf or NaN
      return sign | (expMax << fracBits) | (m23 ? 1u << (fracBits - 1) : 0u);
    if (e8 == 0) // zero or f32 subnormal: far below our smallest normal
      return sign;
    uint32_t m = m23 >> shift;
    uint32_t rem = m23 & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) {
      if (++m == (1u << fracBits)) {
        m = 0;
        ++e8;
      }
    }
    int32_t e = static_cast<int32_t>(e8) - 127 + bias;
    if (e >= static_cast<int32_t>(expMax)) { // a finite value beyond the range
      if constexpr (Count)
        ++overflows;
      return sign | (expMax << fracBits);
    }
    if (e <= 0)
      return sign;
    return sign | (static_cast<uint32_t>(e) << fracBits) | m;
  }

  DLFloat16(const DLFloat16 &other, bool /*withoutTable*/)
      : fracBits(other.fracBits), expMax(other.expMax), bias(other.bias), shift(other.shift) {}

  float decode(uint16_t bits) const {
    uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    uint32_t e = (bits >> fracBits) & expMax;
    uint32_t m = bits & ((1u << fracBits) - 1);
    uint32_t u;
    if (e == 0)
      u = sign;
    else if (e == expMax)
      u = sign | 0x7f800000u | (m ? 0x400000u : 0u);
    else
      u = sign | ((e - bias + 127) << 23) | (m << shift);
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }

  int fracBits;
  uint32_t expMax;
  int32_t bias;
  int shift;
  std::shared_ptr<float[]> table;
};

} // namespace spyre

#endif // SPYRE_ISA_DLFLOAT16_H
