"""Kernel-level elementwise IR -> C++ pipeline -> binary -> simulator, vs numpy."""

import numpy as np
import pytest

from kernels import amap, close, generic, kernel, rounded, run

SIZES = [(1, 1), (3, 5), (7, 130), (100, 300), (257, 1031)]


@pytest.mark.parametrize("m,n", SIZES)
def test_chain_with_broadcasts(m, n):
    # y = exp(x) * b[col] + c[row] - 1, into f16
    ins = [("%x", (m, n), "f16"), ("%b", (n,), "f16"), ("%c", (m, 1), "f32")]
    body = generic(
        (m, n), ins, [("%y", (m, n), "f16")],
        [amap(2, "d0, d1"), amap(2, "d1"), amap(2, "d0, 0"), amap(2, "d0, d1")], """
%e = math.exp %a0 : f16
%p = arith.mulf %e, %a1 : f16
%w = arith.extf %p : f16 to f32
%s = arith.addf %w, %a2 : f32
%one = arith.constant 1.0 : f32
%r = arith.subf %s, %one : f32
%t = arith.truncf %r : f32 to f16
spyre.yield %t : f16""")
    src = kernel("chain", [("x", (m, n), "f16"), ("b", (n,), "f16"), ("c", (m, 1), "f32"),
                           ("y", (m, n), "f16")], body)
    rng = np.random.default_rng(m * n)
    x = rng.standard_normal((m, n)).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    c = rng.standard_normal((m, 1)).astype(np.float32)
    out, _ = run(src, {"arg0": x, "arg1": b, "arg2": c})
    expected = np.exp(rounded(x)) * rounded(b) + c - 1
    close(out["arg3"], expected)


def test_constant_on_the_left_and_select():
    # y = x > 0 ? 2 - x : x * 0.5 (a constant first operand of a non-commutative op)
    m, n = 33, 70
    body = generic((m, n), [("%x", (m, n), "f32")], [("%y", (m, n), "f32")],
                   [amap(2, "d0, d1"), amap(2, "d0, d1")], """
%zero = arith.constant 0.0 : f32
%two = arith.constant 2.0 : f32
%half = arith.constant 0.5 : f32
%pos = arith.cmpf ogt, %a0, %zero : f32
%l = arith.subf %two, %a0 : f32
%r = arith.mulf %a0, %half : f32
%s = arith.select %pos, %l, %r : f32
spyre.yield %s : f32""")
    src = kernel("sel", [("x", (m, n), "f32"), ("y", (m, n), "f32")], body)
    x = np.random.default_rng(1).standard_normal((m, n)).astype(np.float32)
    out, _ = run(src, {"arg0": x})
    close(out["arg1"], np.where(x > 0, 2 - x, x * 0.5), "f32")


def test_iota_and_integer_math():
    # y[i, j] = (i * 7 + j) mod 5, computed in i32 from spyre.index_expr
    m, n = 20, 90
    body = generic((m, n), [], [("%y", (m, n), "i32")], [amap(2, "d0, d1")], """
%i = spyre.index_expr affine_map<(d0, d1) -> (d0 * 7 + d1)> : i32
%five = arith.constant 5 : i32
%r = arith.remsi %i, %five : i32
spyre.yield %r : i32""")
    out, _ = run(kernel("iota", [("y", (m, n), "i32")], body), {})
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    np.testing.assert_array_equal(out["arg0"], (i * 7 + j) % 5)


def test_three_dimensional_transposed_read():
    # y[a, b, c] = x[c, a, b] + 1: the input is read across its rows
    shape = (5, 6, 70)
    body = generic(shape, [("%x", (70, 5, 6), "f16")], [("%y", shape, "f16")],
                   [amap(3, "d2, d0, d1"), amap(3, "d0, d1, d2")], """
%one = arith.constant 1.0 : f16
%r = arith.addf %a0, %one : f16
spyre.yield %r : f16""")
    src = kernel("tr", [("x", (70, 5, 6), "f16"), ("y", shape, "f16")], body)
    x = np.random.default_rng(2).standard_normal((70, 5, 6)).astype(np.float16)
    out, _ = run(src, {"arg0": x})
    close(out["arg1"], rounded(x).transpose(1, 2, 0) + 1)


def test_larger_than_the_cards_lx():
    # 24M f16 elements: 48 MiB in and 48 MiB out, 1.5x the LX of all 32 cores.
    m, n = 6144, 4096
    body = generic((m, n), [("%x", (m, n), "f16")], [("%y", (m, n), "f16")],
                   [amap(2, "d0, d1"), amap(2, "d0, d1")], """
%two = arith.constant 2.0 : f16
%r = arith.mulf %a0, %two : f16
%s = math.tanh %r : f16
spyre.yield %s : f16""")
    x = np.random.default_rng(3).standard_normal((m, n)).astype(np.float16)
    out, result = run(kernel("big", [("x", (m, n), "f16"), ("y", (m, n), "f16")], body),
                      {"arg0": x})
    close(out["arg1"], np.tanh(rounded(x) * 2))
    # Every core worked.
    assert all(c["device_read_bytes"] > 0 for c in result.stats["cores"])


def test_sfu_heavy_rows_overlap_their_transfers():
    # 512 rows on 32 cores are 16 rows a core, which fit LX as one tile.
    # With this much SFU work per element each core cuts them into two
    # tiles: one's loads and stores overlap the other's SFU work. A small
    # copy (2 rows a core), all transfers, keeps one tile a core: a second
    # would add more latency than its store beside the other's load saves.
    m, n = 512, 2048
    args = [("x", (m, n), "f16"), ("y", (m, n), "f16")]
    maps = [amap(2, "d0, d1"), amap(2, "d0, d1")]
    heavy = generic((m, n), [("%x", (m, n), "f16")], [("%y", (m, n), "f16")], maps, """
%w = arith.extf %a0 : f16 to f32
%e = math.exp %w : f32
%s = arith.mulf %e, %w : f32
%t = math.tanh %s : f32
%r = arith.truncf %t : f32 to f16
spyre.yield %r : f16""")
    x = np.random.default_rng(5).standard_normal((m, n)).astype(np.float16)
    out, result = run(kernel("heavy", args, heavy), {"arg0": x})
    w = rounded(x).astype(np.float64)
    close(out["arg1"], np.tanh(np.exp(w) * w))
    for core in result.stats["cores"]:
        dma, sfu = core["engines"]["dma"], core["engines"]["sfu"]
        assert dma["instructions"] == 4  # two loads, two stores
        assert result.stats["cycles"] < dma["busy_cycles"] + sfu["busy_cycles"]
    m = 64
    args = [("x", (m, n), "f16"), ("y", (m, n), "f16")]
    copy = generic((m, n), [("%x", (m, n), "f16")], [("%y", (m, n), "f16")], maps,
                   "spyre.yield %a0 : f16")
    out, result = run(kernel("copy", args, copy), {"arg0": x[:m]})
    np.testing.assert_array_equal(out["arg1"], rounded(x[:m]))
    assert all(c["engines"]["dma"]["instructions"] == 2 for c in result.stats["cores"])


def test_sfu_heavy_flat_elementwise_overlaps_its_transfers():
    # A flat domain (a pointwise op over a contiguous tensor) has one loop,
    # cut the same way: two tiles a core.
    n = 1 << 20
    body = generic((n,), [("%x", (n,), "f16")], [("%y", (n,), "f16")],
                   [amap(1, "d0"), amap(1, "d0")], """
%w = arith.extf %a0 : f16 to f32
%e = math.exp %w : f32
%t = math.tanh %e : f32
%r = arith.truncf %t : f32 to f16
spyre.yield %r : f16""")
    x = np.random.default_rng(6).standard_normal(n).astype(np.float16)
    out, result = run(kernel("flat", [("x", (n,), "f16"), ("y", (n,), "f16")], body), {"arg0": x})
    close(out["arg1"], np.tanh(np.exp(rounded(x).astype(np.float64))))
    assert all(c["engines"]["dma"]["instructions"] == 4 for c in result.stats["cores"])


def test_fewer_cores_on_request():
    m, n = 64, 64
    body = generic((m, n), [("%x", (m, n), "f32")], [("%y", (m, n), "f32")],
                   [amap(2, "d0, d1"), amap(2, "d0, d1")], """
%r = math.sqrt %a0 : f32
spyre.yield %r : f32""")
    x = np.random.default_rng(4).random((m, n)).astype(np.float32)
    out, result = run(kernel("k", [("x", (m, n), "f32"), ("y", (m, n), "f32")], body),
                      {"arg0": x}, cores=3)
    close(out["arg1"], np.sqrt(x), "f32")
    assert len(result.stats["cores"]) == 3
