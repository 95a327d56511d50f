"""The README's two commands: `make demo` installs the runtime only (no torch, no test tooling) and
still plays with the real ONNX model; `make test` adds the test and training extras."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="make not installed")
# What only the dev and train extras bring; the runtime must never import them.
EXTRAS_ONLY = ("torch", "onnx", "onnxscript", "sympy", "tqdm", "hypothesis", "playwright", "pytest")


def plan(target: str, venv: Path) -> list[str]:
    """What `make TARGET` would run for a fresh clone (make -n prints it and runs nothing)."""
    # a clean environment: under `make test` the outer make's MAKEFLAGS and MAKELEVEL would leak in
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    out = subprocess.run([MAKE, "--no-print-directory", "-n", target, f"VENV={venv}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@needs_make
def test_make_demo_installs_the_runtime_only(tmp_path: Path) -> None:
    lines = plan("demo", tmp_path / "venv")
    installs = [line for line in lines if "pip install" in line and "--upgrade pip" not in line]
    assert installs == [f"{tmp_path}/venv/bin/python -m pip install -q -e ."]
    assert not any("torch" in line or "[dev" in line for line in lines)
    assert lines[-1] == f"{tmp_path}/venv/bin/loo-table demo "


@needs_make
def test_make_test_adds_the_test_and_training_extras(tmp_path: Path) -> None:
    lines = plan("test", tmp_path / "venv")
    installs = [line for line in lines if "pip install" in line and "--upgrade pip" not in line]
    assert installs[0].endswith("pip install -q -e .")
    assert "'.[dev,train]'" in installs[1] and "torch==" in installs[1]


@needs_make
def test_an_installed_runtime_is_not_reinstalled(tmp_path: Path) -> None:
    """The stamps: after the runtime install, `make demo` goes straight to the demo, and `make
    test` installs only the extras."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    runtime = [p for p in plan("demo", venv) if p.startswith("touch ")][0].split()[1]
    Path(runtime).touch()
    assert not any("pip install" in line for line in plan("demo", venv))
    assert [line for line in plan("pytest", venv) if "pip install" in line][0].endswith("torch==2.13.0'")


BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is not in the runtime install")
sys.meta_path.insert(0, Block())
from table.cli import main
sys.exit(main(["demo", "--headless", "--hands", "1", "--seed", "1"]))
"""


def test_the_demo_needs_nothing_from_the_extras(tmp_path: Path) -> None:
    """The headless demo (the real ONNX model reading rendered cards) with every extras-only
    package made unimportable: what `make demo`'s runtime install must be enough for."""
    code = BLOCKER.format(blocked=set(EXTRAS_ONLY))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"chips_conserved": true' in out.stdout


def test_onnxruntime_is_held_to_versions_known_to_run() -> None:
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(Requirement(d) for d in deps if Requirement(d).name == "onnxruntime").specifier
    assert "1.21.0" not in spec and "1.21.1" not in spec  # Illegal instruction on a Pi 4
    assert "1.20.1" in spec and "1.22.0" in spec
    assert "2.0" not in spec and "1.40" not in spec  # an upper bound, not just the next major
    assert version("onnxruntime") in spec  # the one these tests run on is allowed
