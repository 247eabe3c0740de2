"""Every PyTorch OpInfo op that supports the dtype on the CPU, through
torch.compile(backend="spyre"), against eager (opinfo_check.py classifies
each one: card, fallback, wrong, error).

An op must run on the card with eager's results, or be listed in
opinfo_expected.py with why it falls back. An op that becomes wrong or
raises fails, and so does an unlisted op that falls back; a listed op that
now runs on the card passes (regenerating the table drops it). One sample
per op; test_op_all_samples runs every sample (wrong or error only).
"""

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db

import opinfo_check
from opinfo_expected import FALLBACK, NOT_APPLICABLE

DTYPES = {"f32": torch.float32, "f16": torch.float16}

def _cases():
    for key, dtype in DTYPES.items():
        for op in op_db:
            if op.supports_dtype(dtype, "cpu"):
                yield pytest.param(op, key, id=f"{opinfo_check.op_id(op)}-{key}")


def _check(outcome, name, key):
    if outcome.status in ("wrong", "error"):
        pytest.fail(f"{name} ({key}) is {outcome.status}: {outcome.detail}")
    if outcome.status == "fallback" and name not in FALLBACK[key]:
        pytest.fail(f"{name} ({key}) falls back ({', '.join(outcome.fallbacks)}): make it run on "
                    "the card, or list it in opinfo_expected.FALLBACK with why")
    # A listed op that now runs on the card passes (like a non-strict xfail):
    # regenerating the table drops it.


@pytest.mark.parametrize("op,key", list(_cases()))
def test_op(op, key):
    name = opinfo_check.op_id(op)
    if name in NOT_APPLICABLE:
        pytest.skip(NOT_APPLICABLE[name])
    if FALLBACK[key] is None:
        pytest.skip(f"no reviewed {key} table yet (opinfo_expected.py)")
    outcome = opinfo_check.run(op, DTYPES[key], explain=False)
    if outcome is None:
        pytest.skip("eager accepts none of its samples")
    _check(outcome, name, key)


@pytest.mark.slow
@pytest.mark.parametrize("op,key", list(_cases()))
def test_op_all_samples(op, key):
    name = opinfo_check.op_id(op)
    if name in NOT_APPLICABLE:
        pytest.skip(NOT_APPLICABLE[name])
    for outcome in opinfo_check.run_all(op, DTYPES[key]):
        if outcome.status in ("wrong", "error"):
            pytest.fail(f"{name} ({key}) is {outcome.status}: {outcome.detail}")
