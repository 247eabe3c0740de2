"""The card description is looked up once, in one way, and never in the
source checkout; caches key on its content.

The lookup (C++ Arch::lookupPath, also spyre_mlir.simulator.arch_path): an
explicit path, else $SPYRE_ARCH, else the description installed with the
package. The compile attaches it to the module (`spyre.arch`).
"""

import os
import shutil
import subprocess
import sys

import pytest
import torch

import spyre_mlir
from spyre_mlir import simulator as sim
from spyre_mlir.inductor import counters

from conftest import REPO

PACKAGE = os.path.dirname(spyre_mlir.__file__)
INSTALLED = os.path.join(PACKAGE, "arch", "spyre_card.toml")


def _card_with(tmp_path, old, new, name="card.toml"):
    text = open(INSTALLED).read()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return str(path)


def test_python_and_cpp_share_the_lookup(monkeypatch, tmp_path):
    monkeypatch.delenv("SPYRE_ARCH", raising=False)
    assert os.path.samefile(sim.arch_path(), INSTALLED)
    small = _card_with(tmp_path, "cores = 32", "cores = 4")
    monkeypatch.setenv("SPYRE_ARCH", small)
    assert sim.arch_path() == small
    assert sim.Arch.lookup_path("/explicit.toml") == "/explicit.toml"
    assert sim.default_arch().cores == 4


def test_spyre_opt_attaches_the_installed_description(spyre_opt, monkeypatch, tmp_path):
    monkeypatch.delenv("SPYRE_ARCH", raising=False)
    run = lambda: subprocess.run([spyre_opt, "-spyre-attach-arch"], input="module {}",
                                 capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert f'card.cores = {sim.Arch.load(INSTALLED).cores} : i64' in run()
    monkeypatch.setenv("SPYRE_ARCH", _card_with(tmp_path, "cores = 32", "cores = 4"))
    assert 'card.cores = 4 : i64' in run()


def test_no_installed_binary_names_the_checkouts_description():
    # The build used to bake <checkout>/lib/Arch/spyre_card.toml in as the
    # fallback; an installed compiler must not depend on the checkout.
    baked = os.path.join(REPO, "lib", "Arch", "spyre_card.toml").encode()
    binaries = [os.path.join(PACKAGE, "bin", "spyre-opt"), os.path.join(PACKAGE, "bin", "spyre-translate")]
    for directory in (PACKAGE, os.path.join(PACKAGE, "_mlir_libs")):
        binaries += [os.path.join(directory, f) for f in os.listdir(directory) if ".so" in f]
    for binary in binaries:
        with open(binary, "rb") as f:
            assert baked not in f.read(), binary


def _can_hide_directories():
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_hide_directories(), reason="needs unprivileged mount namespaces (unshare -rm)")
def test_the_demo_runs_with_the_checkout_hidden(tmp_path):
    # In a private mount namespace the checkout becomes an empty directory;
    # the Python environment is mounted back if it lives inside it (.venv).
    checkout = os.path.realpath(REPO)
    prefix = os.path.realpath(sys.prefix)
    keep = prefix if prefix.startswith(checkout + os.sep) else ""
    if os.path.realpath(PACKAGE).startswith(checkout + os.sep) and not keep:
        pytest.skip("the package is installed in the checkout outside the Python environment")
    script = f"""
set -e
if [ -n "{keep}" ]; then mkdir -p {tmp_path}/keep && mount --bind "{keep}" {tmp_path}/keep; fi
mount -t tmpfs none "{checkout}"
if [ -n "{keep}" ]; then mkdir -p "{keep}" && mount --bind {tmp_path}/keep "{keep}"; fi
test ! -e "{checkout}/lib/Arch/spyre_card.toml"
cd {tmp_path}
exec "{sys.executable}" -m spyre_mlir.demo
"""
    env = dict(os.environ, SPYRE_CACHE_DIR=str(tmp_path / "kernels"), TORCHINDUCTOR_FX_GRAPH_CACHE="0",
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"), PYTHONDONTWRITEBYTECODE="1")
    env.pop("SPYRE_ARCH", None)
    env.pop("PYTHONPATH", None)
    out = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True,
                         env=env, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "operations that fell back to the CPU: 0" in out.stdout


def test_switching_cards_in_one_process(monkeypatch, tmp_path):
    # Both cards are valid; the second has fewer cores, so its programs differ
    # and a program built for one is refused by the simulator of the other.
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path / "kernels"))
    cards = [INSTALLED, _card_with(tmp_path, "cores = 32", "cores = 4"), INSTALLED]

    def f(x, w):
        return torch.softmax(x @ w, dim=-1) * 2.0

    compiled = torch.compile(f, backend="spyre")
    torch.manual_seed(0)
    x, w = torch.randn(64, 96), torch.randn(96, 128)
    expected = f(x, w)
    cycles = []
    for card in cards:
        monkeypatch.setenv("SPYRE_ARCH", card)
        counters.reset()
        out = compiled(x, w)
        torch.testing.assert_close(out, expected, atol=2e-2, rtol=2e-2)
        assert counters.kernels_run > 0 and not counters.fallbacks
        cycles.append(counters.simulated_cycles)
    assert cycles[1] > cycles[0]  # 4 cores are slower than 32
    assert cycles[2] == cycles[0]
