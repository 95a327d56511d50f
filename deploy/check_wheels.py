#!/usr/bin/env python3
"""Check that the install fits every current Raspberry Pi OS: each runtime dependency (and each of
theirs) must resolve to a prebuilt aarch64 wheel for the OS's Python, within the pip constraints
the installer writes there. A Pi that has to build numpy or onnxruntime from source takes hours
and usually fails; this finds out on any machine, with no Pi.

    python3 deploy/check_wheels.py                 # bookworm (Python 3.11) and trixie (Python 3.13)
    python3 deploy/check_wheels.py --os trixie

It asks pip to resolve, not to install (`pip install --dry-run --report`, `--only-binary=:all:`,
`--platform` for the OS's glibc, `--python-version`), so it reads only the packages' metadata.
Exit status: 0 every OS resolves, 1 one does not (pip's reason is printed), 2 the package index
cannot be reached (nothing was checked). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Raspberry Pi OS release -> (its Python, its glibc's minor version: 2.36 on bookworm, 2.41 on trixie)
TARGETS: dict[str, tuple[str, int]] = {"bookworm": ("3.11", 36), "trixie": ("3.13", 41)}
UNREACHABLE = re.compile(r"NewConnectionError|Failed to establish a new connection|Temporary failure in name "
                         r"resolution|Network is unreachable|Could not fetch URL|ConnectTimeout|ProxyError|"
                         r"No route to host|Connection refused|SSLError", re.I)


def runtime_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """`[project] dependencies`: what `pip install` of the app brings (no extras)."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return [str(r) for r in data["project"]["dependencies"]]


def constraints(codename: str, installer: Path = ROOT / "deploy" / "install-pi.sh") -> list[str]:
    """The pip constraints deploy/install-pi.sh writes on ``codename`` (its here-document)."""
    text = installer.read_text(encoding="utf-8")
    match = re.search(rf"^\s*{codename}\)\n(.*?)^\s*;;", text, re.S | re.M)
    if not match:
        raise SystemExit(f"check_wheels: {installer} has no '{codename})' case")
    body = re.search(r"<<'EOF'\n(.*?)\nEOF", match.group(1), re.S)
    if not body:
        raise SystemExit(f"check_wheels: {installer}: the {codename} case writes no constraints")
    return [line.strip() for line in body.group(1).splitlines() if line.strip() and not line.startswith("#")]


def platforms(glibc_minor: int) -> list[str]:
    """Every manylinux tag a system with glibc 2.``glibc_minor`` on aarch64 runs (pip takes
    `--platform` tags literally, so the newer manylinux_2_28 wheels need naming too)."""
    return ["manylinux2014_aarch64"] + [f"manylinux_2_{m}_aarch64" for m in range(17, glibc_minor + 1)]


def check(codename: str, *, python: str = sys.executable, timeout: float = 300.0) -> tuple[int, str]:
    """(0, "name==version ...") when everything resolves to aarch64 wheels; (1, pip's reason);
    (2, why) when the index cannot be reached."""
    version, glibc = TARGETS[codename]
    abi = "cp" + version.replace(".", "")
    with tempfile.TemporaryDirectory(prefix="loo-wheels-") as tmp:
        cons = Path(tmp) / "constraints.txt"
        cons.write_text("\n".join(constraints(codename)) + "\n", encoding="utf-8")
        report = Path(tmp) / "report.json"
        cmd = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--disable-pip-version-check", "--no-input", "--retries", "1", "--timeout", "20",
               "--report", str(report), "--only-binary=:all:", "--implementation", "cp",
               "--python-version", version, "--abi", abi, "--target", str(Path(tmp) / "target"),
               "--constraint", str(cons)]
        for tag in platforms(glibc):
            cmd += ["--platform", tag]
        cmd += runtime_requirements()
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return 2, f"pip did not answer within {timeout:.0f} s"
        said = (out.stdout + out.stderr).strip()
        if out.returncode != 0:
            reason = next((line for line in said.splitlines() if UNREACHABLE.search(line)), None)
            if reason is not None:
                return 2, "the package index cannot be reached: " + reason.strip()
            return 1, said
        installs = json.loads(report.read_text(encoding="utf-8")).get("install", [])
    names = []
    for item in installs:
        meta = item.get("metadata", {})
        url = str(item.get("download_info", {}).get("url", ""))
        if not url.endswith(".whl"):
            return 1, f"{meta.get('name')} would be built from source ({url})"
        names.append(f"{meta.get('name')}=={meta.get('version')}")
    return 0, " ".join(sorted(names, key=str.lower))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--os", action="append", choices=sorted(TARGETS), help="check only this release (repeatable)")
    args = parser.parse_args(argv)
    worst = 0
    for codename in args.os or list(TARGETS):
        code, text = check(codename)
        version, glibc = TARGETS[codename]
        head = f"{codename} (Python {version}, glibc 2.{glibc}, aarch64)"
        if code == 0:
            print(f"{head}: every dependency has a wheel: {text}")
        elif code == 2:
            print(f"{head}: not checked: {text}", file=sys.stderr)
        else:
            print(f"{head}: FAILS:\n{text}", file=sys.stderr)
        worst = 1 if 1 in (worst, code) else max(worst, code)  # a failure outranks "not checked"
    return worst


if __name__ == "__main__":
    sys.exit(main())
