import os
import shutil

import pytest

import spyre_mlir

def _without_guard_latency_profiling():
    """Dynamo times every new guard set, after flushing the CPU's caches,
    only to report the latency in its compile metrics: 16-30 ms of each
    compile, which the suite's thousands of small compiles repeat. The
    guards themselves are still built and checked."""
    import torch._dynamo.guards as guards
    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = lambda *args: 0.0


_without_guard_latency_profiling()

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IR_TESTS = os.path.join(REPO, "test", "Dialect", "Spyre")


@pytest.fixture(scope="session")
def spyre_opt():
    """The spyre-opt binary under test (SPYRE_TOOLS_DIR overrides the installed one)."""
    tools = os.environ.get("SPYRE_TOOLS_DIR") or spyre_mlir.tools_dir()
    path = os.path.join(tools, "spyre-opt")
    assert os.path.exists(path), f"spyre-opt not found in {tools}"
    return path


@pytest.fixture(scope="session")
def spyre_translate(spyre_opt):
    path = os.path.join(os.path.dirname(spyre_opt), "spyre-translate")
    assert os.path.exists(path), f"spyre-translate not found beside {spyre_opt}"
    return path


@pytest.fixture(scope="session")
def all_ops_source():
    with open(os.path.join(IR_TESTS, "IR", "ops.mlir")) as f:
        return f.read()


def which(name):
    return shutil.which(name)


@pytest.fixture
def kernels(monkeypatch):
    """The kernel-level IR of every kernel run."""
    from spyre_mlir.inductor.launcher import ProgramLauncher
    sources = []
    call = ProgramLauncher.__call__

    def recording(self, *tensors):
        sources.append(self.mlir)
        return call(self, *tensors)
    monkeypatch.setattr(ProgramLauncher, "__call__", recording)
    return sources


@pytest.fixture
def decomposed_attention(monkeypatch):
    """Attention as products and a softmax, as when the card refuses the
    fused kernel; not from Inductor's or AOTAutograd's caches, where another
    test may have left the fused graph of the same function. (Patching
    fx_graph_cache alone is not enough: TORCHINDUCTOR_FX_GRAPH_CACHE=1 in the
    environment overrides a patch.)"""
    import torch
    from spyre_mlir.inductor import attention
    monkeypatch.setattr(attention, "compiles", lambda *args: "decomposed for the test")
    with torch.compiler.config.patch(force_disable_caches=True):
        yield
