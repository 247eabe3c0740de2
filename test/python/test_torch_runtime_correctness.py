"""Results of compiled models stay right where the runtime could go wrong:
writes to parameters that do not bump their version, values beyond
DLFloat16's range."""

import warnings

import numpy as np
import pytest
import torch

from spyre_mlir.inductor import DLFloat16OverflowWarning, counters, counting


def _write_mul_(p):
    p.data.mul_(2)


def _write_assign(p):
    p.data = p.data * 2


def _write_numpy(p):
    # numpy has no bfloat16: write through a same-sized integer view.
    raw = p.detach().view(torch.int16) if p.dtype == torch.bfloat16 else p.detach()
    array = raw.numpy()
    doubled = (p.detach().float() * 2).to(p.dtype)
    array[...] = (doubled.view(torch.int16) if p.dtype == torch.bfloat16 else doubled).numpy()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("write", [_write_mul_, _write_assign, _write_numpy],
                         ids=["data.mul_", "data=", "numpy"])
def test_writes_that_do_not_bump_the_version_are_seen(dtype, write):
    torch.manual_seed(0)
    linear = torch.nn.Linear(32, 16).to(dtype).eval()
    x = torch.randn(4, 32).to(dtype)
    torch._dynamo.reset()
    compiled = torch.compile(linear, backend="spyre")
    with torch.no_grad():
        compiled(x)  # converts (and may keep) the parameters
        version = linear.weight._version
        write(linear.weight)
        assert linear.weight._version == version  # the write is invisible to the version
        expected = linear(x).float()
        torch.testing.assert_close(compiled(x).float(), expected, rtol=2e-2, atol=2e-2)


def test_unchanged_parameters_are_not_converted_again():
    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 64).half().eval()
    x = torch.randn(8, 64).half()
    torch._dynamo.reset()
    compiled = torch.compile(linear, backend="spyre")
    with torch.no_grad():
        converted = []
        for _ in range(2):
            counters.reset()
            compiled(x)
            converted.append(counters.converted_bytes)
    assert converted[0] - converted[1] >= linear.weight.numel() * 2


@pytest.mark.parametrize("size", [1, 7, 8, 9, 4099])
def test_a_parameter_is_reused_only_while_every_byte_is_the_same(size):
    """binding._same_bytes compares eight bytes at a time, and the bytes past
    the last whole eight too; bitwise: -0.0 is not 0.0."""
    from spyre_mlir.inductor import binding
    a = np.arange(size, dtype=np.float16).view(np.uint16)
    assert binding._same_bytes(a, a.copy())
    for at in {0, size // 2, size - 1}:
        b = a.copy()
        b[at] ^= 0x8000  # the sign bit: 0.0 becomes -0.0
        assert not binding._same_bytes(a, b)
    assert not binding._same_bytes(a, a[:-1].copy())
    # Not 8-byte aligned (a view one element in): compared all the same.
    assert binding._same_bytes(a[1:], a[1:].copy())
    if size > 2:
        b = a.copy()
        b[1] ^= 1
        assert not binding._same_bytes(a[1:], b[1:])


@pytest.fixture
def _fresh_overflow_warning(monkeypatch):
    monkeypatch.setattr(counting, "_warned", set())
    counters.reset()


def test_bf16_values_beyond_dlfloat16_range(_fresh_overflow_warning):
    # bf16 has f32's exponent range; DLFloat16's largest value is about 4.3e9.
    x = torch.full((4, 8), 1e10, dtype=torch.bfloat16)
    x[0, 0] = -3e20
    torch._dynamo.reset()
    out = torch.compile(lambda x: x * 2, backend="spyre")(x)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out, x * 2, rtol=0, atol=0)
    assert counters.dlfloat16_overflows == 0


def test_f32_matmul_operands_beyond_dlfloat16_range_are_counted(_fresh_overflow_warning):
    a = torch.full((8, 16), 1e10)
    b = torch.ones(16, 4)
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b: a @ b, backend="spyre")
    with pytest.warns(DLFloat16OverflowWarning, match="counters.dlfloat16_overflows"):
        out = compiled(a, b)
    assert torch.isinf(out).all()  # the matrix unit sees DLFloat16 operands
    first = counters.dlfloat16_overflows
    assert first >= a.numel()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", DLFloat16OverflowWarning)  # once per process
        compiled(a, b)
    assert counters.dlfloat16_overflows == 2 * first


def test_values_within_range_are_not_counted(_fresh_overflow_warning):
    a, b = torch.randn(8, 16) * 1e4, torch.randn(16, 4)
    torch._dynamo.reset()
    out = torch.compile(lambda a, b: torch.softmax(a @ b, -1) * 1e9, backend="spyre")(a, b)
    assert torch.isfinite(out).all() and counters.dlfloat16_overflows == 0
