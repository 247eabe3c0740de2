"""Runs one PyTorch OpInfo sample through torch.compile(backend="spyre") and
classifies the result against eager, for test_opinfo.py and its report.

Classes:
  card      same result as eager, nothing ran on the CPU
  fallback  same result as eager, part of it ran on the CPU (counted by our
            counters, or a Dynamo graph break left ops to eager PyTorch)
  wrong     a result differs from eager beyond DLFloat16-aware tolerance
  error     the compiled call raised where eager did not
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import torch
import torch.utils._pytree as pytree

from spyre_mlir.inductor import counters, state

#: DLFloat16 keeps 9 fraction bits, and the matrix unit rounds even f32
#: operands to it: results are compared at a few of its roundings, relative
#: to the size of the values involved (sums of rounded terms cancel), growing
#: slowly with the sample's size (rounding errors of a sum of n terms grow
#: like sqrt(n); the number of terms summed is not known per op, so the
#: fourth root of the largest input's size stands in for it).
EPS = 2.0 ** -9


#: Ops whose values are unspecified (empty) or random: only their shapes and
#: dtypes are compared.
UNSPECIFIED_VALUES = ("empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
                      "new_empty_strided", "rand_like", "randn", "randn_like", "randint",
                      "randint_like", "normal", "normal.number_mean", "normal.in_place",
                      "uniform", "bernoulli", "multinomial", "cauchy", "exponential",
                      "geometric", "log_normal", "nn.functional.dropout",
                      "nn.functional.dropout2d", "nn.functional.dropout3d",
                      "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
                      "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
                      "nn.functional.rrelu")


@dataclass
class Outcome:
    status: str
    detail: str = ""
    fallbacks: list[str] = field(default_factory=list)
    kernels: int = 0


def eager_samples(op, dtype):
    """(sample, eager's result) for the samples eager PyTorch accepts."""
    torch.manual_seed(0)  # the same samples whatever ran before in the process
    with _no_unittest_lookup():
        samples = op.sample_inputs("cpu", dtype, requires_grad=False)
    for sample in samples:
        try:
            with torch.no_grad():
                expected = op(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            continue
        yield sample, expected


@contextlib.contextmanager
def _no_unittest_lookup():
    """OpInfo looks for the running unittest.TestCase by walking
    inspect.stack(), which reads the source of every frame (a fifth of the
    time of test_opinfo.py under pytest's deep stacks). Our tests are plain
    functions, where the walk finds nothing: skip it, same samples, same
    seed."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core
    saved = common_utils.extract_test_fn, core.extract_test_fn
    common_utils.extract_test_fn = core.extract_test_fn = lambda: None
    try:
        yield
    finally:
        common_utils.extract_test_fn, core.extract_test_fn = saved


def _scale(values: list[torch.Tensor]) -> float:
    biggest = 0.0
    for v in values:
        if v.is_floating_point() and v.numel():
            finite = v.detach().double()[torch.isfinite(v.detach().double())]
            if finite.numel():
                biggest = max(biggest, float(finite.abs().max()))
    return biggest


def _comparable(x):
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            x = x.to_dense()
        return x.resolve_conj().resolve_neg()
    return x


def compare(actual, expected, inputs, depth: int, values: bool = True) -> str | None:
    """Why `actual` is not `expected` (None if it is), DLFloat16-aware; only
    structure, shapes and dtypes unless `values`."""
    actual, expected = pytree.tree_map(_comparable, actual), pytree.tree_map(_comparable, expected)
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        return f"structure {a_spec} != {e_spec}"
    tensors = [_comparable(x) for x in pytree.tree_leaves(inputs) if isinstance(x, torch.Tensor)]
    scale = max(1.0, _scale(tensors), _scale([e for e in e_leaves if isinstance(e, torch.Tensor)]))
    for k, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if not isinstance(e, torch.Tensor):
            if a != e and not (isinstance(a, float) and math.isnan(a) and math.isnan(e)):
                return f"output {k}: {a!r} != {e!r}"
            continue
        if not isinstance(a, torch.Tensor):
            return f"output {k} is {type(a).__name__}, expected a tensor"
        if a.shape != e.shape or a.dtype != e.dtype:
            return f"output {k}: {a.dtype}{list(a.shape)} != {e.dtype}{list(e.shape)}"
        if not values:
            continue
        if e.is_complex():
            a, e = torch.view_as_real(a), torch.view_as_real(e)
        if not e.is_floating_point():
            bad = (a != e)
        else:
            a64, e64 = a.detach().double(), e.detach().double()
            tol = 4 * EPS * (scale * max(depth, 1) ** 0.25 + e64.abs())
            both_nan = torch.isnan(a64) & torch.isnan(e64)
            same_inf = torch.isinf(e64) & (a64 == e64)
            bad = ~((a64 - e64).abs() <= tol) & ~both_nan & ~same_inf
        if bad.any():
            return f"output {k}: {int(bad.sum())} of {bad.numel()} elements differ"
    return None


def run(op, dtype, explain: bool = True) -> Outcome | None:
    """The outcome of the op's first sample, or None if eager has none;
    `explain` adds strict mode's reason to fallbacks (one more compile)."""
    found = next(eager_samples(op, dtype), None)
    return None if found is None else run_sample(op, *found, explain=explain)


def run_all(op, dtype) -> list[Outcome]:
    """The outcomes of every sample eager accepts."""
    return [run_sample(op, sample, expected) for sample, expected in eager_samples(op, dtype)]


def run_sample(op, sample, expected, explain: bool = True) -> Outcome:
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    positions = [k for k, x in enumerate(leaves) if isinstance(x, torch.Tensor)]

    def fn(*tensors):
        values = list(leaves)
        for k, t in zip(positions, tensors):
            values[k] = t
        x, args, kwargs = pytree.tree_unflatten(values, spec)
        return op(x, *args, **kwargs)

    tensors = [leaves[k] for k in positions]
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    counters.reset()
    try:
        with torch.no_grad(), _seeded_without_freezing():
            actual = torch.compile(_call(op), backend="spyre")(*_cloned(leaves, spec))
    except Exception as e:  # what the user would see
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return Outcome("error", f"{type(e).__name__}: {first[:300]}")
    fallbacks = sorted(counters.fallbacks)
    if sum(torch._dynamo.utils.counters["graph_break"].values()):
        fallbacks.append("dynamo.graph_break")
    kernels = counters.kernels_run
    depth = max((t.numel() for t in tensors), default=1)
    values = op_id(op) not in UNSPECIFIED_VALUES and not _draws_random(op, sample)
    why = compare(actual, expected, tensors, depth, values)
    if why is not None and values and _16_bit(tensors):
        # Within DLFloat16's rounding of the 16-bit inputs (floor, tan, ...)?
        rounded = [_dlfloat16_rounded(t) for t in tensors]
        try:
            with torch.no_grad():
                why = compare(actual, fn(*rounded), rounded, depth) and why
        except Exception:
            pass
    if why is not None and why.startswith("output 1:") and \
            _picks_tied_values(op, sample, actual, expected):
        why = None
    if why is not None:
        return Outcome("wrong", why, fallbacks, kernels)
    if not fallbacks:
        return Outcome("card", "", fallbacks, kernels)
    reason = _fallback_reason(op, leaves, spec) if explain else ""
    return Outcome("fallback", reason, fallbacks, kernels)


#: Ops whose second output indexes the first's values in the input along a
#: dimension, which of several equal elements unspecified (integer samples
#: have ties).
TIED_INDICES = {"topk", "kthvalue"}


def _picks_tied_values(op, sample, actual, expected) -> bool:
    """Whether the values are eager's and the indices pick them out of the
    input, where only tied elements make the indices differ."""
    if op_id(op) not in TIED_INDICES or compare(actual[0], expected[0], [], 1) is not None:
        return False
    values, indices, x = actual[0], actual[1], sample.input
    if x.dim() == 0:
        return bool((indices == 0).all())
    dim = sample.kwargs.get("dim", sample.args[1] if len(sample.args) > 1 else -1)
    keep = indices if indices.dim() == x.dim() else indices.unsqueeze(dim)
    picked = torch.gather(x, dim, keep)
    return torch.equal(picked, values if values.dim() == x.dim() else values.unsqueeze(dim))


def _draws_random(op, sample) -> bool:
    """Whether the sample makes its op draw random numbers (attention with
    dropout): the card's generator is not eager's, so, as for the ops of
    UNSPECIFIED_VALUES, only shapes and dtypes compare.
    multi_head_attention_forward takes its dropout_p positionally (the
    tenth argument after the query) and applies it only when training."""
    if op_id(op) == "nn.functional.multi_head_attention_forward":
        return bool(sample.kwargs.get("training", True) and len(sample.args) > 9
                    and sample.args[9])
    return bool(sample.kwargs.get("dropout_p", 0))


def _call(op):
    """The function compiled: the sample's structure is its arguments, so
    Dynamo takes it as inputs instead of tracing pytree's Python to rebuild
    it (a sixth of a small sample's compile time)."""
    def call(x, args, kwargs):
        return op(x, *args, **kwargs)
    return call


def _cloned(leaves, spec):
    return pytree.tree_unflatten([_clone(x) if isinstance(x, torch.Tensor) else x
                                  for x in leaves], spec)


def _clone(x: torch.Tensor) -> torch.Tensor:
    """A copy of `x` with its storage: a partial view's sample (as_strided
    with a storage offset) reaches past the view, which x.clone() drops, and
    eager then fails on the copy as the compiled call did."""
    if (x.layout != torch.strided or x.is_nested or x.is_quantized or x.is_conj()
            or x.is_neg()):  # a storage copy would drop the lazy conjugation or negation
        return x.clone()
    copy = torch.empty(0, dtype=x.dtype, device=x.device)
    copy.set_(x.untyped_storage().clone(), x.storage_offset(), x.shape, x.stride())
    return copy.requires_grad_(x.requires_grad)


@contextlib.contextmanager
def _seeded_without_freezing():
    """OpInfo runs random ops through wrapper_set_seed, whose RNG-state
    context manager Dynamo cannot trace (a graph break in the harness, not in
    the op): seed once outside the compiled region instead."""
    import torch.testing._internal.common_methods_invocations as cmi
    original = cmi.wrapper_set_seed
    cmi.wrapper_set_seed = lambda op, *args, **kwargs: op(*args, **kwargs)
    torch.manual_seed(42)
    try:
        yield
    finally:
        cmi.wrapper_set_seed = original


def _16_bit(tensors) -> bool:
    return any(t.dtype in (torch.float16, torch.bfloat16) for t in tensors)


def _dlfloat16_rounded(t: torch.Tensor) -> torch.Tensor:
    """`t` as the card holds it: 16-bit floats rounded to DLFloat16."""
    if t.dtype not in (torch.float16, torch.bfloat16) or t.layout != torch.strided:
        return t
    from spyre_mlir import simulator as sim
    rounded = sim.dl16().round(t.detach().float().contiguous().numpy())
    return torch.from_numpy(rounded).to(t.dtype).reshape(t.shape)


def _fallback_reason(op, leaves, spec) -> str:
    """Why the first CPU fallback happens: strict mode's message."""
    torch._dynamo.reset()
    previous, state.strict = state.strict, True
    try:
        with torch.no_grad(), _seeded_without_freezing():
            torch.compile(_call(op), backend="spyre")(*_cloned(leaves, spec))
    except Exception as e:
        return str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
    finally:
        state.strict = previous
    return "a Dynamo graph break"


def op_id(op) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def main(argv=None) -> None:
    """python test/python/opinfo_check.py [--dtype f32|f16|i32|i64|b8] [--all-samples] [--out F] [op ...]
    Classifies every OpInfo op (or the ones named) and prints the counts."""
    import argparse
    import collections
    import json
    import sys
    import time
    import warnings

    from torch.testing._internal.common_methods_invocations import op_db
    parser = argparse.ArgumentParser()
    dtypes = {"f32": torch.float32, "f16": torch.float16, "i32": torch.int32,
              "i64": torch.int64, "b8": torch.bool}
    parser.add_argument("--dtype", default="f32", choices=list(dtypes))
    parser.add_argument("--all-samples", action="store_true")
    parser.add_argument("--out", help="JSON lines, one per op and sample")
    parser.add_argument("ops", nargs="*")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    dtype = dtypes[args.dtype]
    out = open(args.out, "w") if args.out else sys.stdout
    totals = collections.Counter()
    from opinfo_expected import NOT_APPLICABLE
    for op in op_db:
        if not op.supports_dtype(dtype, "cpu") or (args.ops and op_id(op) not in args.ops) or \
                op_id(op) in NOT_APPLICABLE:
            continue
        start = time.time()
        outcomes = run_all(op, dtype) if args.all_samples else [run(op, dtype)]
        for k, o in enumerate(x for x in outcomes if x is not None):
            totals[o.status] += 1
            out.write(json.dumps(dict(op=op_id(op), sample=k, status=o.status, detail=o.detail,
                                      fallbacks=o.fallbacks, kernels=o.kernels,
                                      seconds=round(time.time() - start, 2))) + "\n")
            out.flush()
    print(dict(totals), file=sys.stderr)


def _reason(row) -> str:
    """A fallback's reason without the op names strict mode lists first."""
    detail = row["detail"]
    if "would run on the CPU: " in detail:
        names, why = detail.split(" would run on the CPU: ", 1)
        why = why.removesuffix(" (strict mode)")
        if why.startswith("no lowering"):
            return f"{why}: {names.split(': ', 1)[-1]}"
        return why
    return detail or ", ".join(row["fallbacks"])


def write_table(f32: str, f16: str, path: str) -> None:
    """opinfo_expected.py from the JSON lines of a full run per dtype."""
    import json
    import pprint
    fallback = {}
    for key, results in (("f32", f32), ("f16", f16)):
        if results in (None, "-"):  # not measured: test_opinfo.py skips the dtype
            fallback[key] = None
            continue
        rows = [json.loads(line) for line in open(results)]
        bad = [r for r in rows if r["status"] in ("wrong", "error")]
        if bad:
            raise SystemExit(f"{key}: {len(bad)} ops are wrong or raise; fix them first: "
                             + ", ".join(r["op"] for r in bad))
        fallback[key] = {r["op"]: _reason(r) for r in rows if r["status"] == "fallback"}
    with open(path, "w") as f:
        f.write(TABLE_HEADER)
        f.write("FALLBACK = " + pprint.pformat(fallback, width=100, sort_dicts=True) + "\n")


TABLE_HEADER = '''"""OpInfo ops that do not run wholly on the card, by dtype, with why (the
compiler's own reason, strict mode's message), reviewed with every change.
Written by `python test/python/opinfo_check.py --write-table f32.jsonl
f16.jsonl` from full runs (`--dtype f32 --out f32.jsonl`, `--dtype f16 --out
f16.jsonl`); test_opinfo.py fails when an unlisted op falls back."""

#: Ops the harness cannot compile for any backend: not an on-card question.
NOT_APPLICABLE = {
    "sparse.sampled_addmm": "sparse tensors: torch.compile traces strided tensors",
    "sparse.mm.reduce": "sparse tensors: torch.compile traces strided tensors",
    "to_sparse": "sparse tensors: torch.compile traces strided tensors",
}

'''


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["--write-table"]:
        write_table(*sys.argv[2:4], sys.argv[4] if len(sys.argv) > 4 else
                    __file__.replace("opinfo_check.py", "opinfo_expected.py"))
    else:
        main()
