"""What the kernels Inductor calls as extern ops share (fused attention,
attention.py; implicit-GEMM convolutions, convolution.py): each is one
kernel-level op whose IR is written here from the shapes, compiled when
the graph is traced (a refusal keeps the decomposed or im2col path) and run
on the card by a ProgramLauncher from the custom op's implementation."""

from __future__ import annotations

import hashlib
import re

import torch

from .counting import fallback
from .dumps import dump, dump_dir
from .kernel_cache import CompileError, compile_cached

#: Element types of the kernel-level IR, by torch dtype.
ELEMENT = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}


def buffer_type(shape, element: str) -> str:
    return f"!spyre.buffer<{'x'.join(str(int(s)) for s in shape)}x{element}>"


def kernel(name: str, inputs: list[str], output: str, op: str,
           extra_inputs: list[str] = (), clauses: str = "") -> str:
    """A kernel of one op: `op` is its text after the operands' `ins(...)
    outs(...)`, which this writes from the argument types. `extra_inputs`
    are arguments after `inputs` that `clauses` (text between `ins` and
    `outs`) names."""
    types = [*inputs, *extra_inputs, output]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    ins = ", ".join(f"%a{i}" for i in range(len(inputs)))
    return (f"spyre.kernel @{name}({args}) {{\n"
            f"  spyre.{name} ins({ins} : {', '.join(inputs)}){clauses}"
            f" outs(%a{len(types) - 1} : {output}){op}\n  spyre.return\n}}\n")


def why_not(mlir: str) -> str | None:
    """None if the card compiles `mlir` (now, so that the run finds it in
    the kernel cache), else the compiler's first line of why not."""
    if dump_dir():
        # Not one of a graph's numbered kernels: named by op and content, so
        # that the calls a graph makes of one shape share a dump.
        op = re.search(r"spyre\.kernel @(\w+)", mlir)
        dump(f"extern_{op.group(1) if op else 'kernel'}_"
             f"{hashlib.sha256(mlir.encode()).hexdigest()[:8]}", mlir)
    try:
        compile_cached(mlir)
    except CompileError as e:
        return str(e).splitlines()[0] if str(e) else "the compiler refused it"
    return None


def static_sizes(*tensors) -> bool:
    return all(isinstance(s, int) for t in tensors if t is not None for s in t.shape)


def as_read(op: str, tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` laid out as the kernel reads it (dense, row-major). The
    `fused` functions make their inputs so in the traced graph, where a copy
    is a card kernel like any other; a strided tensor that still reaches the
    kernel (an eager call) is re-laid on the host, which the simulated time
    does not include, so that is counted as a CPU fallback."""
    if tensor.is_contiguous():
        return tensor
    fallback([f"{op} (host copy of a strided input)"],
             f"a strided input of {op} re-laid on the host for the card")
    return tensor.contiguous()
