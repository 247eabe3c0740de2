"""Reductions and normalisations: kernel-level IR -> pipeline -> simulator, vs numpy."""

import numpy as np
import pytest

from kernels import amap, close, generic, kernel, rounded, run, softmax

ROW = ["parallel", "reduction"]
SIZES = [(1, 1), (3, 5), (64, 4096), (33, 9000), (2, 300000)]


def row_reduction(m, n, combiner, out_type="f32"):
    body = generic((m, n), [("%x", (m, n), "f16")], [("%y", (m,), out_type)],
                   [amap(2, "d0, d1"), amap(2, "d0")], """
%v = arith.extf %a0 : f16 to f32
spyre.yield %v : f32""", ROW, [combiner])
    return kernel("r", [("x", (m, n), "f16"), ("y", (m,), out_type)], body)


@pytest.mark.parametrize("m,n", SIZES)
@pytest.mark.parametrize("combiner,reference", [
    ("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_row_reductions(m, n, combiner, reference):
    x = np.random.default_rng(m + n).standard_normal((m, n)).astype(np.float16)
    out, _ = run(row_reduction(m, n, combiner), {"arg0": x})
    expected = reference(rounded(x).astype(np.float64), axis=1)
    close(out["arg1"], expected, "f32", rtol=1e-4, atol=1e-3 * np.sqrt(n))


@pytest.mark.parametrize("m,n", SIZES)
def test_argmax_over_tiles(m, n):
    x = np.random.default_rng(7).standard_normal((m, n)).astype(np.float16)
    out, _ = run(row_reduction(m, n, "argmax", "i32"), {"arg0": x})
    np.testing.assert_array_equal(out["arg1"], np.argmax(rounded(x), axis=1))


@pytest.mark.parametrize("m,n", [(4, 7), (32, 70000)])
def test_column_sum(m, n):
    # s[j] = sum_i x[i, j]: the reduced loop runs down the columns
    body = generic((n, m), [("%x", (m, n), "f32")], [("%s", (n,), "f32")],
                   [amap(2, "d1, d0"), amap(2, "d0")], "spyre.yield %a0 : f32",
                   ["parallel", "reduction"], ["sum"])
    x = np.random.default_rng(8).standard_normal((m, n)).astype(np.float32)
    out, _ = run(kernel("c", [("x", (m, n), "f32"), ("s", (n,), "f32")], body), {"arg0": x})
    close(out["arg1"], x.sum(axis=0), "f32", rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("m,n,combiner,reference", [
    (8192, 1024, "sum", np.sum), (16384, 64, "max", np.max), (4096, 96, "sum", np.sum)])
def test_column_reduction_of_a_narrow_tensor_reads_it_once(m, n, combiner, reference):
    # The reduced loop runs down the rows and stays on one core, so only the
    # n columns are shared: tiles narrower than a stick would pad every
    # device row (16 columns of 1024 on 32 cores moved 4x the input).
    body = generic((n, m), [("%x", (m, n), "f16")], [("%s", (n,), "f32")],
                   [amap(2, "d1, d0"), amap(2, "d0")], """
%v = arith.extf %a0 : f16 to f32
spyre.yield %v : f32""", ["parallel", "reduction"], [combiner])
    x = np.random.default_rng(m + n).standard_normal((m, n)).astype(np.float16)
    out, result = run(kernel("c", [("x", (m, n), "f16"), ("s", (n,), "f32")], body), {"arg0": x})
    close(out["arg1"], reference(rounded(x).astype(np.float64), axis=0), "f32", rtol=1e-4,
          atol=1e-3 * np.sqrt(m))
    read = sum(c["device_read_bytes"] for c in result.stats["cores"])
    stick_row = -(-n * 2 // 128) * 128  # a row of x in whole sticks
    # 96 columns: four tiles of 24 on four cores (a stick a row each) beat
    # two whole-stick tiles on two cores, whose SFU work would pace them.
    # The f32 partial sums of a cut reduction (spyre-split-reductions) are
    # read back too: under 1%.
    assert read <= 1.01 * m * stick_row * (1 if n % 64 == 0 else 2)


@pytest.mark.parametrize("images,positions,channels,units", [(2, 784, 128, 4), (1, 50, 64, 3)])
def test_max_over_a_few_units_of_channel_last_rows_reads_whole_rows(images, positions,
                                                                  channels, units):
    """Hiera's max over its mask units: x[image, unit, position, channel]
    reduced over the units. Tiled along the positions (fewer tiles per
    core) the channel rows moved element by element, a stick per f16."""
    n_in = images * units * positions * channels
    body = generic((images, positions, channels, units), [("%x", (n_in,), "f16")],
                   [("%y", (images * positions * channels,), "f16")],
                   [amap(4, f"d0 * {units * positions * channels} + d3 * {positions * channels}"
                            f" + d1 * {channels} + d2"),
                    amap(4, f"d0 * {positions * channels} + d1 * {channels} + d2")],
                   "spyre.yield %a0 : f16", ["parallel", "parallel", "parallel", "reduction"],
                   ["max"])
    src = kernel("m", [("x", (n_in,), "f16"), ("y", (images * positions * channels,), "f16")],
                 body)
    x = np.random.default_rng(units).standard_normal(n_in).astype(np.float16)
    out, result = run(src, {"arg0": x})
    expected = rounded(x).reshape(images, units, positions, channels).max(axis=1)
    close(out["arg1"], expected.reshape(-1))
    read = sum(c["device_read_bytes"] for c in result.stats["cores"])
    assert read <= 1.05 * x.nbytes


@pytest.mark.parametrize("m,n,combiner,reference", [
    (1, 1 << 20, "sum", np.sum), (3, 1 << 18, "max", np.max), (2, 3 * (1 << 16), "min", np.min)])
def test_reduction_with_few_outputs_runs_on_every_core(m, n, combiner, reference):
    # Fewer output rows than cores: the reduced loop is cut into parts, each
    # reduced on a core into a partial result, and the partials combined.
    x = np.random.default_rng(n).standard_normal((m, n)).astype(np.float16)
    out, result = run(row_reduction(m, n, combiner), {"arg0": x})
    close(out["arg1"], reference(rounded(x).astype(np.float64), axis=1), "f32", rtol=1e-4,
          atol=1e-3 * np.sqrt(n))
    busy = [c["engines"]["sfu"]["busy_cycles"] for c in result.stats["cores"]]
    assert sum(b > 0 for b in busy) >= 24, busy


@pytest.mark.parametrize("combiner,hit", [("any", None), ("any", 0), ("any", 77777),
                                          ("any", -1), ("all", None), ("all", 123456)])
def test_any_and_all_with_one_output_run_on_every_core(combiner, hit):
    # Booleans are cut like float sums (the order of an OR does not matter):
    # T5 asks whether an fp16 layer overflowed with an any() over it.
    n = 1 << 18
    x = np.zeros((1, n), np.float16)
    if hit is not None:
        x[0, hit] = 8
    compare = "ogt" if combiner == "any" else "olt"
    body = generic((1, n), [("%x", (1, n), "f16")], [("%y", (1,), "i1")],
                   [amap(2, "d0, d1"), amap(2, "d0")], f"""
%v = arith.extf %a0 : f16 to f32
%t = arith.constant 4.0 : f32
%c = arith.cmpf {compare}, %v, %t : f32
spyre.yield %c : i1""", ROW, [combiner])
    out, result = run(kernel("b", [("x", (1, n), "f16"), ("y", (1,), "i1")], body), {"arg0": x})
    expected = (x > 4).any() if combiner == "any" else (x < 4).all()
    assert bool(np.asarray(out["arg1"]).reshape(-1)[0]) == bool(expected)
    busy = [c["engines"]["sfu"]["busy_cycles"] for c in result.stats["cores"]]
    assert sum(b > 0 for b in busy) >= 24, busy


@pytest.mark.parametrize("m,n", [(1, 1), (5, 77), (16, 50000)])
def test_welford(m, n):
    body = generic((m, n), [("%x", (m, n), "f32")],
                   [("%mean", (m,), "f32"), ("%m2", (m,), "f32"), ("%w", (m,), "f32")],
                   [amap(2, "d0, d1"), amap(2, "d0"), amap(2, "d0"), amap(2, "d0")],
                   "spyre.yield %a0 : f32", ROW, ["welford"])
    src = kernel("w", [("x", (m, n), "f32"), ("mean", (m,), "f32"), ("m2", (m,), "f32"),
                       ("w", (m,), "f32")], body)
    x = (np.random.default_rng(9).standard_normal((m, n)) * 3 + 1).astype(np.float32)
    out, _ = run(src, {"arg0": x})
    close(out["arg1"], x.mean(axis=1), "f32", rtol=1e-4, atol=1e-4)
    close(out["arg2"], ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1), "f32",
          rtol=1e-4, atol=1e-3)
    close(out["arg3"], np.full(m, n), "f32")


def test_full_reduction_of_a_matrix():
    # Both loops reduce: tiles of the outer one accumulate too.
    m, n = 37, 3000
    body = generic((m, n), [("%x", (m, n), "f32")], [("%s", (1,), "f32")],
                   [amap(2, "d0, d1"), amap(2, "0")], "spyre.yield %a0 : f32",
                   ["reduction", "reduction"], ["sum"])
    x = np.random.default_rng(10).standard_normal((m, n)).astype(np.float32)
    out, _ = run(kernel("s", [("x", (m, n), "f32"), ("s", (1,), "f32")], body), {"arg0": x})
    close(out["arg1"], [x.sum()], "f32", rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("m,n", [(1, 1), (3, 7), (128, 1000), (64, 20000)])
def test_softmax(m, n):
    x = (np.random.default_rng(11).standard_normal((m, n)) * 4).astype(np.float16)
    out, _ = run(softmax(m, n), {"arg0": x})
    r = rounded(x).astype(np.float64)
    e = np.exp(r - r.max(axis=1, keepdims=True))
    close(out["arg1"], e / e.sum(axis=1, keepdims=True), atol=1e-4)


@pytest.mark.parametrize("m,n", [(2, 3), (50, 768), (8, 40000)])
def test_layernorm(m, n):
    maps2, row, col = amap(2, "d0, d1"), amap(2, "d0"), amap(2, "d1")
    stats = [("%mean", (m,), "f32"), ("%m2", (m,), "f32"), ("%cnt", (m,), "f32")]
    body = generic((m, n), [("%x", (m, n), "f16")], stats, [maps2, row, row, row], """
%v = arith.extf %a0 : f16 to f32
spyre.yield %v : f32""", ROW, ["welford"])
    body += generic((m, n), [("%x", (m, n), "f16"), stats[0], stats[1], stats[2],
                             ("%w", (n,), "f16"), ("%b", (n,), "f16")],
                    [("%y", (m, n), "f16")], [maps2, row, row, row, col, col, maps2], """
%v = arith.extf %a0 : f16 to f32
%d = arith.subf %v, %a1 : f32
%var = arith.divf %a2, %a3 : f32
%eps = arith.constant 1.0e-5 : f32
%ve = arith.addf %var, %eps : f32
%rs = math.rsqrt %ve : f32
%n = arith.mulf %d, %rs : f32
%wv = arith.extf %a4 : f16 to f32
%bv = arith.extf %a5 : f16 to f32
%s = arith.mulf %n, %wv : f32
%o = arith.addf %s, %bv : f32
%t = arith.truncf %o : f32 to f16
spyre.yield %t : f16""")
    src = kernel("ln", [("x", (m, n), "f16"), ("w", (n,), "f16"), ("b", (n,), "f16"),
                        ("y", (m, n), "f16")], body,
                 temps=[("mean", (m,), "f32"), ("m2", (m,), "f32"), ("cnt", (m,), "f32")])
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(np.float16)
    w = rng.standard_normal(n).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    out, _ = run(src, {"arg0": x, "arg1": w, "arg2": b})
    r = rounded(x).astype(np.float64)
    norm = (r - r.mean(axis=1, keepdims=True)) / np.sqrt(r.var(axis=1, keepdims=True) + 1e-5)
    close(out["arg3"], norm * rounded(w) + rounded(b), atol=2e-2 if n > 2 else 1e-2)


@pytest.mark.parametrize("m,n", [(1, 5), (40, 4096)])
def test_rmsnorm(m, n):
    maps2, row, col = amap(2, "d0, d1"), amap(2, "d0"), amap(2, "d1")
    body = generic((m, n), [("%x", (m, n), "f16")], [("%ss", (m,), "f32")], [maps2, row], """
%v = arith.extf %a0 : f16 to f32
%q = arith.mulf %v, %v : f32
spyre.yield %q : f32""", ROW, ["sum"])
    body += generic((m, n), [("%x", (m, n), "f16"), ("%ss", (m,), "f32"), ("%w", (n,), "f16")],
                    [("%y", (m, n), "f16")], [maps2, row, col, maps2], f"""
%v = arith.extf %a0 : f16 to f32
%count = arith.constant {float(n)} : f32
%ms = arith.divf %a1, %count : f32
%eps = arith.constant 1.0e-6 : f32
%me = arith.addf %ms, %eps : f32
%rs = math.rsqrt %me : f32
%nv = arith.mulf %v, %rs : f32
%wv = arith.extf %a2 : f16 to f32
%o = arith.mulf %nv, %wv : f32
%t = arith.truncf %o : f32 to f16
spyre.yield %t : f16""")
    src = kernel("rms", [("x", (m, n), "f16"), ("w", (n,), "f16"), ("y", (m, n), "f16")],
                 body, temps=[("ss", (m,), "f32")])
    rng = np.random.default_rng(13)
    x = rng.standard_normal((m, n)).astype(np.float16)
    w = rng.standard_normal(n).astype(np.float16)
    out, _ = run(src, {"arg0": x, "arg1": w})
    r = rounded(x).astype(np.float64)
    close(out["arg2"], r / np.sqrt((r * r).mean(axis=1, keepdims=True) + 1e-6) * rounded(w))


def test_softmax_is_one_group_that_reads_its_input_once():
    # spyre-fuse-rows keeps the row statistics in LX: the card reads x once
    # (whole sticks per row) and writes y once.
    m, n = 64, 1000
    from spyre_mlir import ir
    from spyre_mlir.compiler import compile_module
    with ir.Context():
        module = ir.Module.parse(softmax(m, n))
        compile_module(module, stop_after="fuse")
        assert str(module).count("spyre.fused") == 1
    x = np.random.default_rng(14).standard_normal((m, n)).astype(np.float16)
    _, result = run(softmax(m, n), {"arg0": x})
    read = sum(c["device_read_bytes"] for c in result.stats["cores"])
    written = sum(c["device_write_bytes"] for c in result.stats["cores"])
    # At most whole sticks per row, one more as these 2000-byte rows are not
    # stick aligned; a core's rows follow each other and move as one run, so
    # only its run's ends are padded.
    row_bytes = (-(-n * 2 // 128) + 1) * 128
    assert m * n * 2 <= read < m * row_bytes and m * n * 2 <= written < m * row_bytes
