"""`lit test` never tests a stale installed spyre-opt by mistake: when the
build tree's (build/py) is newer, it refuses and says what to run instead."""

import os
import shutil
import subprocess

import pytest

import spyre_mlir

from conftest import REPO

LIT = shutil.which("lit")


@pytest.mark.skipif(LIT is None, reason="lit is not installed")
def test_a_build_newer_than_the_install_is_refused(tmp_path):
    # A copy of the test tree's configuration, with one trivial test, and a
    # build tree beside it whose spyre-opt is newer than the installed one.
    (tmp_path / "test").mkdir()
    shutil.copy(os.path.join(REPO, "test", "lit.cfg.py"), tmp_path / "test")
    (tmp_path / "test" / "t.mlir").write_text("// RUN: spyre-opt %s\nmodule {}\n")
    built = tmp_path / "build" / "py" / "bin" / "spyre-opt"
    built.parent.mkdir(parents=True)
    built.write_text("")
    installed = os.path.join(os.path.dirname(spyre_mlir.__file__), "bin", "spyre-opt")
    future = os.path.getmtime(installed) + 10
    os.utime(built, (future, future))
    env = {k: v for k, v in os.environ.items() if k != "SPYRE_TOOLS_DIR"}
    out = subprocess.run([LIT, str(tmp_path / "test")], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "is newer than the installed" in out.stderr and "check-spyre" in out.stderr
    # An older build tree (the install is up to date) is fine, and named.
    past = os.path.getmtime(installed) - 10
    os.utime(built, (past, past))
    out = subprocess.run([LIT, "-a", str(tmp_path / "test")], capture_output=True, text=True,
                         env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"testing {installed}" in out.stderr + out.stdout
