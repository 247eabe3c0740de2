"""Swin's windows against eager: an image cut into windows and merged back
(a plane loop of whole blocks, GenericPlan::chooseBlockPlane), and
torch.roll (its shifted windows), which runs as slices rather than as a
gather. Simulated cycles bound the kernels that were slow."""

import pytest
import torch

from spyre_mlir.inductor import counters


def merge(windows, shortcut):
    """Swin's window_reverse and residual: 64 windows of 7 x 7 positions
    back into a 56 x 56 image of 64 channels."""
    x = windows.view(1, 8, 8, 7, 7, 64).permute(0, 1, 3, 2, 4, 5).reshape(1, 56 * 56, 64)
    return shortcut + x


def partition(image):
    return image.view(1, 8, 7, 8, 7, 64).permute(0, 1, 3, 2, 4, 5).reshape(64, 49, 64) * 0.5


def partition_channel_first(image):
    """Swin's patch embedding to its first windows: a convolution's
    channel-first output read as positions x channels, cut into windows."""
    x = image.flatten(2).transpose(1, 2)
    return x.view(1, 8, 7, 8, 7, 64).permute(0, 1, 3, 2, 4, 5).reshape(64, 49, 64) * 0.5


def shifted_merge(windows, shortcut):
    """A shifted window block's merge: the image rolled back by half a
    window along both spatial dimensions."""
    x = windows.view(1, 8, 8, 7, 7, 64).permute(0, 1, 3, 2, 4, 5).reshape(1, 56, 56, 64)
    x = torch.roll(x, shifts=(3, 3), dims=(1, 2))
    return shortcut + x.reshape(1, 56 * 56, 64)


def _windows_and_shortcut(dtype):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(64, 7, 7, 64, generator=g).to(dtype),
            torch.randn(1, 56 * 56, 64, generator=g).to(dtype))


def compiled(fn, *args):
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(fn, backend="spyre")(*args)
    torch.testing.assert_close(out, fn(*args), rtol=1e-2, atol=1e-2)
    assert counters.fallbacks == {}
    return counters.simulated_cycles


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_windows_merge_in_tiles_of_whole_image_rows(dtype):
    # A tile of one 7 x 64 block per window made every core wait out the
    # memory's latency for each operand per block: 24.9k cycles in f16.
    cycles = compiled(merge, *_windows_and_shortcut(dtype))
    if dtype == torch.float16:
        assert cycles < 18_000


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_an_image_cut_into_windows(dtype):
    image = torch.randn(1, 56, 56, 64, generator=torch.Generator().manual_seed(1)).to(dtype)
    compiled(partition, image)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_a_channel_first_image_cut_into_windows_in_rows_of_windows(dtype):
    # Tiled window by window, each channel's 7 rows of a window moved 14
    # bytes a stick (55.7k cycles); a row of windows continues the image's
    # rows.
    image = torch.randn(1, 64, 56, 56, generator=torch.Generator().manual_seed(2)).to(dtype)
    cycles = compiled(partition_channel_first, image)
    if dtype == torch.float16:
        assert cycles < 20_000


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_shifted_windows_merge_on_the_card(dtype):
    # The roll as an index_select by (start + i) % size: a kernel the card
    # refused, run on the CPU (counted), 225k cycles with it.
    cycles = compiled(shifted_merge, *_windows_and_shortcut(dtype))
    if dtype == torch.float16:
        assert cycles < 60_000


@pytest.mark.parametrize("shape,shifts,dims", [
    ((1, 56, 56, 64), (3, 3), (1, 2)), ((1, 56, 56, 64), (-3, -3), (1, 2)),
    ((8, 16), (5,), ()), ((8, 16), (0,), (0,)), ((8, 16), (16,), (1,)),
    ((8, 16), (-17, 3), (1, -2)), ((3, 5, 7), (2, 9, -4), (0, 1, 2))])
def test_roll(shape, shifts, dims):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3)).half()
    cycles = compiled(lambda x: torch.roll(x, shifts, dims) + 1, x)
    if shape == (1, 56, 56, 64):
        # As a one-hot gather over each rolled dimension: 357k cycles.
        assert cycles < 60_000


def test_roll_backward():
    x = torch.randn(6, 10, generator=torch.Generator().manual_seed(4), requires_grad=True)
    weight = torch.randn(6, 10, generator=torch.Generator().manual_seed(5))

    def loss(x):
        return (torch.roll(x, (2, -3), (0, 1)) * weight).sum()

    expected = torch.autograd.grad(loss(x), x)[0]
    torch._dynamo.reset()
    counters.reset()
    actual = torch.autograd.grad(torch.compile(loss, backend="spyre")(x), x)[0]
    torch.testing.assert_close(actual, expected, rtol=1e-2, atol=1e-2)
    assert counters.fallbacks == {}
