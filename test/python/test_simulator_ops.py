"""Each instruction of the simulator against a numpy reference."""

import math

import numpy as np
import pytest

from simkit import OneCore, esize
from spyre_mlir import simulator as sim
from spyre_mlir.simulator import BinaryFunc, DType, Operand, ReduceFunc, Sync, UnaryFunc

R = sim.dl16()
RNG = np.random.default_rng(1)

erf = np.vectorize(math.erf, otypes=[np.float32])

UNARY = {
    "copy": lambda x: x, "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log,
    "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "erf": erf, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "floor": np.floor,
    "ceil": np.ceil, "round": np.round, "trunc": np.trunc, "sign": np.sign,
    "reciprocal": lambda x: 1 / x, "relu": lambda x: np.maximum(x, 0),
    "logical_not": lambda x: (x == 0).astype(np.float32),
    "isnan": lambda x: np.isnan(x).astype(np.float32),
    "isinf": lambda x: np.isinf(x).astype(np.float32),
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "log2": np.log2, "log10": np.log10, "exp2": np.exp2,
    "erfc": np.vectorize(math.erfc, otypes=[np.float32]),
    "lgamma": np.vectorize(math.lgamma, otypes=[np.float32]),
    "signbit": lambda x: np.signbit(x).astype(np.float32),
}
POSITIVE = {"log", "sqrt", "rsqrt", "log1p", "log2", "log10", "lgamma"}
UNIT = {"asin", "acos", "atanh"}  # defined on (-1, 1)


def _data(shape, positive=False, dtype=DType.f32):
    x = RNG.standard_normal(shape).astype(np.float32) * 3
    if positive:
        x = np.abs(x) + 0.1
    return R.round(x) if dtype == DType.dl16 else x


@pytest.mark.parametrize("dtype", [DType.f32, DType.dl16], ids=["f32", "dl16"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    p = OneCore()
    p.input("x", dtype, (8, 40))
    p.output("y", dtype, (8, 40))
    p.c.unary(getattr(UnaryFunc, name), p.view("y"), p.view("x"), 8, 40, sync=p.ready())
    x = _data((8, 40), name in POSITIVE, dtype)
    if name in UNIT:
        x = np.tanh(x) * np.float32(0.99)
    if name == "acosh":
        x = np.abs(x) + 1
    if dtype == DType.dl16:
        x = R.round(x)
    host = x if dtype == DType.f32 else x.astype(np.float16)
    y = p.finish({"x": host}).outputs["y"]
    expected = UNARY[name](x).astype(np.float32)
    if dtype == DType.dl16:
        expected = R.round(expected)
        np.testing.assert_allclose(y, expected, rtol=2 ** -8, atol=1e-6)
    else:
        np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-7)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "pow": lambda a, b: np.power(np.abs(a), b),
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "fmod": np.fmod, "mod": np.mod,
    "floordiv": lambda a, b: np.floor(a / b), "atan2": np.arctan2,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "hypot": np.hypot, "copysign": np.copysign, "nextafter": np.nextafter,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_f32_with_row_broadcast(name):
    p = OneCore()
    p.input("a", DType.f32, (6, 33))
    p.input("b", DType.f32, (1, 33))
    p.output("y", DType.f32, (6, 33))
    # Row stride 0 broadcasts b's single row over all rows.
    p.c.binary(getattr(BinaryFunc, name), p.view("y"), p.view("a"), p.view("b", row_stride=0), 6, 33,
               sync=p.ready())
    a, b = _data((6, 33)), _data((1, 33))
    if name == "pow":
        a = np.abs(a)
    b[b == 0] = 1
    y = p.finish({"a": a, "b": b}).outputs["y"]
    np.testing.assert_allclose(y, BINARY[name](a, b).astype(np.float32), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name, ref", [
    ("add", np.add), ("mul", np.multiply), ("floordiv", np.floor_divide), ("mod", np.mod),
    ("bitwise_and", np.bitwise_and), ("bitwise_xor", np.bitwise_xor), ("shl", np.left_shift),
    ("max", np.maximum), ("lt", np.less)])
def test_binary_i32_is_exact(name, ref):
    p = OneCore()
    p.input("a", DType.i32, (4, 16))
    p.input("b", DType.i32, (4, 16))
    p.output("y", DType.i32, (4, 16))
    p.c.binary(getattr(BinaryFunc, name), p.view("y"), p.view("a"), p.view("b"), 4, 16,
               sync=p.ready())
    a = RNG.integers(-(1 << 28), 1 << 28, (4, 16)).astype(np.int32)
    b = RNG.integers(1, 20, (4, 16)).astype(np.int32)
    y = p.finish({"a": a, "b": b}).outputs["y"]
    np.testing.assert_array_equal(y, ref(a.astype(np.int64), b).astype(np.int32))


def test_binary_with_immediate_and_cast():
    p = OneCore()
    p.input("a", DType.f32, (3, 5))
    p.output("y", DType.dl16, (3, 5))
    p.c.binary_imm(BinaryFunc.mul, p.view("y"), p.view("a"), 0.5, 3, 5, sync=p.ready())
    a = _data((3, 5))
    y = p.finish({"a": a}).outputs["y"]
    np.testing.assert_array_equal(y, R.round(a * np.float32(0.5)))


def test_select():
    p = OneCore()
    p.input("c", DType.u8, (4, 10))
    p.input("a", DType.f32, (4, 10))
    p.input("b", DType.f32, (4, 10))
    p.output("y", DType.f32, (4, 10))
    p.c.select(p.view("y"), p.view("c"), p.view("a"), p.view("b"), 4, 10, sync=p.ready())
    c = RNG.integers(0, 2, (4, 10)).astype(bool)
    a, b = _data((4, 10)), _data((4, 10))
    y = p.finish({"c": c, "a": a, "b": b}).outputs["y"]
    np.testing.assert_array_equal(y, np.where(c, a, b))


def test_fill_and_iota():
    p = OneCore()
    p.output("f", DType.dl16, (3, 7))
    p.output("i", DType.i32, (3, 7))
    p.c.fill(p.view("f"), -1.5, 3, 7, sync=Sync(signal_sem=1))
    p.c.iota(p.view("i"), 5, 100, -1, 3, 7, sync=Sync(signal_sem=1))
    sync_both = Sync(wait_sem=1, wait_count=2)
    for name in ("f", "i"):
        index, dt, shape, off, nbytes = p.bufs[name]
        p.c.dma(Operand(buffer=index, dtype=dt), Operand(offset=off, dtype=dt), nbytes, sync=sync_both)
    out = sim.run(p.b.finish(), {}).outputs
    np.testing.assert_array_equal(out["f"], np.full((3, 7), -1.5, np.float32))
    r, c = np.mgrid[0:3, 0:7]
    np.testing.assert_array_equal(out["i"], 5 + 100 * r - c)


REDUCE = {
    "sum": lambda x: x.sum(1), "prod": lambda x: x.prod(1), "max": lambda x: x.max(1),
    "min": lambda x: x.min(1), "argmax": lambda x: x.argmax(1), "argmin": lambda x: x.argmin(1),
}


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_rows(name):
    rows, cols = 9, 70
    out_dtype = DType.i32 if name.startswith("arg") else DType.f32
    p = OneCore()
    p.input("x", DType.f32, (rows, cols))
    p.output("y", out_dtype, (rows, 1))
    p.c.reduce(getattr(ReduceFunc, name), p.view("y"), p.view("x"), rows, cols, sync=p.ready())
    x = _data((rows, cols)) * (0.3 if name == "prod" else 1)
    y = p.finish({"x": x}).outputs["y"][:, 0]
    np.testing.assert_allclose(y, REDUCE[name](x.astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_reduce_any_all():
    p = OneCore()
    p.input("x", DType.u8, (4, 6))
    p.output("any", DType.u8, (4, 1))
    p.output("all", DType.u8, (4, 1))
    p.c.reduce(ReduceFunc.any, p.view("any"), p.view("x"), 4, 6, sync=Sync(wait_sem=0, wait_count=1, signal_sem=1))
    p.c.reduce(ReduceFunc.all, p.view("all"), p.view("x"), 4, 6, sync=Sync(wait_sem=0, wait_count=1, signal_sem=1))
    x = np.array([[0] * 6, [1] * 6, [0, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]], dtype=bool)
    for name in ("any", "all"):
        index, dt, shape, off, nbytes = p.bufs[name]
        p.c.dma(Operand(buffer=index, dtype=dt), Operand(offset=off, dtype=dt), nbytes,
                sync=Sync(wait_sem=1, wait_count=2))
    out = sim.run(p.b.finish(), {"x": x}).outputs
    np.testing.assert_array_equal(out["any"][:, 0], x.any(1))
    np.testing.assert_array_equal(out["all"][:, 0], x.all(1))


def test_welford_over_tiles_matches_variance():
    """Two accumulating welford reductions over halves of each row merge
    into the statistics of the whole row (Chan's formula)."""
    rows, cols = 5, 64
    p = OneCore()
    p.input("x", DType.f32, (rows, cols))
    for name in ("mean", "m2", "n"):
        p.output(name, DType.f32, (rows, 1))
    half = cols // 2
    x_view = p.view("x")
    second = p.view("x")
    second.offset += half * 4
    p.c.reduce(ReduceFunc.welford, p.view("mean"), x_view, rows, half, aux1=p.view("m2"),
               aux2=p.view("n"), sync=Sync(wait_sem=0, wait_count=1, signal_sem=2))
    p.c.reduce(ReduceFunc.welford, p.view("mean"), second, rows, half, accumulate=True,
               aux1=p.view("m2"), aux2=p.view("n"), sync=Sync(wait_sem=2, wait_count=1, signal_sem=1))
    x = _data((rows, cols))
    out = p.finish({"x": x}).outputs
    np.testing.assert_allclose(out["mean"][:, 0], x.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["m2"][:, 0] / out["n"][:, 0], x.var(1), rtol=1e-5)
    np.testing.assert_array_equal(out["n"][:, 0], np.full(rows, cols, np.float32))


def test_argmax_accumulates_across_tiles():
    rows, cols = 3, 40
    p = OneCore()
    p.input("x", DType.f32, (rows, cols))
    p.output("i", DType.i32, (rows, 1))
    p.output("v", DType.f32, (rows, 1))
    second = p.view("x")
    second.offset += 20 * 4
    p.c.reduce(ReduceFunc.argmax, p.view("i"), p.view("x"), rows, 20, accumulate=False,
               sync=Sync(wait_sem=0, wait_count=1, signal_sem=2))
    # Seed the running maximum with the first tile's values, then merge.
    p.c.reduce(ReduceFunc.max, p.view("v"), p.view("x"), rows, 20,
               sync=Sync(wait_sem=2, wait_count=1, signal_sem=3))
    p.c.reduce(ReduceFunc.argmax, p.view("i"), second, rows, 20, accumulate=True, aux1=p.view("v"),
               index_offset=20, sync=Sync(wait_sem=3, wait_count=1, signal_sem=1))
    x = _data((rows, cols))
    out = p.finish({"x": x}).outputs
    np.testing.assert_array_equal(out["i"][:, 0], x.argmax(1))


@pytest.mark.parametrize("ta, tb, acc, out_dtype", [
    (False, False, False, DType.f32), (True, False, False, DType.f32),
    (False, True, True, DType.f32), (True, True, False, DType.dl16)])
def test_matmul(ta, tb, acc, out_dtype):
    m, k, n = 24, 40, 16
    p = OneCore()
    p.input("a", DType.dl16, (k, m) if ta else (m, k))
    p.input("b", DType.f32, (n, k) if tb else (k, n))  # f32 inputs are rounded to DLFloat16
    p.input("c", out_dtype, (m, n))
    p.output("y", out_dtype, (m, n))
    p.c.matmul(p.view("c"), p.view("a"), p.view("b"), m, k, n, ta, tb, acc, sync=p.ready())
    # The result lands in c's LX region: copy it to y.
    idx, dt, _, off_c, nbytes = p.bufs["c"]
    yi = p.bufs["y"][0]
    p.c.dma(Operand(buffer=yi, dtype=dt), Operand(offset=off_c, dtype=dt), nbytes,
            sync=Sync(wait_sem=1, wait_count=1))
    a = _data((k, m) if ta else (m, k)).astype(np.float16)
    b = _data((n, k) if tb else (k, n))
    c = _data((m, n))
    prog_inputs = {"a": a, "b": b, "c": c if out_dtype == DType.f32 else c.astype(np.float16)}
    # Only the explicit copy writes y; skip OneCore.finish's copy of outputs.
    y = sim.run(p.b.finish(), prog_inputs).outputs["y"]
    A = R.round(a.astype(np.float32))
    A = A.T if ta else A
    B = R.round(b)
    B = B.T if tb else B
    expected = A.astype(np.float64) @ B
    if acc:
        expected += c
    if out_dtype == DType.dl16:
        np.testing.assert_allclose(y, expected, rtol=2 ** -9, atol=1e-3)
    else:
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-4)


def test_dma_3d_strided_transpose_of_blocks():
    """A DMA with three counts gathers a (2, 3, 4)-blocked view."""
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [4, 6, 8])
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [6, 4, 8])
    c = b.core(0)
    # y[j, i, :] = x[i, j, :]: rows of 32 bytes; count 0 walks i (192 B in x,
    # 32 B in y), count 1 walks j (32 B in x, 128 B in y).
    c.dma(Operand(dtype=DType.f32, strides=(32, 128, 0)), Operand(buffer=x, dtype=DType.f32,
          strides=(192, 32, 0)), 32, counts=(4, 6, 1), sync=Sync(signal_sem=0))
    c.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32), 6 * 4 * 32,
          sync=Sync(wait_sem=0, wait_count=1))
    xs = _data((4, 6, 8))
    out = sim.run(b.finish(), {"x": xs}).outputs["y"]
    np.testing.assert_array_equal(out, xs.transpose(1, 0, 2))


@pytest.mark.parametrize("reverse", ["device", "lx", "both"])
def test_dma_with_negative_strides_reverses_rows(reverse):
    """Negative strides walk down from the operand's offset (torch.flip)."""
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [6, 5])
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [6, 5])
    c = b.core(0)
    row, last = 20, 5 * 20
    down = lambda buffer=sim.LX: Operand(buffer=buffer, dtype=DType.f32, offset=last,  # noqa
                                         strides=(-row, 0, 0))
    up = lambda buffer=sim.LX: Operand(buffer=buffer, dtype=DType.f32, strides=(row, 0, 0))  # noqa
    src = down(x) if reverse in ("device", "both") else up(x)
    dst = down() if reverse in ("lx", "both") else up()
    c.dma(dst, src, row, counts=(6, 1, 1), sync=Sync(signal_sem=0))
    c.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32), 6 * row,
          sync=Sync(wait_sem=0, wait_count=1))
    xs = _data((6, 5))
    out = sim.run(b.finish(), {"x": xs}).outputs["y"]
    np.testing.assert_array_equal(out, xs if reverse == "both" else xs[::-1])


def test_gather_embedding_rows():
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, 1)
    table = b.add_buffer("table", sim.BufferKind.input, DType.dl16, sim.HostDType.f16, [50, 64])
    ids = b.add_buffer("ids", sim.BufferKind.input, DType.i32, sim.HostDType.i32, [7])
    out = b.add_buffer("out", sim.BufferKind.output, DType.dl16, sim.HostDType.f16, [7, 64])
    c = b.core(0)
    c.dma(Operand(dtype=DType.i32), Operand(buffer=ids, dtype=DType.i32), 28, sync=Sync(signal_sem=0))
    c.gather(Operand(offset=128, dtype=DType.dl16, strides=(128, 0, 0)),
             Operand(buffer=table, dtype=DType.dl16, strides=(128, 0, 0)),
             Operand(dtype=DType.i32), 128, 7, 50, sync=Sync(wait_sem=0, wait_count=1, signal_sem=1))
    c.dma(Operand(buffer=out, dtype=DType.dl16), Operand(offset=128, dtype=DType.dl16), 7 * 128,
          sync=Sync(wait_sem=1, wait_count=1))
    t = _data((50, 64)).astype(np.float16)
    i = np.array([3, 0, 49, 3, 17, 8, 1], dtype=np.int64)
    result = sim.run(b.finish(), {"table": t, "ids": i}).outputs["out"]
    np.testing.assert_array_equal(result, R.round(t.astype(np.float32))[i])
    with pytest.raises(sim.SimulationError, match=r"gather index 50 at position 2 is outside \[0, 50\)"):
        sim.run(b.finish(), {"table": t, "ids": np.array([1, 2, 50, 0, 0, 0, 0])})


def test_ring_moves_a_tile_between_cores():
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, 4)
    x = b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [256])
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [256])
    c0, c3 = b.core(0), b.core(3)
    c0.dma(Operand(dtype=DType.f32), Operand(buffer=x, dtype=DType.f32), 1024, sync=Sync(signal_sem=0))
    c0.ring(Operand(dtype=DType.f32, core=3, offset=4096), Operand(dtype=DType.f32), 1024,
            signal_remote=True, sync=Sync(wait_sem=0, wait_count=1, signal_sem=5))
    c3.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32, offset=4096), 1024,
           sync=Sync(wait_sem=5, wait_count=1))
    xs = _data((256,))
    r = sim.run(b.finish(), {"x": xs})
    np.testing.assert_array_equal(r.outputs["y"], xs)
    assert r.stats["cores"][0]["ring_bytes"] == 1024


def test_hardware_loop_with_address_increments():
    """A 3-deep loop nest of one instruction each scales 4 x 3 x 2 tiles."""
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, 1)
    x = b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [2, 3, 4, 16])
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [2, 3, 4, 16])
    c = b.core(0)
    c.dma(Operand(dtype=DType.f32), Operand(buffer=x, dtype=DType.f32), 2 * 3 * 4 * 64, sync=Sync(signal_sem=0))
    c.loop(2)
    c.loop(3)
    c.loop(4)
    tile = lambda base: Operand(dtype=DType.f32, offset=base, strides=(64, 4, 0), loop_inc=(64, 256, 768))
    c.binary_imm(BinaryFunc.mul, tile(8192), tile(0), 2.0, 1, 16,
                 sync=Sync(wait_sem=0, wait_count=1, signal_sem=1))
    c.end_loop()
    c.end_loop()
    c.end_loop()
    c.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32, offset=8192), 2 * 3 * 4 * 64,
          sync=Sync(wait_sem=1, wait_count=24))
    p = b.finish()
    assert p.instruction_counts[0] == 9  # a small program for 24 tiles
    xs = _data((2, 3, 4, 16))
    np.testing.assert_array_equal(sim.run(p, {"x": xs}).outputs["y"], xs * 2)


def test_barrier_orders_cores():
    """Core 1 reads what core 0 wrote to device memory, after a barrier."""
    arch = sim.default_arch()
    b = sim.ProgramBuilder(arch, 2)
    x = b.add_buffer("x", sim.BufferKind.input, DType.f32, sim.HostDType.f32, [32])
    t = b.add_buffer("t", sim.BufferKind.scratch, DType.f32, sim.HostDType.f32, [32])
    y = b.add_buffer("y", sim.BufferKind.output, DType.f32, sim.HostDType.f32, [32])
    c0, c1 = b.core(0), b.core(1)
    c0.dma(Operand(dtype=DType.f32), Operand(buffer=x, dtype=DType.f32), 128, sync=Sync(signal_sem=0))
    c0.unary(UnaryFunc.neg, Operand(dtype=DType.f32, strides=(128, 4, 0)),
             Operand(dtype=DType.f32, strides=(128, 4, 0)), 1, 32, sync=Sync(wait_sem=0, wait_count=1, signal_sem=1))
    c0.dma(Operand(buffer=t, dtype=DType.f32), Operand(dtype=DType.f32), 128, sync=Sync(wait_sem=1, wait_count=1))
    c0.barrier()
    c1.barrier()
    c1.dma(Operand(dtype=DType.f32), Operand(buffer=t, dtype=DType.f32), 128, sync=Sync(signal_sem=0))
    c1.dma(Operand(buffer=y, dtype=DType.f32), Operand(dtype=DType.f32), 128, sync=Sync(wait_sem=0, wait_count=1))
    xs = _data((32,))
    np.testing.assert_array_equal(sim.run(b.finish(), {"x": xs}).outputs["y"], -xs)
