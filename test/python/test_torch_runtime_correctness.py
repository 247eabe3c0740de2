"""Results of compiled models stay right where the runtime could go wrong:
writes to parameters that do not bump their version, values beyond
DLFloat16's range."""

import warnings

import pytest
import torch

from spyre_mlir.inductor import counters, runtime


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
