"""Complex values inside a graph run on the card as pairs of reals
(complex_values.py): rotary embeddings written with view_as_complex, a
complex product and view_as_real (Meta's Llama code, Llama 4, DeepSeek-V2),
against eager, with their CPU fallbacks counted."""

import pytest
import torch

from spyre_mlir.inductor import counters


def compiled(fn, *args):
    torch._dynamo.reset()
    counters.reset()
    return torch.compile(fn, backend="spyre")(*args)


def frequencies(dim: int, end: int, theta: float = 10000.0) -> torch.Tensor:
    inverse = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    return torch.polar(torch.ones(end, dim // 2), torch.outer(torch.arange(end), inverse).float())


def rotary(xq, xk, freqs_cis):
    # Meta's Llama apply_rotary_emb.
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    f = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    return (torch.view_as_real(xq_ * f).flatten(3).type_as(xq),
            torch.view_as_real(xk_ * f).flatten(3).type_as(xk))


def rotary_with_frequencies(xq, xk):
    return rotary(xq, xk, frequencies(xq.shape[-1], xq.shape[1]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_rotary_embedding_through_complex_values_on_card(dtype):
    g = torch.Generator().manual_seed(0)
    xq, xk = torch.randn(2, 8, 4, 16, generator=g).to(dtype), torch.randn(2, 8, 2, 16, generator=g).to(dtype)
    actual = compiled(rotary_with_frequencies, xq, xk)
    assert not counters.fallbacks, dict(counters.fallbacks)
    assert counters.kernels_run > 0
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    for a, e in zip(actual, rotary_with_frequencies(xq, xk)):
        torch.testing.assert_close(a, e, rtol=tol, atol=tol)


def test_a_complex_input_is_viewed_as_reals_on_the_host():
    # The frequencies as a complex buffer of the model: its real view is the
    # one op left to the host (counted); the products run on the card.
    g = torch.Generator().manual_seed(1)
    xq, xk = torch.randn(1, 6, 2, 8, generator=g), torch.randn(1, 6, 2, 8, generator=g)
    freqs_cis = frequencies(8, 6)
    actual = compiled(rotary, xq, xk, freqs_cis)
    assert dict(counters.fallbacks) == {"aten.view_as_real.default": 1}
    for a, e in zip(actual, rotary(xq, xk, freqs_cis)):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)


def _views_and_arithmetic(re, im, scale):
    z = torch.complex(re, im)              # (4, 6)
    w = z.unsqueeze(0).transpose(1, 2)     # (1, 6, 4)
    w = (w * scale + w * w)[..., 1:3]      # real tensor, complex product, slice
    return torch.view_as_real(w.permute(2, 0, 1) - z[:2].unsqueeze(1)) * 0.5


def test_complex_views_products_and_sums_on_card():
    g = torch.Generator().manual_seed(2)
    args = torch.randn(4, 6, generator=g), torch.randn(4, 6, generator=g), \
        torch.rand(6, 1, generator=g)
    actual = compiled(_views_and_arithmetic, *args)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, _views_and_arithmetic(*args), rtol=1e-5, atol=1e-5)


def test_a_complex_output_or_op_the_pass_lacks_stays_on_the_cpu():
    # All or nothing: a complex result, or a complex op without a real form
    # here (conj), leaves the graph's complex ops to the CPU, counted.
    x = torch.randn(3, 4, 2)
    for fn in (lambda x: torch.view_as_complex(x) * 2,
               lambda x: torch.view_as_real(torch.view_as_complex(x).conj_physical()) + 1):
        actual = compiled(fn, x)
        assert counters.fallbacks, "expected CPU fallbacks"
        torch.testing.assert_close(actual, fn(x))


FOURIER = {
    # FNet's token mixing: the real part of a 2-D transform of real input.
    "fnet_mixing": lambda x: torch.fft.fft(torch.fft.fft(x, dim=-1), dim=-2).real,
    "rfft_ortho_magnitude": lambda x: torch.fft.rfft(x, norm="ortho").abs(),
    "fft2_then_ifft2": lambda x: torch.fft.ifft2(torch.fft.fft2(x) * 2).real,
    # Of an odd length, without the zero frequency: a real input's real-valued
    # bins have a phase of +-pi by the sign of a zero imaginary part.
    "phase": lambda x: torch.fft.fft(x[:, :11], dim=1)[:, 1:].angle(),
}


@pytest.mark.parametrize("name", sorted(FOURIER))
def test_fourier_transforms_on_card(name):
    # As products with cosine and sine matrices, summed in f32 on the
    # vector unit: as precise as the CPU's FFT up to the order of additions.
    fn = FOURIER[name]
    x = torch.randn(2, 12, 10, generator=torch.Generator().manual_seed(3))
    actual = compiled(fn, x)
    assert not counters.fallbacks, dict(counters.fallbacks)
    torch.testing.assert_close(actual, fn(x), rtol=1e-4, atol=1e-4 * fn(x).abs().max().item())


def test_a_transform_beyond_the_budget_stays_on_the_cpu(monkeypatch):
    from spyre_mlir.inductor import complex_values
    monkeypatch.setattr(complex_values, "MAX_DFT_PRODUCTS", 100)
    x = torch.randn(4, 16)
    actual = compiled(FOURIER["rfft_ortho_magnitude"], x)
    assert "aten._fft_r2c.default" in counters.fallbacks
    torch.testing.assert_close(actual, FOURIER["rfft_ortho_magnitude"](x))
