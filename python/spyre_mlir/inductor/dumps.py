"""IR dumps: each kernel's IR after every stage of the pipeline, for
reading or replaying a kernel without torch (docs/lowering.md)."""

from __future__ import annotations

import os

from .. import compiler


def dump_dir() -> str | None:
    """Where each kernel's IR at every stage is written: $SPYRE_DUMP_DIR, or
    with TORCH_COMPILE_DEBUG=1 a `spyre` directory under torch's debug root."""
    if os.environ.get("SPYRE_DUMP_DIR"):
        return os.environ["SPYRE_DUMP_DIR"]
    if os.environ.get("TORCH_COMPILE_DEBUG", "") not in ("", "0"):
        import torch._dynamo.config as dynamo_config
        root = dynamo_config.debug_dir_root or os.path.join(os.getcwd(), "torch_compile_debug")
        return os.path.join(root, "spyre")
    return None


def dump(name: str, mlir: str) -> None:
    """Writes `name`.kernel.mlir and `name`.<stage>.mlir for every stage of
    the pipeline, if dumping is on."""
    directory = dump_dir()
    if not directory:
        return
    from ..ir import Context, Module
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{name}.kernel.mlir"), "w") as f:
        f.write(mlir)
    # One run of the pipeline, the IR written after each stage.
    texts = {}
    with Context():
        for stage, result in compiler.compile_stages(Module.parse(mlir)):
            texts[stage] = result if isinstance(result, str) else (
                f"// stage {stage} failed:\n// " + str(result).replace("\n", "\n// "))
    for stage in compiler.STAGES:
        # Stages after a failing one did not run: their files say so.
        text = texts.get(stage, f"// stage {stage} did not run: an earlier stage failed\n")
        with open(os.path.join(directory, f"{name}.{stage}.mlir"), "w") as f:
            f.write(text)


def collect(mlir: str) -> None:
    """With $SPYRE_KERNEL_CORPUS set, writes the kernel-level IR of every
    kernel compiled (refused ones included) there, named by its content so
    that processes and repeats share one file: the kernels a test run
    produced, for compiling them again with the sanitized spyre-opt
    (scripts/check_sanitizers.sh), which the compiler inside the Python
    module never is."""
    directory = os.environ.get("SPYRE_KERNEL_CORPUS")
    if not directory:
        return
    import hashlib
    path = os.path.join(directory, hashlib.sha256(mlir.encode()).hexdigest()[:16] + ".mlir")
    if os.path.exists(path):
        return
    os.makedirs(directory, exist_ok=True)
    # Written whole, then renamed: another process may be writing the same file.
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(mlir)
    os.replace(tmp, path)
