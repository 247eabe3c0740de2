"""An eval BatchNorm (or any per-channel affine map) after a convolution,
folded into the convolution's kernel (inductor/conv_affine.py): spyre.conv2d
multiplies its f32 sums by a per-channel scale before its bias, so that the
normalization and a following ReLU leave the cores with the convolution,
not in a pass of their own. Against eager, in f16 and f32."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import conv_affine, counters
from test_torch_ops import tolerance


def _conv_bn_relu(channels, side, dtype):
    torch.manual_seed(0)
    block = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                          nn.BatchNorm2d(channels), nn.ReLU()).eval()
    bn = block[1]
    bn.running_mean.uniform_(-0.5, 0.5)
    bn.running_var.uniform_(0.5, 2.0)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.2, 0.2)
    return block.to(dtype), torch.randn(1, channels, side, side).to(dtype)


def _scaled(kernels):
    return [k for k in kernels if "spyre.conv2d" in k and " scale(" in k]


@torch._inductor.config.patch(force_disable_caches=True)  # the same graph compiles twice
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_eval_batchnorm_and_relu_run_in_the_convolution(dtype, kernels):
    block, x = _conv_bn_relu(64, 56, dtype)
    actual, expected = compiled_and_eager(block, x)
    torch.testing.assert_close(actual, expected, **tolerance(dtype, 64 * 9))
    folded = _scaled(kernels)
    assert len(folded) == 1 and " relu" in folded[0]
    # The convolution and the kernel of the scale and bias vectors.
    assert counters.kernels_run == 2
    cycles = counters.simulated_cycles

    kernels.clear()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(conv_affine, "_pays", lambda out: False)
        unfolded, _ = compiled_and_eager(block, x)
    assert not _scaled(kernels)
    torch.testing.assert_close(unfolded, expected, **tolerance(dtype, 64 * 9))
    assert cycles < counters.simulated_cycles


def test_a_small_activation_keeps_its_own_pass(kernels):
    # The vectors' kernel would cost more than the pass over 16 x 8 x 8.
    block, x = _conv_bn_relu(16, 8, torch.float16)
    actual, expected = compiled_and_eager(block, x)
    torch.testing.assert_close(actual, expected, **tolerance(torch.float16, 16 * 9))
    assert not _scaled(kernels)


def test_any_per_channel_affine_map_folds(kernels):
    torch.manual_seed(1)
    x, w = torch.randn(1, 32, 56, 56).half(), torch.randn(32, 32, 3, 3).half()
    g, h = torch.rand(32) + 0.5, torch.randn(32)

    def fn(x, w, g, h):
        y = F.conv2d(x, w, padding=1).float()
        return ((y * g.view(32, 1, 1) - 0.25) * 0.5 + h.view(1, 32, 1, 1)).half()
    actual, expected = compiled_and_eager(fn, x, w, g, h)
    torch.testing.assert_close(actual, expected, **tolerance(torch.float16, 32 * 9))
    assert len(_scaled(kernels)) == 1


def test_operands_that_vary_within_a_channel_are_not_folded(kernels):
    torch.manual_seed(2)
    x, w = torch.randn(1, 32, 56, 56).half(), torch.randn(32, 32, 3, 3).half()
    t = torch.rand(1, 1, 56, 56).half()
    actual, expected = compiled_and_eager(lambda x, w, t: F.conv2d(x, w, padding=1) * t, x, w, t)
    torch.testing.assert_close(actual, expected, **tolerance(torch.float16, 32 * 9))
    assert not _scaled(kernels)
