"""Strided writes (GenericPlan::rewritesRuns): an op writing every other
element moves runs over the gaps, loaded, written into and stored back, not
element by element (a stick each). Kernel-level IR against numpy, and
PyTorch programs that produce such writes against eager."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernels import amap, close, generic, kernel, rounded, run
from spyre_mlir.inductor import counters


def interleave_kernel(rows, cols):
    """y[r, 2c] = x[r, c], y[r, 2c + 1] = -x[r, c]: two ops, each writing
    every other element of y."""
    n = rows * cols
    x_map = amap(2, f"d0 * {cols} + d1")
    ops = []
    for offset, body in ((0, "spyre.yield %a0 : f16"),
                         (1, "%n = arith.negf %a0 : f16\nspyre.yield %n : f16")):
        y_map = amap(2, f"d0 * {2 * cols} + d1 * 2 + {offset}")
        ops.append(generic((rows, cols), [("%x", (n,), "f16")], [("%y", (2 * n,), "f16")],
                           [x_map, y_map], body))
    return kernel("interleave", [("x", (n,), "f16"), ("y", (2 * n,), "f16")], "\n".join(ops))


@pytest.mark.parametrize("rows,cols", [(64, 64), (3, 1000), (512, 96), (1, 4096)])
def test_an_interleave_moves_runs_not_elements(rows, cols):
    x = np.random.default_rng(rows).standard_normal(rows * cols).astype(np.float16)
    out, result = run(interleave_kernel(rows, cols), {"arg0": x})
    xr = rounded(x).astype(np.float64).reshape(rows, cols)
    close(out["arg1"], np.stack([xr, -xr], -1).reshape(-1))
    cores = result.stats["cores"]
    written = sum(c["device_write_bytes"] for c in cores)
    # Each op stores runs spanning the whole output (a stick per element
    # each would be 64 times its bytes), plus a stick where a run starts
    # part-way into one.
    assert written <= 2 * 1.1 * 2 * x.nbytes + 2 * 128 * rows * len(cores)


def stored(x):
    """What storing x on the card may change: f16 becomes DLFloat16 (9
    fraction bits, one rounding); f32 moves as it is."""
    return 2 ** -10 * x.abs().max().item() if x.dtype == torch.float16 else 0


def compare(fn, *inputs, atol):
    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(fn, backend="spyre")(*inputs)
    assert dict(counters.fallbacks) == {}
    torch.testing.assert_close(actual, fn(*inputs), rtol=0, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_rotate_every_two_matches_eager(dtype):
    # GPT-J's and CodeGen's rotary embedding: pairs of columns swapped, one
    # negated, written interleaved.
    def rotate_every_two(x):
        return torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)
    x = torch.randn(2, 7, 4, 64).to(dtype)
    compare(rotate_every_two, x, atol=stored(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("conv", [
    dict(in_channels=8, out_channels=4, kernel_size=4, stride=2, padding=1),
    dict(in_channels=8, out_channels=4, kernel_size=2, stride=2),
    dict(in_channels=6, out_channels=4, kernel_size=3, stride=2, padding=1, output_padding=1),
], ids=["4x4_s2", "2x2_s2", "3x3_s2_output_padding"])
def test_a_transposed_convolution_matches_eager(dtype, conv):
    g = torch.Generator().manual_seed(0)
    m = nn.ConvTranspose2d(**conv).to(dtype).eval()
    x = torch.randn(2, conv["in_channels"], 9, 9, generator=g).to(dtype)
    with torch.no_grad():
        expected = m(x)
        compare(m, x, atol=8 * 2 ** -9 * expected.abs().max().item())


def test_pixel_shuffle_matches_eager():
    x = torch.randn(2, 16, 6, 7).half()
    compare(lambda x: F.pixel_shuffle(x, 2) * 2, x, atol=2 * stored(x))
