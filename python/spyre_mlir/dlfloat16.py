"""numpy reference of DLFloat16 rounding, independent of the C++ simulator.

The tests compare the simulator against this bit for bit (docs/isa.md,
"Numerics"): 1 sign bit, the exponent and fraction widths of the architecture
description, IEEE-style bias, all-ones exponent for infinity (fraction 0) and
NaN, no subnormals (results below the smallest normal become a signed zero),
round to nearest even from f32.
"""

from __future__ import annotations

import numpy as np


class DLFloat16:
    def __init__(self, exponent_bits: int = 6, fraction_bits: int = 9):
        if exponent_bits + fraction_bits != 15:
            raise ValueError("DLFloat16 has 1 sign, exponent and fraction bits: 16 in all")
        self.fraction_bits = fraction_bits
        self.exp_max = (1 << exponent_bits) - 1
        self.bias = (1 << (exponent_bits - 1)) - 1
        self.shift = 23 - fraction_bits

    @classmethod
    def for_arch(cls, arch) -> "DLFloat16":
        return cls(arch.dlfloat16_exponent_bits, arch.dlfloat16_fraction_bits)

    def from_f32(self, values) -> np.ndarray:
        """f32 values to DLFloat16 bit patterns (uint16)."""
        u = np.require(values, np.float32, "C").view(np.uint32).astype(np.int64)
        sign = (u >> 16) & 0x8000
        e8 = (u >> 23) & 0xFF
        m23 = u & 0x7FFFFF
        m = m23 >> self.shift
        rem = m23 & ((1 << self.shift) - 1)
        half = 1 << (self.shift - 1)
        up = (rem > half) | ((rem == half) & ((m & 1) == 1))
        m = m + up
        carry = m == (1 << self.fraction_bits)
        m = np.where(carry, 0, m)
        e = e8 + carry - 127 + self.bias
        inf = sign | (self.exp_max << self.fraction_bits)
        out = sign | (np.clip(e, 0, self.exp_max) << self.fraction_bits) | m
        out = np.where(e >= self.exp_max, inf, out)
        out = np.where(e <= 0, sign, out)
        out = np.where(e8 == 0, sign, out)
        nan = inf | (1 << (self.fraction_bits - 1))
        out = np.where(e8 == 0xFF, np.where(m23 != 0, nan, inf), out)
        return out.astype(np.uint16)

    def to_f32(self, bits) -> np.ndarray:
        """DLFloat16 bit patterns (uint16) to f32 values (exact)."""
        b = np.asarray(bits, dtype=np.uint16).astype(np.int64)
        sign = (b & 0x8000) << 16
        e = (b >> self.fraction_bits) & self.exp_max
        m = b & ((1 << self.fraction_bits) - 1)
        normal = sign | ((e - self.bias + 127) << 23) | (m << self.shift)
        special = sign | 0x7F800000 | np.where(m != 0, 0x400000, 0)
        u = np.where(e == 0, sign, np.where(e == self.exp_max, special, normal))
        return u.astype(np.uint32).view(np.float32)

    def round(self, values) -> np.ndarray:
        """Rounds f32 values to the nearest DLFloat16 value, as f32."""
        return self.to_f32(self.from_f32(values))
