"""The compile pipeline from Python: kernel-level IR to program binaries.

The passes are the C++ ones (``spyre-compile`` and its stages, see
docs/lowering.md); this module only runs them and writes the binary.
"""

from __future__ import annotations

from .dialects import spyre
from .ir import Context, Module
from .passmanager import PassManager

STAGES = ("generalize", "fuse", "divide-work", "tile", "plan-memory", "lower")


def pipeline(*, arch_path: str | None = None, cores: int = 0, stop_after: str = "lower") -> str:
    """The textual pass pipeline of `spyre-compile` with these options."""
    if stop_after not in STAGES:
        raise ValueError(f"unknown stage '{stop_after}'; stages are {', '.join(STAGES)}")
    options = [f"stop-after={stop_after}", f"cores={int(cores)}"]
    if arch_path:
        options.append(f"arch={arch_path}")
    return "builtin.module(spyre-compile{" + " ".join(options) + "})"


def parse_module(text: str, context: Context | None = None) -> Module:
    """Module.parse for text from users: refuses (ValueError) text nested
    deeper than spyre.MAX_NESTING_DEPTH, which would overflow the stack of
    MLIR's recursive parser and kill the interpreter, then parses it."""
    spyre.check_nesting(text)
    return Module.parse(text, context)


def compile_module(module: Module, *, arch_path: str | None = None, cores: int = 0,
                   stop_after: str = "lower") -> Module:
    """Runs the pipeline on `module` in place (up to `stop_after`) and returns it.
    Raises spyre_mlir.ir.MLIRError, with the diagnostics, when a pass fails."""
    PassManager.parse(pipeline(arch_path=arch_path, cores=cores, stop_after=stop_after),
                      module.context).run(module.operation)
    return module


def compile_kernel(source: str | Module, *, arch_path: str | None = None,
                   cores: int = 0) -> bytes:
    """The program binary of the one kernel in `source` (IR text or a module)."""
    if isinstance(source, str):
        with Context():
            return compile_kernel(parse_module(source), arch_path=arch_path, cores=cores)
    compile_module(source, arch_path=arch_path, cores=cores)
    return spyre.program_binary(source, arch_path)
