"""Tuning mode (tuning.py) times each candidate tile of a kernel on zeros and
keeps the fastest, so a candidate that computes wrong values would be kept
silently if it ran fast. Every candidate of these kernels (products with and
without epilogues, ragged and transposed, side by side, attention) must
compute what the estimate's own tile computes, on random inputs."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from spyre_mlir import tuning
from spyre_mlir import simulator as sim
from spyre_mlir.ir import Context, MLIRError


def _product_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b))


def _two_products(x, w1, w2):
    return x @ w1, x @ w2


def _causal_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def h(*shape):
    return torch.randn(*shape, dtype=torch.float16)


CASES = {
    "ragged product": (torch.mm, (h(200, 300), h(300, 520))),
    "linear + gelu": (_product_gelu, (h(128, 768), h(512, 768), h(512))),
    "two products of one lhs": (_two_products, (h(96, 256), h(256, 384), h(256, 384))),
    "causal attention": (_causal_attention, (h(1, 4, 200, 64), h(1, 4, 200, 64),
                                             h(1, 4, 200, 64))),
}


def _outputs(binary, inputs):
    return sim.run(sim.Program.parse(binary), inputs).outputs


@pytest.mark.parametrize("case", CASES)
def test_every_candidate_tile_computes_the_same_values(case, kernels):
    fn, args = CASES[case]
    torch.manual_seed(0)
    torch._dynamo.reset()
    with torch.no_grad(), torch.compiler.config.patch(force_disable_caches=True):
        torch.compile(fn, backend="spyre")(*args)
    tried = 0
    rng = np.random.default_rng(0)
    for mlir in kernels:
        with Context():
            divided, candidates = tuning.candidates_of(mlir)
            if not any(len(c) > 1 for c in candidates):
                continue
            chosen = [c[0] for c in candidates]
            default = tuning.binary_with(divided, chosen)
        program = sim.Program.parse(default)
        inputs = {b["name"]: rng.standard_normal(tuple(b["shape"])).astype(np.float32)
                  for _, b in sim.host_buffers(program) if b["kind"] != sim.BufferKind.output}
        expected = _outputs(default, inputs)
        # Every candidate beside the estimate's other tiles (tuning's own
        # trials would start later ones from whichever ran fastest).
        for trial in tuning.one_change_trials(candidates, chosen):
            with Context():
                try:
                    binary = tuning.binary_with(divided, trial)
                except MLIRError:
                    continue  # refused later: tuning skips it too
            actual = _outputs(binary, inputs)
            for name, want in expected.items():
                got = np.asarray(actual[name], np.float64)
                want = np.asarray(want, np.float64)
                # Other chunks of K sum in another order: DLFloat16
                # outputs may round the other way.
                scale = max(1.0, float(np.abs(want).max()))
                assert np.allclose(got, want, rtol=2 ** -7, atol=2 ** -7 * scale), \
                    (case, trial, name, float(np.abs(got - want).max()))
            tried += 1
    assert tried > 0, "no kernel had other candidates"
