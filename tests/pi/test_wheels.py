"""The install fits every current Raspberry Pi OS: every runtime dependency resolves to a prebuilt
aarch64 wheel for bookworm's Python 3.11 and trixie's 3.13, within the constraints the installer
writes there (deploy/check_wheels.py; it reads the package index's metadata, a few seconds).
Skipped, saying so, only when the package index cannot be reached."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))
import check_wheels  # noqa: E402


def test_the_check_uses_the_installers_constraints_and_every_glibc_tag() -> None:
    assert check_wheels.constraints("bookworm") == ["numpy<2", "opencv-python-headless<4.12"]
    assert check_wheels.constraints("trixie") == ["numpy>=2,<3", "opencv-python-headless>=4.10"]
    tags = check_wheels.platforms(36)
    assert {"manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64",
            "manylinux_2_36_aarch64"} <= set(tags) and "manylinux_2_37_aarch64" not in tags
    assert check_wheels.TARGETS == {"bookworm": ("3.11", 36), "trixie": ("3.13", 41)}
    assert "onnxruntime" in " ".join(check_wheels.runtime_requirements())


@pytest.mark.parametrize("codename", ["bookworm", "trixie"])
def test_every_runtime_dependency_has_an_aarch64_wheel(codename: str) -> None:
    code, text = check_wheels.check(codename, timeout=240)
    if code == 2:
        pytest.skip(f"not checked: {text}")
    assert code == 0, f"{codename}: {text}"
    for name in ("numpy==", "onnxruntime==", "opencv-python-headless==", "gpiozero=="):
        assert name in text
    if codename == "bookworm":  # apt's picamera2 there is built against numpy 1
        assert "numpy==1." in text and "opencv-python-headless==4.11" in text


def test_an_unreachable_index_is_told_apart_from_a_missing_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens there
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    code, text = check_wheels.check("trixie", timeout=120)
    assert code == 2 and "cannot be reached" in text


def test_a_dependency_without_a_wheel_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_wheels, "runtime_requirements", lambda *a: ["segno", "wget==3.2"])  # wget: source only
    code, text = check_wheels.check("trixie", timeout=120)
    if code == 2:
        pytest.skip(f"not checked: {text}")
    assert code == 1 and "wget" in text
