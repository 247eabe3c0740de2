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
