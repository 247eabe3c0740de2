"""The compile pipeline from Python: kernel-level IR to program binaries.

The passes are the C++ ones (``spyre-compile`` and its stages, see
docs/lowering.md); this module only runs them and writes the binary.
"""

from __future__ import annotations

from .dialects import spyre
from .ir import Context, Module, WalkOrder, WalkResult
from .passmanager import PassManager

#: The stages of `spyre-compile`, in order: the C++ stage table.
STAGES = tuple(name for name, _ in spyre.compile_stages())


def pipeline(*, arch_path: str | None = None, cores: int = 0, stop_after: str = STAGES[-1],
             start_before: str = STAGES[0], fuse_rows: bool = True) -> str:
    """The textual pass pipeline of `spyre-compile` with these options
    (`fuse_rows=False`: no spyre-fuse-rows, see its `fuse-rows` option)."""
    for stage in (stop_after, start_before):
        if stage not in STAGES:
            raise ValueError(f"unknown stage '{stage}'; stages are {', '.join(STAGES)}")
    options = [f"start-before={start_before}", f"stop-after={stop_after}", f"cores={int(cores)}"]
    if arch_path:
        options.append(f"arch={arch_path}")
    if not fuse_rows:
        options.append("fuse-rows=false")
    return "builtin.module(spyre-compile{" + " ".join(options) + "})"


def parse_module(text: str, context: Context | None = None) -> Module:
    """Module.parse for text from users: refuses (ValueError) text nested
    deeper than spyre.MAX_NESTING_DEPTH, which would overflow the stack of
    MLIR's recursive parser and kill the interpreter, then parses it."""
    spyre.check_nesting(text)
    return Module.parse(text, context)


def compile_module(module: Module, *, arch_path: str | None = None, cores: int = 0,
                   stop_after: str = STAGES[-1], start_before: str = STAGES[0],
                   fuse_rows: bool = True) -> Module:
    """Runs the pipeline on `module` in place (the stages from `start_before`
    to `stop_after`) and returns it. Raises spyre_mlir.ir.MLIRError, with the
    diagnostics, when a pass fails."""
    PassManager.parse(pipeline(arch_path=arch_path, cores=cores, stop_after=stop_after,
                               start_before=start_before, fuse_rows=fuse_rows),
                      module.context).run(module.operation)
    return module


def compile_stages(module: Module, *, arch_path: str | None = None, cores: int = 0):
    """Runs the whole pipeline on `module` in place, one stage at a time, and
    yields (stage, the IR after it); every pass runs once. Stops after a
    failing stage, yielding (stage, the MLIRError)."""
    from .ir import MLIRError
    for stage in STAGES:
        try:
            compile_module(module, arch_path=arch_path, cores=cores, start_before=stage,
                           stop_after=stage)
        except MLIRError as e:
            yield stage, e
            return
        yield stage, str(module)


def compile_kernel(source: str | Module, *, arch_path: str | None = None,
                   cores: int = 0, fuse_rows: bool = True) -> bytes:
    """The program binary of the one kernel in `source` (IR text or a module)."""
    if isinstance(source, str):
        with Context():
            return compile_kernel(parse_module(source), arch_path=arch_path, cores=cores,
                                  fuse_rows=fuse_rows)
    compile_module(source, arch_path=arch_path, cores=cores, fuse_rows=fuse_rows)
    return spyre.program_binary(source, arch_path)


def ops_where(module: Module, keep) -> list:
    """The operations of `module` for which `keep(op)` holds, in IR order
    (a pre-order walk)."""
    found = []

    def visit(op):
        if keep(op):
            found.append(op)
        return WalkResult.ADVANCE
    module.operation.walk(visit, WalkOrder.PRE_ORDER)
    return found
