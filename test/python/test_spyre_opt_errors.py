"""spyre-opt on bad input: a diagnostic and a non-zero exit, never a crash."""

import os
import re
import subprocess

import pytest

from conftest import IR_TESTS

INVALID = os.path.join(IR_TESTS, "IR", "invalid.mlir")


def _split_cases():
    with open(INVALID) as f:
        chunks = f.read().split("// -----")
    # Drop RUN lines and expected-* annotations: spyre-opt sees plain bad IR.
    return [re.sub(r"//.*", "", c) for c in chunks]


VERIFIER_CASES = _split_cases()

# Malformed text of every kind, beyond verifier errors.
SYNTAX_CASES = {
    "empty-type": "spyre.kernel @k(%a: !spyre.buffer<>) { spyre.return }",
    "unterminated-type": "spyre.kernel @k(%a: !spyre.buffer<4xf16",
    "bad-dim": "spyre.kernel @k(%a: !spyre.buffer<-3xf16>) { spyre.return }",
    "unknown-type": "spyre.kernel @k(%a: !spyre.tensor<4xf16>) { spyre.return }",
    "unknown-attr": "spyre.kernel @k() attributes {x = #spyre.nope<1>} { spyre.return }",
    "bad-affine-map": "spyre.kernel @k(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf16>) {\n"
                      "spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d7)>]} outs(%y : !spyre.buffer<4xf16>) {\n"
                      "}\n spyre.return }",
    "undefined-value": "spyre.kernel @k(%a: !spyre.buffer<4xf16>) {\n"
                       "spyre.copy ins(%zz : !spyre.buffer<4xf16>) outs(%a : !spyre.buffer<4xf16>)\n spyre.return }",
    "missing-body": "spyre.kernel @k(%a: !spyre.buffer<4xf16>)",
    "garbage": "\x00\x01\x02 not mlir at all {{{",
    "binary-noise": bytes(range(256)).decode("latin-1"),
    "generic-no-block": "spyre.kernel @k(%y: !spyre.buffer<4xf16>) {\n"
                        "\"spyre.generic\"(%y) <{static_domain = array<i64: 4>, indexing_maps = [affine_map<(d0) -> (d0)>], "
                        "iterator_types = [#spyre.iterator<parallel>], operandSegmentSizes = array<i32: 0, 0, 0, 1>}> ({}) "
                        ": (!spyre.buffer<4xf16>) -> ()\n spyre.return }",
    "kernel-no-block": "\"spyre.kernel\"() <{sym_name = \"k\", function_type = () -> ()}> ({}) : () -> ()",
    "index-expr-outside": "spyre.kernel @f() { %0 = spyre.index_expr affine_map<() -> (0)> : i32\n spyre.return }",
    "yield-outside": "spyre.kernel @f() { spyre.yield\n }",
    "bad-combiner": "spyre.kernel @k() attributes {c = #spyre.combiner<median>} { spyre.return }",
}


def _truncations():
    with open(os.path.join(IR_TESTS, "IR", "ops.mlir")) as f:
        text = f.read()
    text = re.sub(r"//.*", "", text)
    # Cut the valid module at many places inside a kernel (more '{' than '}'
    # so far): every such prefix is incomplete and must be rejected cleanly.
    step = max(1, len(text) // 40)
    cuts = [c for c in range(step, len(text), step)
            if text[:c].count("{") > text[:c].count("}")]
    return {f"truncated-at-{c}": text[:c] for c in cuts}


CASES = {**{f"verifier-{i}": c for i, c in enumerate(VERIFIER_CASES)},
         **SYNTAX_CASES, **_truncations()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_a_diagnostic_not_a_crash(spyre_opt, name):
    result = subprocess.run([spyre_opt, "-"], input=CASES[name].encode("latin-1"),
                            capture_output=True, timeout=60)
    # A negative return code means a signal (abort, segfault): a crash.
    assert result.returncode > 0, (
        f"exit {result.returncode}\n{result.stderr.decode(errors='replace')}")
    assert b"error" in result.stderr, result.stderr.decode(errors="replace")
    assert b"Stack dump" not in result.stderr
    assert b"PLEASE submit a bug report" not in result.stderr


def test_enough_bad_inputs():
    assert len(CASES) >= 20


def test_help_lists_our_passes(spyre_opt):
    out = subprocess.run([spyre_opt, "--help"], capture_output=True, text=True, check=True).stdout
    assert "--spyre-generalize" in out
    assert "spyre" in out.split("Available Dialects:")[1].split("\n")[0]
