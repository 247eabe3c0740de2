"""Grid sampling (grid_sampler_2d, grid_sampler_3d, F.grid_sample) and
antialiased bilinear resizing with torch.compile(backend="spyre") against
eager (sampling.py): every interpolation and padding mode, align_corners,
grids with NaN, infinities, huge values and exact reflection boundaries,
inputs with NaN and infinities; what eager's kernels do oddly or the budget
does not allow stays on the CPU, counted."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager

NAN, INF = math.nan, math.inf
aten = torch.ops.aten


def check(fn, *args, on_card=True):
    actual, expected = compiled_and_eager(fn, *args, on_card=on_card)
    torch.testing.assert_close(actual, expected, equal_nan=True)


def grid(shape, seed=0):
    """Coordinates in and around [-1, 1], and the values the kernels treat
    specially: non-finite, beyond int32, the corners."""
    torch.manual_seed(seed)
    g = torch.randn(*shape) * 1.5
    special = torch.tensor([NAN, INF, -INF, 1e10, -3e9, 1e3, -1e5, 1.0, -1.0, 0.0, 0.5, 2.0 ** 31,
                            7.0, -7.0, 3.0])
    g.view(-1)[torch.randperm(g.numel())[:special.numel()]] = special
    return g


def image(shape, seed=1):
    torch.manual_seed(seed)
    a = torch.randn(*shape)
    a.view(-1)[0] = INF  # what masked-off corners would multiply in
    a.view(-1)[-1] = NAN
    return a


@pytest.mark.parametrize("mode,padding", list(itertools.product(range(3), range(3))))
def test_grid_sampler_2d(mode, padding):
    a, g = image((2, 3, 5, 7)), grid((2, 4, 6, 2))
    align = (mode + padding) % 2 == 1  # both for every mode and every padding
    check(lambda a, g: torch.grid_sampler_2d(a, g, mode, padding, align), a, g)


@pytest.mark.parametrize("mode,padding", list(itertools.product(range(2), range(3))))
def test_grid_sampler_3d(mode, padding):
    a, g = image((2, 2, 3, 4, 5)), grid((2, 3, 4, 2, 3))
    align = (mode + padding) % 2 == 1
    check(lambda a, g: torch.grid_sampler_3d(a, g, mode, padding, align), a, g)


@pytest.mark.parametrize("mode,align", list(itertools.product(("bilinear", "bicubic"),
                                                               (False, True))))
def test_reflection_boundaries(mode, align):
    """Coordinates at exact multiples of the reflection span, where a
    rounded quotient would flip a reflection's parity."""
    torch.manual_seed(2)
    g = torch.randint(-40, 41, (1, 5, 8, 2)).float() / 4
    check(lambda a, g: F.grid_sample(a, g, mode, "reflection", align), image((1, 2, 6, 41)), g)


def test_reflection_boundaries_3d():
    torch.manual_seed(2)
    g3 = torch.randint(-40, 41, (1, 2, 3, 4, 3)).float() / 4
    check(lambda a, g: F.grid_sample(a, g, "bilinear", "reflection", True), image((1, 1, 3, 4, 6)),
          g3)


def test_grid_sample_single_pixel():
    """Dimensions of size 1: the reflection span is empty with align_corners."""
    for padding, align in itertools.product(("zeros", "border", "reflection"), (False, True)):
        check(lambda a, g: F.grid_sample(a, g, "bilinear", padding, align), image((1, 2, 1, 1)),
              grid((1, 3, 3, 2)))


def test_grid_sample_beyond_budget_falls_back():
    a, g = torch.randn(1, 1, 64, 64), torch.rand(1, 128, 128, 2) * 2 - 1
    check(lambda a, g: F.grid_sample(a, g, "bicubic", align_corners=False), a, g, on_card=False)


def test_grid_sample_16_bit_falls_back():
    # (Finite coordinates: Inductor's own decomposition, which the CPU
    # then runs, is not eager's for non-finite ones.)
    # It computes in f32 and rounds once, eager's 16-bit kernel at each step.
    a, g = torch.randn(1, 2, 4, 5).half(), (torch.rand(1, 3, 3, 2) * 3 - 1.5).half()
    actual, expected = compiled_and_eager(lambda a, g: F.grid_sample(a, g, align_corners=False),
                                          a, g, on_card=False)
    torch.testing.assert_close(actual, expected, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("args", [
    ([3, 3], False, None, None),  # downscaling: wide windows
    ([17, 18], False, 1.7, 0.9),  # scales that give the output size
    ([5, 30], True, None, None),
    ([1, 7], False, None, None),
    ([7, 20], False, None, None),  # the width unchanged: no pass along it
])
def test_upsample_bilinear2d_aa(args):
    x = image((2, 3, 10, 20))
    check(lambda x: aten._upsample_bilinear2d_aa(x, *args), x)


def test_interpolate_antialias():
    x = image((1, 2, 9, 13))
    check(lambda x: F.interpolate(x, scale_factor=(0.5, 1.5), mode="bilinear", antialias=True),
          x)
    check(lambda x: F.interpolate(x, size=(4, 5), mode="bilinear", antialias=True,
                                  align_corners=True), x)


@pytest.mark.parametrize("args", [
    ([3, 3], False, 1.7, 0.9),  # scales that do not give the output size
    ([13, 1], True, None, None),  # one column: eager copies the first row
])
def test_upsample_bilinear2d_aa_declined(args):
    x = image((1, 2, 4, 24))
    check(lambda x: aten._upsample_bilinear2d_aa(x, *args), x, on_card=False)
