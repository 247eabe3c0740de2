"""Convolutions with torch.compile(backend="spyre") against eager, zero CPU
fallbacks: 2-D ones (strided, dilated, padded, grouped, depthwise) as one
implicit-GEMM kernel (spyre.conv2d), one image's 1x1 ones as a product;
1-D and 3-D, transposed (stride, padding, output padding, dilation, groups)
and those needing gradients as im2col and a product; the backward of a 2-D
one as products and convolutions (stride, padding, dilation, groups)."""

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import convolution, counters
from test_torch_ops import tolerance


def check(fn, *args, depth):
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        actual = torch.compile(fn, backend="spyre")(*args)
        expected = fn(*args)
    assert dict(counters.fallbacks) == {}
    torch.testing.assert_close(actual, expected, **tolerance(args[0].dtype, depth))


def inputs(x_shape, w_shape, dtype=torch.float32, out_channels=None):
    torch.manual_seed(0)
    x = torch.randn(*x_shape).to(dtype)
    w = torch.randn(*w_shape).to(dtype)
    b = torch.randn(out_channels or w_shape[0]).to(dtype)
    return x, w, b


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_conv1d(dtype):
    x, w, b = inputs((2, 4, 17), (6, 4, 3), dtype)
    check(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), x, w, b, depth=12)
    check(lambda x, w: F.conv1d(x, w), x, w, depth=12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_conv1d_of_a_long_kernel_is_one_implicit_gemm_kernel(dtype):
    """HuBERT's positional convolution in small: 32 taps over 9 positions,
    grouped; its im2col matrix would move more bytes than its input, weights
    and output, so it runs as a 2-D convolution of one row (its 768
    channels over 49 frames with 128 taps: 630.9 -> 122.3 us)."""
    x, w, b = inputs((1, 16, 9), (16, 4, 32), dtype)
    check(lambda x, w, b: F.conv1d(x, w, b, padding=16, groups=4), x, w, b, depth=4 * 32)
    assert set(counters.cycles_per_kernel) == {"conv2d"}
    # A short kernel widening the channels (Whisper's first convolution, 80
    # -> 768 channels, 3 taps) keeps im2col and its product.
    x, w, b = inputs((1, 8, 300), (64, 8, 3), dtype)
    check(lambda x, w, b: F.conv1d(x, w, b, padding=1), x, w, b, depth=8 * 3)
    assert "conv2d" not in counters.cycles_per_kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("out_channels,stride", [(32, 1), (64, 1), (32, 2)])
def test_depthwise_conv1d_is_one_implicit_gemm_kernel(dtype, out_channels, stride):
    """Mamba's causal convolution (depthwise, 4 taps) and ConvBERT's: one
    spyre.conv2d of a one-row image, not im2col's product per channel
    (Mamba's over 8192 channels and 128 positions: 858.0 -> 67.0 us)."""
    x, w, b = inputs((2, 32, 40), (out_channels, 1, 4), dtype)
    check(lambda x, w, b: F.conv1d(x, w, b, stride=stride, padding=3, groups=32)[..., :40],
          x, w, b, depth=4)
    assert "conv2d" in counters.cycles_per_kernel


def test_conv3d():
    x, w, b = inputs((1, 3, 5, 6, 7), (4, 3, 2, 3, 2))
    check(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1), x, w, b, depth=36)
    # Unit strides: the columns are runs of the flattened padded input.
    check(lambda x, w, b: F.conv3d(x, w, b, padding=(0, 1, 1)), x, w, b, depth=36)


# Found by OpInfo's every-sample run: padding="valid" reaches aten.convolution
# as one value for every spatial dimension, which the 2-D kernel and the 1-D
# and 3-D im2col read as one per dimension (IndexError at compile).
@pytest.mark.parametrize("conv,x_shape,w_shape", [
    (F.conv1d, (1, 4, 10), (2, 4, 3)), (F.conv2d, (1, 4, 5, 5), (1, 4, 2, 3)),
    (F.conv3d, (1, 2, 3, 4, 10), (1, 2, 1, 2, 4))], ids=["1d", "2d", "3d"])
def test_valid_padding_given_as_one_value(conv, x_shape, w_shape):
    x, w, b = inputs(x_shape, w_shape)
    check(lambda x, w, b: conv(x, w, b, stride=2, padding="valid"), x, w, b, depth=24)
    check(lambda x, w, b: conv(x, w, b, padding="valid", dilation=1), x, w, b, depth=24)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_dilated_and_unpadded_conv2d(dtype):
    """Unit strides with dilation and several images: the last taps' runs
    reach past the padded image and the padded width's extra columns are
    dropped."""
    x, w, b = inputs((3, 5, 9, 11), (7, 5, 3, 2), dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, dilation=(2, 3), padding=(2, 1)), x, w, b, depth=30)
    check(lambda x, w: F.conv2d(x, w), x, w, depth=30)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("x_shape,dilation", [((2, 4, 1, 1), 2), ((2, 4, 4, 1), 2),
                                              ((2, 4, 1, 1), 3), ((2, 4, 3, 2), 3)])
def test_dilated_taps_reaching_past_a_narrow_image(dtype, x_shape, dilation):
    """Padding = dilation keeps the width; the outer taps of an image
    narrower than the dilation read only padding. Zeroing the positions
    they read past a packed row started before it when the reach exceeded
    the row (a fuzzed network's 1 x 1 image: the result was off by its
    range)."""
    x, w, b = inputs(x_shape, (8, 4, 3, 3), dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, dilation=dilation, padding=dilation), x, w, b,
          depth=36)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_grouped_and_depthwise_conv2d(dtype):
    x, w, b = inputs((2, 6, 7, 8), (9, 2, 3, 3), dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=3), x, w, b, depth=18)
    x, w, b = inputs((2, 6, 7, 8), (6, 1, 3, 3), dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, stride=2, groups=6), x, w, b, depth=9)


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2), dict(stride=2, padding=1),
                                    dict(stride=3, padding=1, output_padding=2),
                                    dict(dilation=2, padding=2), dict(stride=2, groups=2)])
def test_conv_transpose1d(kwargs):
    x, w, b = inputs((2, 4, 9), (4, 3, 3), out_channels=3 * kwargs.get("groups", 1))
    check(lambda x, w, b: F.conv_transpose1d(x, w, b, **kwargs), x, w, b, depth=12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_conv_transpose2d_and_3d(dtype):
    x, w, b = inputs((2, 4, 5, 6), (4, 2, 3, 2), dtype, out_channels=2)
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0),
                                             output_padding=(1, 0)), x, w, b, depth=24)
    x, w, b = inputs((1, 2, 3, 4, 3), (2, 3, 2, 2, 2), dtype, out_channels=3)
    check(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2), x, w, b, depth=16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("w_shape, kwargs", [
    ((7, 5, 3, 2), dict(dilation=(2, 1), padding=(2, 1))),
    ((7, 5, 3, 2), dict(padding=(0, 3))),
    # No padding columns: each channel's rows load (and, with one column
    # tap, store) as one run.
    ((7, 5, 3, 2), dict(dilation=(2, 1), padding=(2, 0))),
    ((7, 5, 3, 1), dict(padding=(1, 0))),
    ((7, 5, 1, 1), dict()),
], ids=["dilated", "wide-padding", "rows-padded", "column-kernel", "pointwise"])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_of_stride_1_is_one_implicit_gemm_kernel(dtype, w_shape, kwargs, bias):
    """No im2col kernel: one spyre.conv2d per call, padding, dilation,
    several images, non-square kernels, with or without bias."""
    x, w, b = inputs((2, 5, 9, 11), w_shape, dtype)
    depth = w_shape[1] * w_shape[2] * w_shape[3]
    if bias:
        check(lambda x, w, b: F.conv2d(x, w, b, **kwargs), x, w, b, depth=depth)
    else:
        check(lambda x, w: F.conv2d(x, w, **kwargs), x, w, depth=depth)
    assert counters.kernels_run == 1
    assert set(counters.cycles_per_kernel) == {"conv2d"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("x_shape, w_shape, kwargs", [
    ((2, 5, 9, 11), (8, 5, 3, 3), dict(stride=2, padding=1)),
    ((2, 5, 9, 11), (8, 5, 1, 1), dict(stride=2)),
    ((1, 3, 16, 16), (8, 3, 7, 7), dict(stride=2, padding=3)),
    ((2, 5, 9, 11), (7, 5, 3, 2), dict(stride=(2, 1), padding=(1, 0))),
    ((2, 5, 9, 11), (7, 5, 3, 3), dict(stride=(1, 3), dilation=2, padding=2)),
    ((2, 6, 9, 11), (6, 1, 3, 3), dict(stride=2, padding=1, groups=6)),
], ids=["3x3", "1x1-shortcut", "7x7-stem", "rows-only", "columns-dilated", "depthwise"])
def test_strided_conv2d_is_one_implicit_gemm_kernel(dtype, x_shape, w_shape, kwargs):
    """Strides gather every tap's positions row by row on the card: one
    spyre.conv2d, no im2col kernel."""
    x, w, b = inputs(x_shape, w_shape, dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, **kwargs), x, w, b,
          depth=w_shape[1] * w_shape[2] * w_shape[3])
    assert counters.kernels_run == 1
    assert set(counters.cycles_per_kernel) == {"conv2d"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_patch_embedding_copies_each_kernel_row_of_a_channel_at_once(dtype):
    """A 3-channel image's disjoint 16 x 16 patches (ViT's, CLIP's patch
    embedding): the SFU gathers each channel's 16 taps of a kernel row for an
    output row in one copy, not each tap's 3 channels: fewer copies than
    taps x output rows (CLIP's 32 x 32 patches on 224 x 224: 300.2 -> 107.7
    us simulated)."""
    import numpy as np
    from spyre_mlir import simulator as sim
    from spyre_mlir.inductor.kernel_cache import compile_cached

    x, w, b = inputs((1, 3, 64, 64), (64, 3, 16, 16), dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, stride=16), x, w, b, depth=3 * 16 * 16)
    assert set(counters.cycles_per_kernel) == {"conv2d"}
    program = compile_cached(convolution.kernel_mlir((1, 3, 64, 64), (64, 3, 16, 16), True, dtype,
                                                     (16, 16), (0, 0), (1, 1)))
    zeros = {buf["name"]: np.zeros(tuple(buf["shape"]), np.float32)
             for _, buf in sim.host_buffers(program) if buf["kind"] != sim.BufferKind.output}
    stats = sim.run(program, zeros).stats["cores"]
    copies = sum(core["engines"]["sfu"]["instructions"] for core in stats)
    assert copies < 16 * 16 * 4, copies  # taps x output rows


class _Pointwise(torch.nn.Module):
    """A 1x1 convolution, its BatchNorm, a residual and a ReLU (ResNet's
    projections, MobileNet's pointwise layers)."""

    def __init__(self, channels, out_channels, residual):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, out_channels, 1)
        self.norm = torch.nn.BatchNorm2d(out_channels)
        self.norm.running_mean.uniform_(-1, 1)
        self.norm.running_var.uniform_(0.5, 2)
        self.residual = residual

    def forward(self, x, r):
        y = self.norm(self.conv(x))
        return torch.relu(y + r if self.residual else y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("channels, out_channels, side, kernels", [
    (12, 20, 9, 1),   # the BatchNorm in the epilogue
    # fp16: folded (conv_affine decides by cost), its scale multiplying the
    # weight (a kernel), its bias the product's
    (16, 96, 56, {torch.float16: 2, torch.float32: 1}),
], ids=["small", "folded"])
def test_pointwise_conv2d_of_one_image_is_a_product(dtype, layout, residual, channels,
                                                    out_channels, side, kernels):
    """One image's 1x1 convolution of stride 1 without padding is the
    product (Co x C) @ (C x H*W): the matmul kernel, with the bias, the
    BatchNorm, the residual and the ReLU in its epilogue, the result in
    eager's layout."""
    torch.manual_seed(0)
    module = _Pointwise(channels, out_channels, residual).to(dtype).eval()
    x = torch.randn(1, channels, side, side).to(dtype)
    r = torch.randn(1, out_channels, side, side).to(dtype)
    if layout == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    check(module, x, r, depth=channels)
    assert "conv2d" not in counters.cycles_per_kernel
    if layout == "contiguous":
        assert counters.kernels_run == (kernels[dtype] if isinstance(kernels, dict) else kernels)
    with torch.no_grad():
        assert torch.compile(module, backend="spyre")(x, r).stride() == module(x, r).stride()


def test_pointwise_product_is_faster_than_the_implicit_gemm(monkeypatch):
    """Measured in one run: the product against spyre.conv2d's implicit GEMM
    of the same 1x1 convolution (its bands and halo set-up buy nothing)."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(64, 64, 1).half().eval()
    x = torch.randn(1, 64, 56, 56).half()
    cycles = {}
    for route in ("product", "conv2d"):
        if route == "conv2d":
            monkeypatch.setattr(convolution, "pointwise_products", lambda graph: None)
        with torch.compiler.config.patch(force_disable_caches=True):
            check(conv, x, depth=64)
        assert ("conv2d" in counters.cycles_per_kernel) == (route == "conv2d")
        cycles[route] = counters.simulated_cycles
    assert cycles["product"] < 0.9 * cycles["conv2d"]


class _Downsample(torch.nn.Module):
    """A ResNet block that halves the image: 3x3 stride 2, 3x3, and a 1x1
    stride 2 shortcut added before the last ReLU."""

    def __init__(self, channels):
        super().__init__()
        self.a = torch.nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1)
        self.b = torch.nn.Conv2d(2 * channels, 2 * channels, 3, padding=1)
        self.shortcut = torch.nn.Conv2d(channels, 2 * channels, 1, stride=2)

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))) + self.shortcut(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_a_downsampling_block_is_three_kernels(dtype):
    torch.manual_seed(0)
    block = _Downsample(4).to(dtype).eval()
    x = torch.randn(2, 4, 10, 10).to(dtype)
    check(block, x, depth=72)
    assert counters.kernels_run == 3
    assert set(counters.cycles_per_kernel) == {"conv2d"}


class _Residual(torch.nn.Module):
    def __init__(self, channels, relu, add, shortcut_shape=None):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)
        self.relu, self.add, self.shortcut_shape = relu, add, shortcut_shape

    def forward(self, x, r):
        y = self.conv(x)
        if self.add:
            y = y + r
        return torch.relu(y) if self.relu else y


@pytest.mark.parametrize("relu, add, r_shape, kernels", [
    (True, False, None, 1),                 # conv, ReLU: one kernel
    (False, True, (2, 6, 7, 9), 1),         # conv + residual: one kernel
    (True, True, (2, 6, 7, 9), 1),          # ReLU(conv + residual): one kernel
    (True, True, (1, 6, 1, 9), 2),          # a broadcast addend stays an op of its own
], ids=["relu", "residual", "residual-relu", "broadcast-addend"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_relu_and_residual_fold_into_the_convolution(relu, add, r_shape, kernels, dtype):
    torch.manual_seed(0)
    module = _Residual(6, relu, add).to(dtype).eval()
    x = torch.randn(2, 6, 7, 9).to(dtype)
    r = torch.randn(*(r_shape or (2, 6, 7, 9))).to(dtype)
    check(module, x, r, depth=54)
    assert counters.kernels_run == kernels
    assert "conv2d" in counters.cycles_per_kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("norm", [False, True])
def test_relu6_folds_into_the_convolution(dtype, norm):
    """ReLU6 (a MobileNet's depthwise layers, with their BatchNorm folded
    into the kernel's scale and bias) is the kernel's `relu relu_max = 6.0`:
    no kernel of its own."""
    torch.manual_seed(0)
    layers = [torch.nn.Conv2d(96, 96, 3, padding=1, groups=96)]
    if norm:
        layers.append(torch.nn.BatchNorm2d(96))
        layers[1].running_mean.uniform_(-1, 1)
        layers[1].running_var.uniform_(0.5, 2)
    module = torch.nn.Sequential(*layers, torch.nn.ReLU6()).to(dtype).eval()
    x = (torch.randn(2, 96, 28, 28) * 4).to(dtype)  # many values above 6 and below 0
    check(module, x, depth=9)
    # The folded BatchNorm's scale and bias: a small kernel of their own.
    assert counters.kernels_run == 1 + norm
    assert "conv2d" in counters.cycles_per_kernel


def test_a_convolution_read_twice_keeps_its_relu_apart():
    """The ReLU folds in only when nothing else reads the convolution."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(4, 4, 3, padding=1).eval()
    fn = lambda x: (lambda y: torch.relu(y) * 2 + y)(conv(x))  # noqa: E731
    x = torch.randn(1, 4, 6, 6)
    check(fn, x, depth=36)
    assert counters.kernels_run == 2


def test_conv2d_implicit_gemm_is_faster_than_im2col():
    """64 -> 64 3x3 on 1x64x28x28 (fp16): 25.6 us simulated as one
    implicit-GEMM kernel (28.0 us with a product per tap); as im2col (a
    gather of runs, a product, the bias) about 60 us."""
    conv = torch.nn.Conv2d(64, 64, 3, padding=1).half().eval()
    x = torch.randn(1, 64, 28, 28).half()
    check(conv, x, depth=576)
    assert counters.simulated_cycles < 40_000


def test_conv2d_with_gradients_keeps_im2col():
    """The implicit-GEMM kernel has no backward: a convolution that needs
    gradients is im2col and a product in the forward graph; its backward (of
    stride 1) a convolution for the input's gradient and im2col and a
    product for the weight's, on the card; the gradients match eager's."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(4, 6, 3, padding=1)
    x = torch.randn(2, 4, 8, 8, requires_grad=True)
    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(conv, backend="spyre")
    compiled(x).sum().backward()
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run >= 2
    grads = (x.grad.clone(), conv.weight.grad.clone())
    x.grad, conv.weight.grad = None, None
    conv(x).sum().backward()
    for actual, expected in zip(grads, (x.grad, conv.weight.grad)):
        torch.testing.assert_close(actual, expected, **tolerance(torch.float32, 36))


def check_gradients(dtype, ci, co, k, side, bias, **kwargs):
    """A convolution's gradients (input, weight, bias) on the card, with no
    CPU fallback, against eager's, to a few DLFloat16 roundings of each
    gradient's largest element."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, ci, side, side, generator=g).to(dtype).requires_grad_()
    w = (torch.randn(co, ci // kwargs.get("groups", 1), k, k, generator=g) * 0.2) \
        .to(dtype).requires_grad_()
    b = torch.randn(co, generator=g).to(dtype).requires_grad_() if bias else None
    upstream = torch.randn(F.conv2d(x, w, **kwargs).shape, generator=g).to(dtype)
    leaves = [t for t in (x, w, b) if t is not None]

    def loss(x, w, b):
        return (F.conv2d(x, w, b, **kwargs) * upstream).sum()
    torch._dynamo.reset()
    counters.reset()
    actual = torch.autograd.grad(torch.compile(loss, backend="spyre")(x, w, b), leaves)
    assert dict(counters.fallbacks) == {}
    expected = torch.autograd.grad(loss(x, w, b), leaves)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=0, atol=8 * 2 ** -9 * e.abs().max().item())


def test_a_16_bit_convolution_with_gradients_runs_the_implicit_gemm_forward():
    """In fp16 the forward of a convolution that needs gradients is the
    implicit-GEMM kernel too (its products are im2col's: 16-bit operands
    summed in f32), and the gradients are those of the im2col forward."""
    from spyre_mlir import report
    from spyre_mlir.inductor import decompositions
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1).half()
    x = torch.randn(2, 8, 12, 12).half().requires_grad_()

    def gradients():
        torch._dynamo.reset()
        counters.reset()
        with torch.compiler.config.patch(force_disable_caches=True):
            out = torch.compile(conv, backend="spyre")(x)
            forward = [r.name for r in report.kernel_rows(counters)]
            grads = torch.autograd.grad(out.float().square().sum(), (x, conv.weight))
        assert dict(counters.fallbacks) == {}
        return forward, grads

    forward, fused = gradients()
    assert "extern.conv2d" in forward
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(decompositions.convolution, "fused", lambda *args: None)
        forward, im2col = gradients()
    assert "extern.conv2d" not in forward
    for a, b in zip(fused, im2col):
        torch.testing.assert_close(a, b, rtol=0, atol=2 ** -8 * b.abs().max().item())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("ci,co,k,side,bias,conv", [
    (4, 6, 3, 8, True, dict(padding=1)), (4, 6, 3, 9, False, dict()),
    (8, 8, 5, 12, True, dict(padding=2)), (16, 16, 3, 14, True, dict(padding=1)),
    # Strided: the output's gradient spread on the input's grid; odd sizes
    # leave the last row and column to the transposed convolution's output
    # padding.
    (4, 6, 3, 9, True, dict(stride=2, padding=1)), (4, 6, 3, 8, True, dict(stride=2, padding=1)),
    (4, 8, 1, 9, False, dict(stride=2)), (3, 8, 7, 16, False, dict(stride=2, padding=3)),
    (4, 6, 3, 11, True, dict(stride=(2, 1), padding=(1, 0))),
    # Grouped: each group's weight transposed; depthwise weights' gradient
    # a sum of elementwise products.
    (8, 8, 3, 8, True, dict(padding=1, groups=8)), (8, 8, 7, 12, True, dict(padding=3, groups=8)),
    (8, 16, 3, 8, False, dict(padding=1, groups=8)),
    (8, 12, 3, 9, True, dict(stride=2, padding=1, groups=4)),
    # Dilated: the flipped convolution dilated as the forward.
    (4, 6, 3, 12, True, dict(padding=2, dilation=2)),
    (4, 6, 3, 13, False, dict(stride=2, padding=1, dilation=(2, 3))),
], ids=["3x3", "3x3_unpadded", "5x5", "3x3_16", "3x3_s2_odd", "3x3_s2_even", "1x1_s2",
        "7x7_s2", "3x1_s2x1", "depthwise_3x3", "depthwise_7x7", "depthwise_x2",
        "grouped_s2", "dilated", "dilated_s2"])
def test_the_backward_of_a_convolution_runs_on_card(dtype, ci, co, k, side, bias, conv):
    # decompositions._shifted_slices_backward: the input's gradient a
    # convolution (the implicit GEMM), the weight's products with the
    # input's shifted slices.
    check_gradients(dtype, ci, co, k, side, bias, **conv)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("ci,co,k,side,bias", [
    (3, 16, 8, 32, True),   # ViT's patch embedding
    (3, 16, 4, 30, True),   # the last rows and columns in no patch: zero gradient
    (16, 8, 1, 7, False),   # a 1 x 1 convolution
], ids=["patches", "uncovered_edge", "pointwise"])
def test_the_backward_of_a_convolution_of_disjoint_patches_runs_on_card(dtype, ci, co, k, side,
                                                                        bias):
    # Stride = kernel, no padding: both gradients are products with the
    # patches' matrix (decompositions._patches_backward).
    check_gradients(dtype, ci, co, k, side, bias, stride=k)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("channels, groups", [(64, 64), (12, 3)], ids=["depthwise", "grouped"])
def test_grouped_conv2d_of_stride_1_is_one_kernel(dtype, channels, groups):
    """The dense convolution of a block-diagonal weight built in LX, one
    kernel."""
    x, w, b = inputs((2, channels, 7, 8), (channels, channels // groups, 3, 3), dtype)
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=groups), x, w, b,
          depth=9 * channels // groups)
    assert counters.kernels_run == 1
    assert set(counters.cycles_per_kernel) == {"conv2d"}


@pytest.fixture
def im2col(monkeypatch):
    """Convolutions as im2col and a product, as when the implicit-GEMM
    kernel refuses them (or they need gradients); not from Inductor's
    caches, where the fused graph of the same function may be."""
    monkeypatch.setattr(convolution, "fused", lambda *args: None)
    with torch.compiler.config.patch(force_disable_caches=True):
        yield


def test_conv2d_gathers_whole_output_rows(im2col):
    """The im2col columns are laid out with the output positions innermost,
    so the card gathers long rows (with unit strides, one run of the padded
    input per tap and channel) rather than rows of one kernel width (3): with
    kernel-width rows a 64 -> 64 3x3 convolution on 1x64x28x28 took 2.37 ms
    simulated (fp16), with rows of the output width 0.14 ms, with runs
    0.08 ms. Measured here on two groups of 128 channels with the
    implicit-GEMM kernel turned off (what a convolution needing gradients
    gets)."""
    conv = torch.nn.Conv2d(256, 256, 3, padding=1, groups=2).half().eval()
    x = torch.randn(1, 256, 14, 14).half()
    check(conv, x, depth=1152)
    assert "conv2d" not in counters.cycles_per_kernel
    assert counters.simulated_cycles < 150_000  # 97.1k cycles


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("x_shape, w_shape, kwargs", [
    ((1, 256, 28, 28), (256, 1, 3, 3), dict(padding=1, groups=256)),
    ((1, 96, 28, 28), (96, 1, 7, 7), dict(padding=3, groups=96)),
    ((1, 144, 28, 28), (144, 1, 3, 3), dict(stride=2, padding=1, groups=144)),
    ((2, 64, 14, 14), (128, 1, 3, 3), dict(padding=1, groups=64)),
    ((1, 128, 14, 14), (128, 4, 3, 3), dict(padding=1, groups=32)),
    ((1, 256, 14, 14), (256, 128, 3, 3), dict(padding=1, groups=2)),
], ids=["depthwise-256", "depthwise-7x7", "depthwise-s2", "multiplier-2", "resnext", "two-groups"])
def test_grouped_conv2d_chunks_read_their_groups(request, dtype, x_shape, w_shape, kwargs):
    """Grouped convolutions with many channels (MobileNet's and ConvNeXt's
    depthwise ones, ResNeXt's) are one implicit-GEMM kernel whose chunks of
    whole groups read only their groups' input channels, so the
    block-diagonal weight's zeros cost a chunk's width, not all channels'
    (a chunk inside one large group is a dense product of that group's
    channels). Simulated, 3.1-15.8x faster than im2col here (fp16
    depthwise, 256 channels on 28 x 28: 17.0 us against 229.3 us; two
    groups of 128: 28.1 against 87.5 us)."""
    torch.manual_seed(0)
    x = torch.randn(*x_shape).to(dtype)
    w = torch.randn(*w_shape).to(dtype)
    b = torch.randn(w_shape[0]).to(dtype)
    fn = lambda x, w, b: F.conv2d(x, w, b, **kwargs)  # noqa: E731
    depth = w_shape[1] * w_shape[2] * w_shape[3]
    check(fn, x, w, b, depth=depth)
    assert set(counters.cycles_per_kernel) == {"conv2d"}
    implicit = counters.simulated_cycles
    request.getfixturevalue("im2col")
    check(fn, x, w, b, depth=depth)
    assert "conv2d" not in counters.cycles_per_kernel
    assert implicit * 2 < counters.simulated_cycles


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("pad, stride", [((1, 1, 1, 1), 1), ((0, 1, 0, 1), 2), ((2, 0, 0, 1), 1)],
                         ids=["same", "same-stride-2", "uneven"])
def test_explicit_zero_padding_folds_into_the_convolution(monkeypatch, dtype, pad, stride):
    """F.pad before a convolution (TF-style "same" padding, as HF's
    MobileNets write it, with one more row and column after than before
    for a stride of 2) becomes the kernel's own padding, so the padded copy
    is never written: 13.3k -> 5.0k simulated cycles for the depthwise one
    of stride 1 here (fp16)."""
    torch.manual_seed(0)
    x = torch.randn(1, 32, 16, 16).to(dtype)
    w, b = torch.randn(32, 1, 3, 3).to(dtype), torch.randn(32).to(dtype)
    def fn(x, w, b):
        return F.conv2d(F.pad(torch.relu(x), pad), w, b, stride=stride, groups=32)

    check(fn, x, w, b, depth=9)
    folded = counters.simulated_cycles
    monkeypatch.setattr(convolution, "fold_zero_padding", lambda graph: None)
    with torch.compiler.config.patch(force_disable_caches=True):
        check(fn, x, w, b, depth=9)
    assert folded < 0.8 * counters.simulated_cycles


@pytest.mark.parametrize("layout", ["input", "weight", "both"])
@pytest.mark.parametrize("residual", [False, True])
def test_conv2d_result_has_eagers_layout(layout, residual):
    """A channels-last input or weight gives a channels-last result, as in
    eager (the values and the strides match). The card computes NCHW: the
    re-layouts are card kernels of the graph, timed, not host copies in the
    op's implementation (which would count a fallback)."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(6, 6, 3, padding=1).half().eval()
    x, r = torch.randn(2, 6, 7, 9).half(), torch.randn(2, 6, 7, 9).half()
    if layout in ("input", "both"):
        x = x.to(memory_format=torch.channels_last)
    if layout in ("weight", "both"):
        conv = conv.to(memory_format=torch.channels_last)

    def fn(x, r):
        y = conv(x)
        return y + r if residual else y

    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        actual, expected = torch.compile(fn, backend="spyre")(x, r), fn(x, r)
    assert dict(counters.fallbacks) == {}
    assert "conv2d" in counters.cycles_per_kernel and len(counters.cycles_per_kernel) >= 2
    torch.testing.assert_close(actual, expected, check_stride=True,
                               **tolerance(torch.float16, 54))
