"""`make bench QUICK=1` runs every benchmark to the end, so a benchmark cannot rot unnoticed (one
did: bench/ledger.py fed the referee a look-alike of the camera's event, which the referee ignores,
and the night stuck on its first card)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
# Named in the Makefile's bench recipe, with their own arguments; every other script carries a
# `# quick:` line; a module named _*.py is the benchmarks' shared helper, not one of them.
SPECIAL = {"realphotos.py", "on_top.py", "learn_photos.py", "show_deck.py", "instructions.py"}


def bench_loop(venv: Path) -> str:
    """The shell loop `make bench QUICK=1` runs (make -n prints it; the install steps dropped)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    out = subprocess.run([MAKE or "make", "--no-print-directory", "-n", "bench", "QUICK=1", f"VENV={venv}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("for b in bench/"))
    return "\n".join(lines[start:])


def test_every_benchmark_has_a_quick_form() -> None:
    missing = [p.name for p in sorted((ROOT / "bench").glob("*.py"))
               if p.name not in SPECIAL and not p.name.startswith("_") and not re.search(r"^# quick:", p.read_text(), re.M)]
    assert missing == []


@pytest.mark.slow  # every benchmark once, each with its quickest options: about a minute
@pytest.mark.skipif(MAKE is None, reason="make not installed")
def test_make_bench_quick_runs_to_the_end(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    loop = bench_loop(venv).replace(f"{venv}/bin/python", sys.executable)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    out = subprocess.run(["sh", "-c", loop], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    ran = re.findall(r"^== bench/(\S+)", out.stdout, re.M)
    assert sorted(ran) == sorted(p.name for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))
    assert "ledger commits" in out.stdout and "restart after that night" in out.stdout
