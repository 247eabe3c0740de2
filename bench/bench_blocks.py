"""Transformer blocks, attention and convolutions against the card's roofline.

Each case is compiled with torch.compile(fn, backend="spyre") in fp16, run
twice, and the second run's simulated time (counters' cycles / clock) is
compared with its roofline on the card description: max(FLOPs / peak,
compulsory bytes / bandwidth), the compulsory bytes being every input,
parameter and output read or written once. FLOPs come from PyTorch's
FlopCounterMode for products and convolutions; attention's are counted here
(it has no formula for the CPU attention kernel), a causal one as its lower
triangle, which is all the card needs to compute.

    python bench/bench_blocks.py [--only NAME,...] [--quick]

--quick divides sequence lengths, widths and spatial sizes by 4 (a smoke run;
the issue's shapes are the default).
"""

import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


def attention_flops(batch_heads: int, queries: int, keys: int, head_dim: int,
                    causal: bool) -> float:
    """Q @ K^T and P @ V: 2 FLOPs per MAC, half the pairs when causal
    (queries == keys)."""
    pairs = queries * keys
    if causal:
        pairs = queries * (queries + 1) // 2
    return 2.0 * 2 * batch_heads * pairs * head_dim


def cases(scale: int):
    """(name, module or function, inputs, FLOPs of its attention not counted
    by FlopCounterMode (None: no attention))."""
    from spyre_mlir import models

    def h(x):
        return torch.randn(*x).half()

    t, d = 512 // scale, 768 // scale
    heads = 12
    yield ("gpt2-block", models.GPTBlock(d, heads).half().eval(), (h((1, t, d)),),
           attention_flops(heads, t, t, d // heads, True))
    d, heads, kv, ff = 2048 // scale, 16, 4, 5632 // scale
    yield ("llama-block", models.LlamaBlock(d, heads, kv, ff, max_len=t).half().eval(),
           (h((1, t, d)),), attention_flops(heads, t, t, d // heads, True))
    # The Llama MLP alone: down(silu(gate(x)) * up(x)).
    gate, up, down = (nn.Linear(d, ff, bias=False), nn.Linear(d, ff, bias=False),
                      nn.Linear(ff, d, bias=False))
    mlp = _GatedMLP(gate, up, down).half().eval()
    yield ("llama-mlp", mlp, (h((t, d)),), None)
    heads, seq, hd = 32 // scale, 2048 // scale, 128
    prefill = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    yield ("attention-prefill", prefill, tuple(h((1, heads, seq, hd)) for _ in range(3)),
           attention_flops(heads, seq, seq, hd, True))
    kv_len = 4096 // scale
    decode = lambda q, k, v: F.scaled_dot_product_attention(q, k, v)  # noqa: E731
    yield ("attention-decode", decode,
           (h((1, 32, 1, hd)), h((1, 32, kv_len, hd)), h((1, 32, kv_len, hd))),
           attention_flops(32, 1, kv_len, hd, False))
    side = 56 // scale
    yield ("conv3x3-64", nn.Conv2d(64, 64, 3, padding=1).half().eval(),
           (h((1, 64, side, side)),), None)
    yield ("resnet-bottleneck", _Bottleneck(256, 64).half().eval(),
           (h((1, 256, side, side)),), None)
    yield ("depthwise3x3-64", nn.Conv2d(64, 64, 3, padding=1, groups=64).half().eval(),
           (h((1, 64, side, side)),), None)
    yield ("conv3x3-s2-64-128", nn.Conv2d(64, 128, 3, stride=2, padding=1).half().eval(),
           (h((1, 64, side, side)),), None)
    yield ("resnet-downsample", _Downsample(64).half().eval(), (h((1, 64, side, side)),), None)
    yield ("mobilenet-block", _InvertedResidual(24, 6).half().eval(),
           (h((1, 24, side, side)),), None)


class _GatedMLP(nn.Module):
    def __init__(self, gate, up, down):
        super().__init__()
        self.gate, self.up, self.down = gate, up, down

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class _Bottleneck(nn.Module):
    """ResNet-50's bottleneck without batch norm (folded into the
    convolutions at inference): 1x1 down, 3x3, 1x1 up, the input added."""

    def __init__(self, channels, width):
        super().__init__()
        self.down = nn.Conv2d(channels, width, 1)
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.up = nn.Conv2d(width, channels, 1)

    def forward(self, x):
        y = F.relu(self.down(x))
        y = F.relu(self.conv(y))
        return F.relu(self.up(y) + x)


class _Downsample(nn.Module):
    """A ResNet block that halves the image and doubles the channels: 3x3
    stride 2, 3x3, and a 1x1 stride 2 shortcut added before the last ReLU."""

    def __init__(self, channels):
        super().__init__()
        self.a = nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1)
        self.b = nn.Conv2d(2 * channels, 2 * channels, 3, padding=1)
        self.shortcut = nn.Conv2d(channels, 2 * channels, 1, stride=2)

    def forward(self, x):
        return F.relu(self.b(F.relu(self.a(x))) + self.shortcut(x))


class _InvertedResidual(nn.Module):
    """MobileNetV2's inverted residual block: a 1x1 expansion, a depthwise
    3x3, each with BatchNorm and ReLU6, a 1x1 projection with BatchNorm, and
    the input added."""

    def __init__(self, channels, expansion):
        super().__init__()
        wide = channels * expansion
        self.expand = nn.Sequential(nn.Conv2d(channels, wide, 1, bias=False),
                                    nn.BatchNorm2d(wide), nn.ReLU6())
        self.depthwise = nn.Sequential(nn.Conv2d(wide, wide, 3, padding=1, groups=wide,
                                                 bias=False), nn.BatchNorm2d(wide), nn.ReLU6())
        self.project = nn.Sequential(nn.Conv2d(wide, channels, 1, bias=False),
                                     nn.BatchNorm2d(channels))

    def forward(self, x):
        return x + self.project(self.depthwise(self.expand(x)))


def flops(fn, inputs, attention) -> float:
    """FLOPs of one call: FlopCounterMode's plus `attention`'s."""
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        fn(*inputs)
    total = 0.0
    for op, count in counter.get_flop_counts().get("Global", {}).items():
        if "scaled_dot_product" in str(op):
            raise SystemExit(f"{op} has a FLOP count now: drop the count of `attention`")
        total += count
    return total + (attention or 0.0)


def compulsory_bytes(fn, inputs, output) -> int:
    tensors = list(inputs) + [output]
    if isinstance(fn, nn.Module):
        tensors += list(fn.parameters()) + list(fn.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only these case names, comma separated")
    parser.add_argument("--quick", action="store_true", help="sizes divided by 4")
    args = parser.parse_args()
    from spyre_mlir import report, simulator as sim
    from spyre_mlir.inductor import counters
    arch = sim.default_arch()
    only = set(args.only.split(",")) if args.only else None
    print(f"card '{arch.name}': peak {arch.peak_flops / 1e12:.1f} TFLOP/s, "
          f"device memory {arch.bandwidth_bytes_per_s / 1e9:.0f} GB/s")
    # floors: the sum of the kernels' floors (spyre_mlir.report: each kernel's
    # compute at peak or its own traffic with the bus's turnaround), what these
    # kernels could reach with perfect schedules; its ratio to the roofline is
    # what the kernel boundaries cost, which only fusing them gains.
    print(f"{'case':<20}{'sim us':>10}{'roofline us':>13}{'ratio':>8}{'bound':>9}"
          f"{'kernels':>9}{'fallbacks':>11}{'floors us':>11}{'floors x':>10}")
    torch.manual_seed(0)
    for name, fn, inputs, attention in cases(4 if args.quick else 1):
        if only and name not in only:
            continue
        start = time.time()
        work = flops(fn, inputs, attention)
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="spyre")
        with torch.no_grad():
            compiled(*inputs)
            counters.reset()
            output = compiled(*inputs)
        sim_us = counters.simulated_cycles / arch.clock_hz * 1e6
        compute_us = work / arch.peak_flops * 1e6
        memory_us = compulsory_bytes(fn, inputs, output) / arch.bandwidth_bytes_per_s * 1e6
        roof = max(compute_us, memory_us)
        bound = "compute" if compute_us >= memory_us else "memory"
        floors = sum(r.floor_us or 0.0 for r in report.kernel_rows(counters))
        print(f"{name:<20}{sim_us:>10.1f}{roof:>13.1f}{sim_us / roof:>8.2f}{bound:>9}"
              f"{counters.kernels_run:>9}{sum(counters.fallbacks.values()):>11}"
              f"{floors:>11.1f}{floors / roof:>10.2f}"
              f"   [{time.time() - start:.0f} s]", flush=True)


if __name__ == "__main__":
    sys.exit(main())
