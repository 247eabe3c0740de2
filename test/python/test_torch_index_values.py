"""Index values of several loops, |i - j|, min and max (ModernBERT's sliding
window, |row - col| <= w, as Inductor folds it into one index value), become
the ops that compute them from affine index values
(trace._compute_index_values): the card has no such function of two loops,
and pieces.py only cuts the domain for functions of one."""

import numpy as np
import pytest
import sympy
import torch

from torch.utils._sympy.functions import Max as InductorMax, Min as InductorMin

from spyre_mlir.inductor import pieces, trace as tr

X = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(2)]
SIZES = [12, 9]


def rewritten(expr):
    t = tr.Trace(list(SIZES), [], list(X))
    t.instrs = [tr.Instr("index_expr", (expr, torch.int64), tr.TV(0), {}, 0),
                tr.Instr("store", ("out", X[0] * SIZES[1] + X[1], tr.TV(0)), None, {}, 1)]
    tr._compute_index_values(t)
    return t


@pytest.mark.parametrize("expr, expected", [
    (sympy.Abs(X[0] - X[1]), lambda i, j: np.abs(i - j)),
    # Inductor's own Min and Max (not sympy's subclasses).
    (InductorMin(X[0], X[1]), lambda i, j: np.minimum(i, j)),
    (InductorMax(X[0] - X[1], 1), lambda i, j: np.maximum(i - j, 1)),
    (2 * sympy.Abs(X[0] - 3 * X[1]) + 1, lambda i, j: 2 * np.abs(i - 3 * j) + 1),
    (sympy.Min(X[0], X[1] + 2), lambda i, j: np.minimum(i, j + 2)),
    (sympy.Max(X[0] - X[1], 0) + X[1], lambda i, j: np.maximum(i - j, 0) + j),
], ids=["distance", "inductor_min", "inductor_max", "scaled", "min", "max_plus"])
def test_index_values_of_two_loops_are_computed_by_ops(expr, expected):
    t = rewritten(expr)
    store = t.instrs[-1]
    assert store.op == "store" and store.args[2] == tr.TV(0)  # the value it stored
    for instr in t.instrs:
        if instr.op == "index_expr":  # affine: no function left
            assert not sympy.sympify(instr.args[0]).atoms(sympy.Abs, sympy.Min, sympy.Max)
    assert [i.serial for i in t.instrs] == list(range(len(t.instrs)))
    cone = pieces._Cone(t, tr.TV(0))
    assert cone.ok
    values = cone.evaluate(pieces._box(["x0", "x1"], t)).numpy()
    i, j = np.meshgrid(np.arange(SIZES[0]), np.arange(SIZES[1]), indexing="ij")
    np.testing.assert_array_equal(values, expected(i, j))


def test_functions_of_one_loop_are_left_to_pieces():
    t = rewritten(sympy.Abs(X[0] - 5) + X[1])
    assert [i.op for i in t.instrs] == ["index_expr", "store"]


def test_a_fraction_of_a_function_is_refused():
    with pytest.raises(tr.Unsupported, match="coefficient 1/2"):
        rewritten(sympy.Rational(1, 2) * sympy.Abs(X[0] - X[1]))
