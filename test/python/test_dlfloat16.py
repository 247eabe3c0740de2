"""DLFloat16 in the simulator (C++) against the numpy reference, bit for bit."""

import numpy as np
import pytest

from spyre_mlir import _simulator, simulator as sim
from spyre_mlir.dlfloat16 import DLFloat16

ARCH = sim.default_arch()
REF = DLFloat16.for_arch(ARCH)


def bits(f32):
    return np.asarray(f32, dtype=np.float32).view(np.uint32)


def test_decode_all_65536_patterns():
    patterns = np.arange(1 << 16, dtype=np.uint16)
    ours = _simulator.dl16_to_f32(patterns, ARCH)
    ref = REF.to_f32(patterns)
    np.testing.assert_array_equal(bits(ours), bits(ref))


def test_encode_all_65536_decoded_values():
    patterns = np.arange(1 << 16, dtype=np.uint16)
    values = REF.to_f32(patterns)
    np.testing.assert_array_equal(_simulator.dl16_from_f32(values, ARCH), REF.from_f32(values))
    # Canonical patterns (normal numbers, zeros, infinities) survive a round trip.
    e = (patterns.astype(np.int64) >> 9) & 63
    m = patterns.astype(np.int64) & 511
    canonical = (e != 0) & (e != 63) | ((e == 0) & (m == 0)) | ((e == 63) & (m == 0))
    np.testing.assert_array_equal(REF.from_f32(values)[canonical], patterns[canonical])


def test_encode_random_f32_bit_exact():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 1 << 32, size=1_000_000, dtype=np.uint64).astype(np.uint32)
    values = raw.view(np.float32)  # every exponent, NaNs and infinities included
    near = rng.standard_normal(200_000).astype(np.float32) * 10.0 ** rng.integers(-12, 12, 200_000)
    # Exact ties between two DLFloat16 values exercise round-half-even.
    ties = (REF.to_f32(rng.integers(0, 1 << 16, 100_000).astype(np.uint16)).view(np.uint32)
            | np.uint32(1 << 13)).view(np.float32)
    for x in (values, near.astype(np.float32), ties):
        np.testing.assert_array_equal(_simulator.dl16_from_f32(x, ARCH), REF.from_f32(x))


@pytest.mark.parametrize("value, expected", [
    (1.0, 0x3E00), (-2.0, 0xC000), (0.0, 0x0000), (-0.0, 0x8000),
    (np.inf, 0x7E00), (-np.inf, 0xFE00),
    (2.0 ** 31 * (1 + 511 / 512), 0x7DFF),      # largest finite
    (2.0 ** 32, 0x7E00),                         # overflow to infinity
    (2.0 ** -30, 0x0200),                        # smallest normal
    (2.0 ** -31, 0x0000),                        # no subnormals
    (1 + 1 / 1024, 0x3E00),                      # tie, rounds to even (down)
    (1 + 3 / 1024, 0x3E02),                      # tie, rounds to even (up)
])
def test_known_encodings(value, expected):
    assert int(_simulator.dl16_from_f32(np.float32(value), ARCH)) == expected
    assert int(REF.from_f32(np.float32(value))) == expected


def test_nan_stays_nan():
    out = _simulator.dl16_to_f32(_simulator.dl16_from_f32(np.float32(np.nan), ARCH), ARCH)
    assert np.isnan(out)


def test_ieee_fp16_loses_one_fraction_bit():
    # Every fp16 value with a 10th fraction bit set is not representable.
    h = np.arange(0x3C00, 0x4000, dtype=np.uint16).view(np.float16).astype(np.float32)
    rounded = REF.round(h)
    assert np.count_nonzero(rounded != h) == 512
    assert np.max(np.abs(rounded - h) / h) <= 2.0 ** -10


def test_fp16_conversion_matches_going_through_f32():
    halves = np.arange(1 << 16, dtype=np.uint16)
    direct = _simulator.dl16_from_f16(halves, ARCH)
    via_f32 = REF.from_f32(halves.view(np.float16).astype(np.float32))
    np.testing.assert_array_equal(direct, via_f32)
