"""Random numbers on the card, in spyre compiles.

Inductor lowers rand, randn, randint (and what decomposes to them: bernoulli,
dropout in training, rand_like, ...) to a seed per random op, drawn once per
call from torch's generator (`inductor_seeds`), and loop bodies computing
ops.rand/randn/randint64(seed, element index). The CPU's ops are Philox-like
library calls the card lacks; here each element's bits are a counter-based
hash of (seed, index) built from 32-bit multiplies, xors and shifts, which
the vector unit computes exactly on i32 with wrap-around. Values differ from
eager's (as Inductor's do), but are reproducible under torch.manual_seed and
differ from call to call, since the seeds come from torch's generator.

The seeds are drawn on the host as Inductor draws them (one randint call per
graph run, the only use of torch's RNG state), but as int32: the card's
integers are 32-bit, and int64 values computed on the CPU are refused.
"""

from __future__ import annotations

import math

import torch
from torch._inductor import ir
from torch._inductor.virtualized import ops

MASK32 = (1 << 32) - 1


def _i32(value: int) -> int:
    """A 32-bit pattern as the int32 that holds it."""
    value &= MASK32
    return value - (1 << 32) if value >= 1 << 31 else value


def _const(value: int):
    return ops.constant(_i32(value), torch.int32)


def _shift_right(x, k: int):
    """Logical shift right of an i32 bit pattern: floor division by 2^k
    (an arithmetic shift) with the sign's copies masked off."""
    return ops.bitwise_and(ops.floordiv(x, _const(1 << k)), _const((1 << (32 - k)) - 1))


def _mix(x):
    """A bijective 32-bit mixing function (xor-shift-multiply, the constants
    of C. Wellons' lowbias32)."""
    x = ops.bitwise_xor(x, _shift_right(x, 16))
    x = ops.mul(x, _const(0x7FEB352D))
    x = ops.bitwise_xor(x, _shift_right(x, 15))
    x = ops.mul(x, _const(0x846CA68B))
    return ops.bitwise_xor(x, _shift_right(x, 16))


def _bits(seed, index, stream: int = 0):
    """32 random bits for element `index` of the op seeded `seed` (both i32);
    `stream` gives further independent words for the same element."""
    key = _mix(ops.add(seed, _const(0x9E3779B9 * (stream + 1))))
    return _mix(ops.add(_mix(ops.bitwise_xor(index, key)), seed))


def _unit(bits, lowest_zero: bool = True):
    """The top 24 bits as a float in [0, 1) (or (0, 1]): exact in f32."""
    top = _shift_right(bits, 8)
    if not lowest_zero:
        top = ops.add(top, _const(1))
    return ops.mul(ops.to_dtype(top, torch.float32), ops.constant(2.0 ** -24, torch.float32))


def uniform_value(seed, index):
    return _unit(_bits(seed, index))


def normal_value(seed, index):
    """Box-Muller from two independent uniforms (the first in (0, 1], so
    that its log is finite)."""
    u1 = _unit(_bits(seed, index, 0), lowest_zero=False)
    u2 = _unit(_bits(seed, index, 1))
    radius = ops.sqrt(ops.mul(ops.constant(-2.0, torch.float32), ops.log(u1)))
    angle = ops.mul(ops.constant(2 * math.pi, torch.float32), u2)
    return ops.mul(radius, ops.cos(angle))


class SeedDraw(ir.ExternKernelOut):
    """`count` int32 seeds from torch's generator: the host's part of random
    ops (reading the RNG state), not an op the card could run instead."""

    host_rng_draw = True

    def __init__(self, count: int, device: torch.device) -> None:
        limits = torch.iinfo(torch.int32)
        super().__init__(
            layout=ir.FixedLayout(device=device, dtype=torch.int32, size=[count]),
            inputs=[], constant_args=[limits.min, limits.max, [count]],
            python_kernel_name="aten.randint.low_out",
            cpp_kernel_name="at::_ops::randint_low_out::call",
            op_overload=torch.ops.aten.randint.low_out)


def seeds(count, device):
    return ir.TensorBox.create(SeedDraw(count, torch.device(device)))


def lookup_seed(seeds, index):
    load = seeds.make_loader()
    return ir.Pointwise.create(device=seeds.get_device(), dtype=seeds.get_dtype(),
                               inner_fn=lambda _: load([index]), ranges=[])


def _positions(size, offset):
    return ir.FixedLayout(torch.device("cpu"), torch.float32, size,
                          ir.FlexibleLayout.contiguous_strides(size), offset=offset).make_indexer()


def _seed_value(seed):
    load = seed.make_loader()
    return lambda: ops.to_dtype(load([]), torch.int32)


def random(size, seed, mode, *, offset=0, align_dtype=torch.float32):
    if mode not in ("rand", "randn") or seed.get_dtype() != torch.int32:
        raise NotImplementedError(f"random mode {mode}")
    size = [*size]
    position, seed_value = _positions(size, offset), _seed_value(seed)
    value = uniform_value if mode == "rand" else normal_value

    def inner_fn(index):
        return value(seed_value(), ops.index_expr(position(index), torch.int32))

    result = ir.Pointwise.create(device=seed.get_device(), dtype=torch.float32,
                                 inner_fn=inner_fn, ranges=size)
    result.realize()
    return result


def randint(low, high, size, seed, *, offset=0):
    """low + bits mod (high - low), from 31 of the bits: in int32 (results
    beyond it stay with Inductor's lowering). The modulo favours small
    values by at most (high - low) / 2^31."""
    low, high = int(low), int(high)
    if seed.get_dtype() != torch.int32 or not (0 < high - low <= 1 << 31) or \
            low < -(1 << 31) or high > 1 << 31:
        raise NotImplementedError("randint beyond int32")
    size = [*size]
    position, seed_value = _positions(size, offset), _seed_value(seed)

    def inner_fn(index):
        bits = _shift_right(_bits(seed_value(), ops.index_expr(position(index), torch.int32)), 1)
        if high - low < 1 << 31:
            span = _const(high - low)
            bits = ops.sub(bits, ops.mul(ops.floordiv(bits, span), span))
        value = ops.add(bits, _const(low))
        # Already in [low, high); the clamp shows it to the card's int64 range checks.
        value = ops.maximum(ops.minimum(value, _const(high - 1)), _const(low))
        return ops.to_dtype(value, torch.int64)

    return ir.Pointwise.create(device=seed.get_device(), dtype=torch.int64,
                               inner_fn=inner_fn, ranges=size)


def lowerings():
    prims = torch.ops.prims
    return {prims.inductor_seeds.default: seeds, prims.inductor_lookup_seed.default: lookup_seed,
            prims.inductor_random.default: random, prims.inductor_randint.default: randint}
