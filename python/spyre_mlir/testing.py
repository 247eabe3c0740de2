"""Kernel-level IR as text, for tests and benchmarks: the shapes of IR the
Inductor export produces, without torch."""

from __future__ import annotations


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


def softmax(m: int, n: int) -> str:
    """Row softmax of an (m, n) f16 buffer: max, sum of exponentials, divide,
    with the row statistics in kernel temporaries."""
    maps2, row = amap(2, "d0, d1"), amap(2, "d0")
    x, mx, sm, y = ("%x", (m, n), "f16"), ("%mx", (m,), "f32"), ("%sm", (m,), "f32"), \
        ("%y", (m, n), "f16")
    red = ["parallel", "reduction"]
    body = generic((m, n), [x], [mx], [maps2, row], """
%v = arith.extf %a0 : f16 to f32
spyre.yield %v : f32""", red, ["max"])
    body += generic((m, n), [x, mx], [sm], [maps2, row, row], """
%v = arith.extf %a0 : f16 to f32
%d = arith.subf %v, %a1 : f32
%e = math.exp %d : f32
spyre.yield %e : f32""", red, ["sum"])
    body += generic((m, n), [x, mx, sm], [y], [maps2, row, row, maps2], """
%v = arith.extf %a0 : f16 to f32
%d = arith.subf %v, %a1 : f32
%e = math.exp %d : f32
%q = arith.divf %e, %a2 : f32
%t = arith.truncf %q : f32 to f16
spyre.yield %t : f16""")
    return kernel("softmax", [("x", (m, n), "f16"), ("y", (m, n), "f16")], body,
                  temps=[("mx", (m,), "f32"), ("sm", (m,), "f32")])


def matmul(a_shape, b_shape, c_shape, out: str = "f32", flags: str = "", op: str = "matmul",
           dtype: str = "f16") -> str:
    body = (f"  spyre.{op} {flags} ins(%a, %b : {buf(a_shape, dtype)}, {buf(b_shape, dtype)}) "
            f"outs(%c : {buf(c_shape, out)})\n")
    return kernel("mm", [("a", a_shape, dtype), ("b", b_shape, dtype), ("c", c_shape, out)],
                  body)
