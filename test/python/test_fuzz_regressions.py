"""Replays the inputs that made scripts/fuzz.py fail (test/fuzz/): none may
crash, hang, or be accepted when it is refused by construction. The first
ones are the crashes and hangs of issue 10."""

import importlib.util
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("fuzz", os.path.join(REPO, "scripts", "fuzz.py"))
fuzz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz)

CASES = fuzz.regression_cases()


def test_there_are_regression_inputs():
    assert {entry for _, entry, _ in CASES} >= {"opt", "compile", "translate", "binary"}


@pytest.mark.parametrize("path, entry, refused", CASES, ids=[os.path.basename(c[0]) for c in CASES])
def test_regression_input(path, entry, refused):
    data = fuzz.read_regression(path)
    if entry == "binary":
        data = fuzz.for_this_card(data)
    outcome, detail = fuzz.check(entry, data, refused, timeout=30)
    assert outcome in ("ok", "error"), f"{outcome}: {detail}"


UPSTREAM_REPRODUCER = """#id = affine_map<(d0) -> (d0)>
"builtin.module"() ({
    %e = "math.exp"(%v) : (f32) -> f32
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      outs(%a : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
  ^bb0(%v: f32):
"""


def test_the_upstream_parser_crash_is_told_apart():
    """MLIR's parser crashes on this input (fuzz.UPSTREAM_PARSER_CRASH:
    upstream mlir-opt does the same with linalg.generic); the fuzzer counts
    it apart from our crashes. When upstream fixes it this becomes an error
    and the exception in fuzz.py can go."""
    outcome, _ = fuzz.check("opt", UPSTREAM_REPRODUCER.encode(), False, timeout=30)
    assert outcome == "upstream"
