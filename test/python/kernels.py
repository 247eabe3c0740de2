"""Kernel-level IR for the end-to-end tests, written as text the way the
Inductor export will produce it, compiled by the C++ pipeline and run on the
simulator against numpy."""

from __future__ import annotations

import numpy as np

from spyre_mlir import compiler
from spyre_mlir import simulator as sim

NUMPY = {"f16": np.float16, "f32": np.float32, "i32": np.int32, "i1": np.bool_}


def buf(shape, dtype: str) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"!spyre.buffer<{dims}{dtype}>"


def amap(dims: int, results: str) -> str:
    names = ", ".join(f"d{i}" for i in range(dims))
    return f"affine_map<({names}) -> ({results})>"


def generic(domain, ins, outs, maps, body, iterators=None, combiners=None) -> str:
    """One spyre.generic. `ins` / `outs` are (ssa name, shape, dtype); `body`
    is the block's text, whose arguments are %a0, %a1, ..."""
    iterators = iterators or ["parallel"] * len(domain)
    attrs = [f"indexing_maps = [{', '.join(maps)}]",
             "iterator_types = [" + ", ".join(f"#spyre.iterator<{i}>" for i in iterators) + "]"]
    if combiners:
        attrs.append("combiners = [" + ", ".join(f"#spyre.combiner<{c}>" for c in combiners) + "]")
    args = ", ".join(f"%a{i}: {t}" for i, (_, _, t) in enumerate(ins))
    text = f"  spyre.generic domain [{', '.join(map(str, domain))}] {{{', '.join(attrs)}}}\n"
    if ins:
        text += ("      ins(" + ", ".join(n for n, _, _ in ins) + " : "
                 + ", ".join(buf(s, t) for _, s, t in ins) + ")\n")
    text += ("      outs(" + ", ".join(n for n, _, _ in outs) + " : "
             + ", ".join(buf(s, t) for _, s, t in outs) + ") {\n")
    text += f"  ^bb0({args}):\n" + "\n".join("    " + line for line in body.strip().splitlines())
    return text + "\n  }\n"


def kernel(name: str, args, body: str, temps=()) -> str:
    """A kernel over `args` (ssa name, shape, dtype), buffer k named argk on
    the device, with temporaries `temps` allocated first."""
    sig = ", ".join(f"%{n}: {buf(s, t)}" for n, s, t in args)
    allocs = "".join(f"  %{n} = spyre.alloc() : {buf(s, t)}\n" for n, s, t in temps)
    return f"spyre.kernel @{name}({sig}) {{\n{allocs}{body}  spyre.return\n}}\n"


def rounded(x) -> np.ndarray:
    """What the card sees of a host array: 16-bit floats become DLFloat16."""
    x = np.asarray(x)
    if x.dtype in (np.float16,):
        return sim.dl16().round(x.astype(np.float32))
    return x


def run(source: str, inputs: dict, cores: int = 0):
    """Compiles `source` (one kernel) and runs it; returns (outputs, result)."""
    binary = compiler.compile_kernel(source, cores=cores)
    result = sim.run(binary, inputs)
    return result.outputs, result


def close(actual, expected, dtype: str = "f16", rtol=None, atol=None):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    # DLFloat16 keeps 9 fraction bits: one rounding is 2^-10 relative; a few
    # roundings of intermediates stay within 2^-7.
    rtol = rtol if rtol is not None else (2.0 ** -7 if dtype == "f16" else 1e-5)
    atol = atol if atol is not None else rtol
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
