"""Check mode (SPYRE_CHECK=1 / state.check): every kernel also runs through
Inductor's CPU code, and the first one whose results differ raises, naming
the kernel and its source ops."""

import pytest
import torch

from spyre_mlir.inductor import check, counters, kernel_cache, state


def model(x, w, b):
    hidden = torch.relu(x @ w + b)
    return torch.softmax(hidden * 2.0, dim=-1).sum(0)


def args():
    torch.manual_seed(0)
    return torch.randn(16, 32), torch.randn(32, 24) * 0.2, torch.randn(24)


def compiled(monkeypatch, check_mode):
    monkeypatch.setattr(state, "check", check_mode)
    torch._dynamo.reset()
    counters.reset()
    return torch.compile(model, backend="spyre", options={"fx_graph_cache": False})


def test_check_mode_passes_a_correct_model(monkeypatch):
    out = compiled(monkeypatch, True)(*args())
    torch.testing.assert_close(out, model(*args()), rtol=2e-2, atol=2e-2)
    assert counters.kernels_run >= 2 and not counters.fallbacks


def _inject_wrong_kernel(monkeypatch):
    """Kernels that multiply now add: what a miscompiled kernel looks like."""
    real = kernel_cache.compile_cached
    monkeypatch.setattr(kernel_cache, "compile_cached",
                        lambda mlir, *rest: real(mlir.replace("arith.mulf", "arith.addf"), *rest))


def test_check_mode_names_an_injected_wrong_kernel(monkeypatch):
    _inject_wrong_kernel(monkeypatch)
    # Without check mode the wrong kernel goes unnoticed...
    out = compiled(monkeypatch, False)(*args())
    assert not torch.allclose(out, model(*args()), rtol=2e-2, atol=2e-2)
    # ... with it, the run stops at that kernel and names its ops.
    with pytest.raises(check.SpyreCheckError, match=r"kernel spyre_kernel_\d+ .*aten\.mul\.Tensor"):
        compiled(monkeypatch, True)(*args())


def test_difference_is_dlfloat16_aware():
    cpu = torch.linspace(-3, 3, 100)
    assert check.difference(cpu * (1 + 2 ** -9), cpu) is None
    assert "1 of 100" in check.difference(torch.where(cpu > 2.95, cpu + 1, cpu), cpu)
    assert check.difference(torch.tensor([1, 2]), torch.tensor([1, 2])) is None
    assert "1 of 2" in check.difference(torch.tensor([1, 3]), torch.tensor([1, 2]))
