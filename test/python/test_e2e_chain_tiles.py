"""The chain of a multilayer perceptron (ChainPlan) on tiles other than the
one its estimate picks: the row groups, hidden slices, chunks and output
blocks change which cores exchange what and in which order, and which of them
the estimate picks changes with the shapes and the card description. Each
tile the plan accepts must compute the same values, against numpy. (One
slice per row group once skipped the wait for the second product: wrong
outputs on the tiles of 64-wide models.)"""

import itertools
import math

import numpy as np
import pytest

from kernels import close, rounded
from spyre_mlir import compiler
from spyre_mlir import simulator as sim
from spyre_mlir.dialects import spyre
from spyre_mlir.ir import Context, DenseI64ArrayAttr, MLIRError


def _mlp(m, d, f):
    """tanh(x W1^T + b1) W2^T + residual, as the Inductor export writes it."""
    def buf(*shape):
        return f"!spyre.buffer<{'x'.join(map(str, shape))}xf16>"
    return f"""#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
spyre.kernel @mlp(%x: {buf(m, d)}, %w1: {buf(f, d)}, %b1: {buf(f)}, %w2: {buf(d, f)},
                  %res: {buf(m, d)}, %y: {buf(m, d)}) {{
  %p = spyre.alloc() : {buf(m, f)}
  spyre.matmul transpose_rhs ins(%x, %w1 : {buf(m, d)}, {buf(f, d)}) outs(%p : {buf(m, f)})
  %h = spyre.alloc() : {buf(m, f)}
  spyre.generic domain [{m}, {f}] {{indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}}
      ins(%p, %b1 : {buf(m, f)}, {buf(f)}) outs(%h : {buf(m, f)}) {{
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = math.tanh %s : f32
    %r = arith.truncf %t : f32 to f16
    spyre.yield %r : f16
  }}
  spyre.dealloc %p : {buf(m, f)}
  %q = spyre.alloc() : {buf(m, d)}
  spyre.matmul transpose_rhs ins(%h, %w2 : {buf(m, f)}, {buf(d, f)}) outs(%q : {buf(m, d)})
  spyre.dealloc %h : {buf(m, f)}
  spyre.generic domain [{m}, {d}] {{indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}}
      ins(%q, %res : {buf(m, d)}, {buf(m, d)}) outs(%y : {buf(m, d)}) {{
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %r = arith.truncf %s : f32 to f16
    spyre.yield %r : f16
  }}
  spyre.dealloc %q : {buf(m, d)}
  spyre.return
}}"""


def _binary(m, d, f, tile):
    """The kernel compiled with its chain on `tile`; None if the plan
    refuses the tile (or did not chain the products)."""
    after_tile = compiler.STAGES[compiler.STAGES.index("tile") + 1]
    with Context():
        module = compiler.parse_module(_mlp(m, d, f))
        compiler.compile_module(module, stop_after="tile")
        chains = compiler.ops_where(module, lambda op: op.name == "spyre.fused")
        if len(chains) != 1:
            return None
        chains[0].attributes["spyre.tile"] = DenseI64ArrayAttr.get(list(tile))
        try:
            compiler.compile_module(module, start_before=after_tile)
        except MLIRError:
            return None
        return spyre.program_binary(module, None)


def _tiles(m, d, f):
    """Tiles across the plan's choices: row groups of 16 rows to all rows,
    1 to 4 slices, hidden chunks and output blocks of one or more sticks."""
    for tm, slices, hc, wc in itertools.product((16, 32, m), (1, 2, 4), (64, 128), (64, d)):
        yield [min(tm, m), slices, hc, wc, min(tm, m)]


@pytest.mark.parametrize("m, d, f", [(64, 64, 256), (100, 192, 704), (96, 256, 512)])
def test_every_tile_of_a_chain_computes_the_same_values(m, d, f):
    rng = np.random.default_rng(m + d + f)
    x = rng.standard_normal((m, d)).astype(np.float16)
    w1 = (rng.standard_normal((f, d)) / math.sqrt(d)).astype(np.float16)
    b1 = (rng.standard_normal(f) / 4).astype(np.float16)
    w2 = (rng.standard_normal((d, f)) / math.sqrt(f)).astype(np.float16)
    res = rng.standard_normal((m, d)).astype(np.float16)
    f32 = lambda a: rounded(a).astype(np.float32)  # noqa: E731
    hidden = rounded(np.tanh(f32(x) @ f32(w1).T + f32(b1)).astype(np.float16))
    expected = hidden.astype(np.float32) @ f32(w2).T + f32(res)
    ran = set()
    for tile in _tiles(m, d, f):
        binary = _binary(m, d, f, tile)
        if binary is None or binary in ran:
            continue
        ran.add(binary)
        out = sim.run(binary, {"arg0": x, "arg1": w1, "arg2": b1, "arg3": w2,
                               "arg4": res}).outputs["arg5"]
        try:
            close(out, expected, atol=2.0 ** -6)
        except AssertionError as e:
            raise AssertionError(f"tile {tile}: {e}") from None
    # The plan accepts several tiles of each shape, one slice and several.
    assert len(ran) >= 4, ran
