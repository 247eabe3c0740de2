"""Matmuls, gathers and data movement: kernel-level IR -> pipeline -> simulator, vs numpy."""

import numpy as np
import pytest

from kernels import buf, close, kernel, rounded, run
from kernels import matmul as matmul_kernel


def reference(a, b):
    return rounded(a).astype(np.float64) @ rounded(b).astype(np.float64)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (128, 128, 128), (4096, 64, 64),
                                   (64, 65536, 64), (300, 200, 100)])
@pytest.mark.parametrize("out", ["f32", "f16"])
def test_matmul(m, k, n, out):
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    result, stats = run(matmul_kernel((m, k), (k, n), (m, n), out), {"arg0": a, "arg1": b})
    tol = 1e-5 * np.sqrt(k) if out == "f32" else 2.0 ** -8
    close(result["arg2"], reference(a, b), out, rtol=tol, atol=tol * np.sqrt(k))
    assert stats.stats["kernels"][1]["macs"] == m * k * n


@pytest.mark.parametrize("m,k,n", [(128, 64, 192), (64, 4096, 64)])
def test_f16_output_is_the_f32_sum_rounded(m, k, n):
    # A 16-bit output is the f32 sum rounded once, whether the PT writes it
    # (all of K in one step: no conversion on the SFU) or the SFU narrows
    # the f32 tile in place after the last step.
    from spyre_mlir import simulator as sim
    rng = np.random.default_rng(k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    wide, _ = run(matmul_kernel((m, k), (k, n), (m, n), "f32"), {"arg0": a, "arg1": b})
    narrow, stats = run(matmul_kernel((m, k), (k, n), (m, n), "f16"), {"arg0": a, "arg1": b})
    expected = sim.dl16().round(wide["arg2"])
    np.testing.assert_array_equal(narrow["arg2"].astype(np.float32), expected)
    converted = stats.stats["kernels"][1]["vector_ops"]
    assert converted == (0 if k <= 64 else m * n)


@pytest.mark.parametrize("m,k,n,cores", [(128, 256, 640, 3), (64, 1024, 1600, 32),
                                         (96, 512, 1000, 7), (256, 2048, 3200, 4)])
def test_cores_split_columns_by_sticks(m, k, n, cores):
    # Columns go to cores in whole sticks rather than whole tiles, so tiles
    # differ in width from core to core: every column is computed once, and
    # the busiest core does at most one stick of rows x K more per tile
    # than the average core.
    rng = np.random.default_rng(n)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    result, stats = run(matmul_kernel((m, k), (k, n), (m, n), "f16"),
                        {"arg0": a, "arg1": b}, cores=cores)
    close(result["arg2"], reference(a, b), "f16", rtol=2.0 ** -8, atol=2.0 ** -8 * np.sqrt(k))
    macs = [core["macs"] for core in stats.stats["cores"] if core["macs"]]
    assert sum(macs) == m * k * n
    assert max(macs) <= m * k * n / len(macs) + m * k * 64 * 2, macs


def test_grids_are_priced_at_the_columns_their_cores_have():
    # Granite-8B's MLP projection: 12800 columns are 200 sticks, and K takes
    # several steps. On 16 grid columns the busiest core has 13 sticks, on
    # 13 it has 16; priced at their widest tile (four of 4 sticks) both
    # looked alike and the 13 columns won, leaving 6 cores idle.
    m, k, n = 512, 4096, 12800
    a, b = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16)
    result, stats = run(matmul_kernel((m, k), (k, n), (m, n), "f16"), {"arg0": a, "arg1": b},
                        cores=32)
    assert not result["arg2"].any()
    macs = [core["macs"] for core in stats.stats["cores"]]
    assert len(macs) == 32 and all(macs), macs
    assert max(macs) == (m // 2) * k * 13 * 64


def test_cores_share_operand_panels():
    # The planner puts the cores in a grid whose rows (columns) load the same
    # lhs (rhs) panel in the same cycle, which the card reads once: the
    # compiled 1024^3 product keeps up with the hand-written 4 x 8 grid
    # program; with every core reading its own panels it took 1.9x as long.
    from spyre_mlir import simulator as sim
    from spyre_mlir.simulator_programs import matmul_program
    size = 1024
    rng = np.random.default_rng(8)
    a = rng.standard_normal((size, size)).astype(np.float16)
    b = rng.standard_normal((size, size)).astype(np.float16)
    result, stats = run(matmul_kernel((size, size), (size, size), (size, size), "f16"),
                        {"arg0": a, "arg1": b}, cores=32)
    close(result["arg2"], reference(a, b), "f16", rtol=2.0 ** -8, atol=2.0 ** -8 * size)
    hand = sim.run(matmul_program(sim.default_arch(), size, size, size, (4, 8)), {"a": a, "b": b})
    assert stats.cycles <= 1.1 * hand.cycles, (stats.cycles, hand.cycles)


@pytest.mark.parametrize("m,k,n", [(1000, 96, 1000), (700, 300, 130)])
def test_grid_with_uneven_blocks(m, k, n):
    # Row and column tiles that the grid does not divide evenly: some cores
    # take one tile more than others, every output tile still once.
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    result, stats = run(matmul_kernel((m, k), (k, n), (m, n), "f32"), {"arg0": a, "arg1": b},
                        cores=32)
    tol = 1e-5 * np.sqrt(k)
    close(result["arg2"], reference(a, b), "f32", rtol=tol, atol=tol * np.sqrt(k))
    assert stats.stats["kernels"][1]["macs"] == m * k * n


@pytest.mark.parametrize("m,k,n", [(4096, 768, 3072), (3072, 64, 640), (640, 64, 3072)])
def test_panels_stay_in_lx_when_k_fits_one_step(m, k, n):
    # A core keeps the operand panel its walk shares from tile to tile (the
    # lhs along its columns, the rhs down its rows, whichever reads fewer
    # bytes): the GPT-2 MLP up-projection runs within 1.75x of the roofline
    # (1.59x since a core's stores flow beside its loads, 1.46x when they
    # alternated; 2.87x when every output tile re-read both panels).
    from spyre_mlir import ir
    from spyre_mlir.passmanager import PassManager
    rng = np.random.default_rng(k)
    a = (rng.standard_normal((m, k)) / k ** 0.25).astype(np.float16)
    b = (rng.standard_normal((k, n)) / k ** 0.25).astype(np.float16)
    source = matmul_kernel((m, k), (k, n), (m, n), "f16")
    result, stats = run(source, {"arg0": a, "arg1": b}, cores=32)
    close(result["arg2"], reference(a, b), "f16", rtol=2.0 ** -8, atol=2.0 ** -8 * np.sqrt(k))
    with ir.Context():
        module = ir.Module.parse(source)
        PassManager.parse("builtin.module(spyre-annotate-cost)").run(module.operation)
        cost = module.body.operations[0].attributes["spyre.cost"]
        bound = ir.FloatAttr(cost["bound_cycles"]).value
    assert stats.cycles <= 1.75 * bound, (stats.cycles, bound)


@pytest.mark.parametrize("m,k,n,cores,flags,out", [
    (600, 1500, 520, 2, "", "f16"), (600, 1500, 520, 3, "transpose_lhs", "f32"),
    (520, 1100, 700, 4, "transpose_rhs", "f16"), (1000, 2100, 90, 5, "", "f16")])
def test_tiles_walking_k_in_pairs(m, k, n, cores, flags, out):
    # K in several steps and several tiles per core: pairs of tiles that share
    # a panel walk K together (a lone tile when a core has an odd count), the
    # first one's store split over two steps, the core's last step in two row
    # halves; every output element still once and right.
    a_shape = (k, m) if "lhs" in flags else (m, k)
    b_shape = (n, k) if "rhs" in flags else (k, n)
    rng = np.random.default_rng(m + n)
    a = rng.standard_normal(a_shape).astype(np.float16)
    b = rng.standard_normal(b_shape).astype(np.float16)
    result, stats = run(matmul_kernel(a_shape, b_shape, (m, n), out, flags=flags),
                        {"arg0": a, "arg1": b}, cores=cores)
    ra = a.T if "lhs" in flags else a
    rb = b.T if "rhs" in flags else b
    tol = 1e-5 * np.sqrt(k) if out == "f32" else 2.0 ** -8
    close(result["arg2"], reference(ra, rb), out, rtol=tol, atol=tol * np.sqrt(k))
    assert stats.stats["kernels"][1]["macs"] == m * k * n


def test_square_2048_product_within_340_us():
    # Issue 13's bar, under IBM's measured 388 us: pairs of tiles sharing the
    # rhs panel walk K together and the stores leave the loads' way (321.8 us
    # on the card whose PT feed gives the measured sustained rate; 426.6 us
    # with every tile re-reading its panels and the stores blocking loads, on
    # the earlier card).
    from spyre_mlir import simulator as sim
    size = 2048
    rng = np.random.default_rng(13)
    a = rng.standard_normal((size, size)).astype(np.float16)
    b = rng.standard_normal((size, size)).astype(np.float16)
    _, stats = run(matmul_kernel((size, size), (size, size), (size, size), "f16"),
                   {"arg0": a, "arg1": b}, cores=32)
    assert stats.cycles / sim.default_arch().clock_hz <= 340e-6, stats.cycles


def test_batched_grid_more_batches_than_cores():
    bsz, m, k, n = 40, 64, 96, 64
    rng = np.random.default_rng(9)
    a = rng.standard_normal((bsz, m, k)).astype(np.float16)
    b = rng.standard_normal((bsz, k, n)).astype(np.float16)
    result, stats = run(matmul_kernel((bsz, m, k), (bsz, k, n), (bsz, m, n), op="batch_matmul"),
                        {"arg0": a, "arg1": b}, cores=32)
    close(result["arg2"], reference(a, b), "f32", rtol=1e-4, atol=1e-3)
    assert stats.stats["kernels"][1]["macs"] == bsz * m * k * n


@pytest.mark.parametrize("flags", ["transpose_lhs", "transpose_rhs", "transpose_lhs transpose_rhs"])
def test_transposed_inputs(flags):
    m, k, n = 96, 200, 72
    a_shape = (k, m) if "lhs" in flags else (m, k)
    b_shape = (n, k) if "rhs" in flags else (k, n)
    rng = np.random.default_rng(5)
    a = rng.standard_normal(a_shape).astype(np.float16)
    b = rng.standard_normal(b_shape).astype(np.float16)
    result, _ = run(matmul_kernel(a_shape, b_shape, (m, n), flags=flags), {"arg0": a, "arg1": b})
    ra = a.T if "lhs" in flags else a
    rb = b.T if "rhs" in flags else b
    close(result["arg2"], reference(ra, rb), "f32", rtol=1e-4, atol=1e-3)


def test_batched_and_accumulating():
    bsz, m, k, n = 6, 40, 130, 50
    rng = np.random.default_rng(6)
    a = rng.standard_normal((bsz, m, k)).astype(np.float16)
    b = rng.standard_normal((bsz, k, n)).astype(np.float16)
    c = rng.standard_normal((bsz, m, n)).astype(np.float32)
    src = matmul_kernel((bsz, m, k), (bsz, k, n), (bsz, m, n), flags="accumulate",
                        op="batch_matmul")
    # inout buffers are bound without a copy: the run updates the array passed
    result, _ = run(src, {"arg0": a, "arg1": b, "arg2": c.copy()})
    close(result["arg2"], c + reference(a, b), "f32", rtol=1e-4, atol=1e-3)


def test_f32_inputs_are_rounded_like_the_matrix_unit():
    m, k, n = 33, 17, 65
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    result, _ = run(matmul_kernel((m, k), (k, n), (m, n), dtype="f32"), {"arg0": a, "arg1": b})
    from spyre_mlir import simulator as sim
    r = sim.dl16()
    close(result["arg2"], r.round(a).astype(np.float64) @ r.round(b).astype(np.float64), "f32",
          rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("vocab,dim,ids", [(10, 1, (1,)), (1000, 96, (3, 7)),
                                           (50, 70000, (5,)), (30000, 256, (4, 512))])
def test_embedding_gather(vocab, dim, ids):
    body = (f"  spyre.gather ins(%t, %i : {buf((vocab, dim), 'f16')}, {buf(ids, 'i32')}) "
            f"outs(%o : {buf(ids + (dim,), 'f16')}) axis = 0\n")
    src = kernel("emb", [("t", (vocab, dim), "f16"), ("i", ids, "i32"),
                         ("o", ids + (dim,), "f16")], body)
    rng = np.random.default_rng(vocab)
    table = rng.standard_normal((vocab, dim)).astype(np.float16)
    index = rng.integers(0, vocab, ids).astype(np.int32)
    result, _ = run(src, {"arg0": table, "arg1": index})
    np.testing.assert_array_equal(result["arg2"], rounded(table)[index])


def test_gather_index_out_of_range_is_an_error():
    from spyre_mlir import simulator as sim
    body = (f"  spyre.gather ins(%t, %i : {buf((10, 4), 'f16')}, {buf((3,), 'i32')}) "
            f"outs(%o : {buf((3, 4), 'f16')}) axis = 0\n")
    src = kernel("emb", [("t", (10, 4), "f16"), ("i", (3,), "i32"), ("o", (3, 4), "f16")], body)
    with pytest.raises(sim.SimulationError, match="index"):
        run(src, {"arg0": np.zeros((10, 4), np.float16), "arg1": np.array([1, 10, 2], np.int32)})


@pytest.mark.parametrize("shape,perm", [((1, 1), (1, 0)), ((64, 300), (1, 0)),
                                        ((3, 130, 5), (2, 0, 1)), ((2048, 1024), (1, 0))])
def test_permute(shape, perm):
    out_shape = tuple(shape[p] for p in perm)
    body = (f"  spyre.permute ins(%x : {buf(shape, 'f16')}) outs(%y : {buf(out_shape, 'f16')}) "
            f"permutation = [{', '.join(map(str, perm))}]\n")
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float16)
    result, _ = run(kernel("p", [("x", shape, "f16"), ("y", out_shape, "f16")], body),
                    {"arg0": x})
    np.testing.assert_array_equal(result["arg1"], rounded(x).transpose(perm))


def test_concat_and_strided_slice():
    body = (f"  spyre.concat ins(%a, %b : {buf((5, 8), 'f16')}, {buf((5, 131), 'f16')}) "
            f"outs(%c : {buf((5, 139), 'f16')}) dim = 1\n"
            f"  spyre.slice ins(%c : {buf((5, 139), 'f16')}) outs(%d : {buf((2, 45), 'f16')}) "
            f"offsets [1, 3] strides [2, 3]\n")
    src = kernel("cs", [("a", (5, 8), "f16"), ("b", (5, 131), "f16"), ("c", (5, 139), "f16"),
                        ("d", (2, 45), "f16")], body)
    rng = np.random.default_rng(9)
    a = rng.standard_normal((5, 8)).astype(np.float16)
    b = rng.standard_normal((5, 131)).astype(np.float16)
    # c is written in two parts before the slice reads it: an inout buffer
    # (LowerToHw takes only a whole first write for an output), its content
    # on entry overwritten.
    result, _ = run(src, {"arg0": a, "arg1": b, "arg2": np.zeros((5, 139), np.float16)})
    c = np.concatenate([rounded(a), rounded(b)], axis=1)
    np.testing.assert_array_equal(result["arg2"], c)
    np.testing.assert_array_equal(result["arg3"], c[1:5:2, 3:138:3])


def test_broadcast_and_fill():
    body = (f"  spyre.broadcast ins(%v : {buf((70,), 'f32')}) outs(%o : {buf((9, 70), 'f32')}) "
            f"dimensions = [0]\n"
            f"  spyre.fill 2.5 : f32 outs(%f : {buf((3, 4), 'f32')})\n")
    src = kernel("bf", [("v", (70,), "f32"), ("o", (9, 70), "f32"), ("f", (3, 4), "f32")], body)
    v = np.arange(70, dtype=np.float32)
    result, _ = run(src, {"arg0": v})
    np.testing.assert_array_equal(result["arg1"], np.broadcast_to(v, (9, 70)))
    np.testing.assert_array_equal(result["arg2"], np.full((3, 4), 2.5, np.float32))


@pytest.mark.parametrize("m", [200, 800])
def test_rows_that_are_not_a_power_of_two_run_in_step(m):
    # Row tiles that divide the rows exactly keep the cores of a grid column
    # in step, so they share the rhs panels' reads: fewer rows never take
    # longer than 1024 (800 rows in 256-row tiles took 216.2 us against
    # 192.0 for 1024; 200 rows 138.1 us), and the rhs is read once.
    rng = np.random.default_rng(m)
    k = n = 2048
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    result, stats = run(matmul_kernel((m, k), (k, n), (m, n), "f16"), {"arg0": a, "arg1": b})
    close(result["arg2"], reference(a, b), "f16", rtol=2.0 ** -8, atol=2.0 ** -8 * np.sqrt(k))
    _, full = run(matmul_kernel((1024, k), (k, n), (1024, n), "f16"),
                  {"arg0": np.zeros((1024, k), np.float16), "arg1": b})
    assert stats.cycles < full.cycles
    assert stats.stats["bus_read_bytes"] <= (m * k + k * n) * 2 * 1.01
