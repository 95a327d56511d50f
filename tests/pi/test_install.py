"""deploy/install-pi.sh: syntax, shellcheck, and the `--dry-run` plan against fake OS releases.

The dry run performs the script's real state checks (installed packages, the user, existing files)
and prints every action instead of doing it, so the plan is what an install would do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "install-pi.sh"
BASH = shutil.which("bash") or "/bin/bash"


def os_release(tmp_path: Path, codename: str, os_id: str = "debian") -> Path:
    path = tmp_path / f"os-release-{codename}"
    path.write_text(
        f'PRETTY_NAME="Debian GNU/Linux ({codename})"\nID="{os_id}"\nVERSION_CODENAME={codename}\n'
    )
    return path


def board(tmp_path: Path, model: str) -> Path:
    path = tmp_path / "model"
    path.write_bytes(model.encode() + b"\x00")  # the device tree string ends in a NUL
    return path


def install(
    tmp_path: Path,
    codename: str = "bookworm",
    *extra: str,
    model: str = "Raspberry Pi 5 Model B Rev 1.0",
    arch: str = "arm64",
    dry_run: bool = True,
    os_id: str = "debian",
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LOO_ARCH": arch,
        "LOO_BOARD_MODEL": str(board(tmp_path, model)),
    }
    args = [
        BASH, str(SCRIPT),
        *(["--dry-run"] if dry_run else []),
        "--os-release", str(os_release(tmp_path, codename, os_id)),
        "--prefix", str(tmp_path / "opt"),
        "--config-dir", str(tmp_path / "etc"),
        "--unit-dir", str(tmp_path / "units"),
        *extra,
    ]
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)


def plan_commands(out: str) -> list[str]:
    return [line[2:] for line in out.splitlines() if line.startswith("+ ")]


def rendered_unit(unit: str, tmp_path: Path) -> str:
    """systemd/UNIT as the installer writes it for --prefix tmp/opt --config-dir tmp/etc."""
    text = (ROOT / "systemd" / unit).read_text()
    return text.replace("/opt/loo-table", str(tmp_path / "opt")).replace("/etc/loo-table", str(tmp_path / "etc"))


def test_bash_syntax() -> None:
    subprocess.run([BASH, "-n", str(SCRIPT)], check=True, timeout=30)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed (apt-get install shellcheck)")
def test_shellcheck_clean() -> None:
    result = subprocess.run(["shellcheck", "--severity=style", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout


def test_help() -> None:
    result = subprocess.run([BASH, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    for word in ("--dry-run", "--no-start", "bookworm", "trixie", "--system-site-packages"):
        assert word in result.stdout


def test_bookworm_pi5_plan(tmp_path: Path) -> None:
    result = install(tmp_path, "bookworm")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    cmds = plan_commands(out)
    assert "board: Raspberry Pi 5 Model B Rev 1.0 (pi5)" in out
    # The steps come in order.
    positions = [out.index(f"== {n}.") for n in range(1, 6)]
    assert positions == sorted(positions)
    # apt: the camera stack and lgpio come from apt (this machine never has python3-picamera2).
    apt = next(c for c in cmds if "apt-get install" in c)
    assert "python3-picamera2" in apt and "python3-lgpio" in apt
    # The venv sees apt's packages; pip is held to numpy<2 and an OpenCV built for numpy 1.
    venv = tmp_path / "opt" / "venv"
    assert f"python3 -m venv --system-site-packages {venv}" in cmds
    assert "|   numpy<2" in out and "|   opencv-python-headless<4.12" in out
    constraints = tmp_path / "opt" / "constraints.txt"
    # pip builds from a scratch copy, never in the checkout (it would leave a root-owned build/)
    stage = next(c for c in cmds if c.startswith(f"copy {ROOT} to ")).split(" to ")[1].split(" (")[0]
    assert not stage.startswith(str(ROOT))
    assert f"{venv}/bin/pip install --constraint {constraints} {stage}" in cmds
    assert not any(c.endswith(f" {ROOT}") for c in cmds if "pip install" in c)
    # The config comes from the shipped default; the units are installed, enabled and started.
    # the config: the shipped default, with the calibration file in the state directory
    assert f"+ write {tmp_path}/etc/config.toml (mode 0640):" in out
    assert '|   calibration = "/var/lib/loo-table/calibration.json"' in out
    assert f"chown root:loo-table {tmp_path}/etc/config.toml" in cmds
    for unit in ("loo-table.service", "loo-table-backup.service", "loo-table-backup.timer"):
        assert f"write {tmp_path}/units/{unit} (mode 0644):" in cmds
    # the units run what this install put in --prefix, with the config from --config-dir
    assert (f"|   ExecStart={tmp_path}/opt/venv/bin/loo-table run --config {tmp_path}/etc/config.toml --keep-trying"
            in out.splitlines())
    assert f"|   ExecStart={tmp_path}/opt/venv/bin/loo-table backup --config {tmp_path}/etc/config.toml --keep 7" \
        in out.splitlines()
    assert "/opt/loo-table" not in out and "/etc/loo-table" not in out
    assert "systemctl enable loo-table.service loo-table-backup.timer" in cmds
    assert "systemctl restart loo-table.service" in cmds
    # The user joins gpio and video (unless it already has them on this machine).
    user_lines = " ".join(c for c in cmds if c.startswith(("useradd", "usermod")))
    groups = subprocess.run(["id", "-nG", "loo-table"], capture_output=True, text=True).stdout.split()
    for group in ("gpio", "video"):
        assert group in groups or f"--groups {group} loo-table" in user_lines


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    assert install(tmp_path, "trixie").returncode == 0
    after = sorted(p.name for p in tmp_path.iterdir())
    assert set(after) - set(before) <= {"model", "os-release-trixie"}  # only the test's own inputs


def test_trixie_pi4_plan(tmp_path: Path) -> None:
    result = install(tmp_path, "trixie", model="Raspberry Pi 4 Model B Rev 1.5")
    assert result.returncode == 0, result.stderr
    assert "(pi4)" in result.stdout
    assert "|   numpy>=2,<3" in result.stdout
    assert "numpy<2" not in result.stdout and "<4.12" not in result.stdout


def test_rerun_keeps_config_and_unchanged_units(tmp_path: Path) -> None:
    """Idempotent: an existing config is never overwritten, identical units are not reinstalled."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "config.toml").write_text("[game]\nchips = 50\n")
    (tmp_path / "units").mkdir()
    (tmp_path / "units" / "loo-table.service").write_text(rendered_unit("loo-table.service", tmp_path))
    result = install(tmp_path, "bookworm", "--no-start")
    assert result.returncode == 0, result.stderr
    cmds = plan_commands(result.stdout)
    assert "keeping the existing" in result.stdout
    assert "/etc/config.toml (mode" not in result.stdout and not any(c.startswith("chown") for c in cmds)
    assert not any("/units/loo-table.service" in c for c in cmds)
    assert any("/units/loo-table-backup.timer" in c for c in cmds)
    assert "systemctl restart loo-table.service" not in cmds
    assert (tmp_path / "etc" / "config.toml").read_text() == "[game]\nchips = 50\n"


@pytest.mark.parametrize(
    ("codename", "os_id", "arch", "needle"),
    [
        ("bullseye", "debian", "arm64", "bullseye"),
        ("jammy", "ubuntu", "arm64", "ubuntu"),
        ("bookworm", "debian", "armhf", "armhf"),  # no onnxruntime for 32-bit ARM
    ],
)
def test_refuses_unsupported_systems(tmp_path: Path, codename: str, os_id: str, arch: str, needle: str) -> None:
    # Not a dry run: the refusal must come before any action (all checks precede step 1).
    result = install(tmp_path, codename, arch=arch, os_id=os_id, dry_run=False)
    assert result.returncode == 1
    assert result.stdout == ""
    err = result.stderr.strip()
    assert err.count("\n") == 0 and needle in err


def test_unknown_option(tmp_path: Path) -> None:
    result = install(tmp_path, "bookworm", "--frobnicate")
    assert result.returncode == 1 and "--frobnicate" in result.stderr


@pytest.mark.parametrize(("prefix", "needle"), [
    ("/home/pi/loo-table", "ProtectHome"),  # the service could not see it
    ("opt/loo-table", "absolute"),
    ("/opt/loo table", "letters, digits"),  # ExecStart= splits at spaces
])
def test_refuses_prefixes_the_units_cannot_use(tmp_path: Path, prefix: str, needle: str) -> None:
    result = install(tmp_path, "bookworm", "--prefix", prefix)
    assert result.returncode == 1 and needle in result.stderr and result.stderr.count("\n") == 1


# --- a real run (not --dry-run) against stand-ins for the system's privileged commands -------------

STUBS = {
    # Every stub appends its command line to $STUB_LOG; state lives in $STUB_STATE.
    "apt-get": 'if [ "$1" = install ] || [ "$3" = install ]; then for a in "$@"; do '
               'case "$a" in python3*|sqlite3|ca-certificates) echo "$a" >> "$STUB_STATE/packages";; esac; done; fi\n'
               # --only-upgrade brings what the archive has ($STUB_STATE/archive-<package>, if any)
               'case "$*" in *--only-upgrade*) pkg="${!#}"; [ -f "$STUB_STATE/archive-$pkg" ] && '
               'cp "$STUB_STATE/archive-$pkg" "$STUB_STATE/version-$pkg";; esac; true',
    "dpkg-query": 'pkg="${!#}"; grep -qx "$pkg" "$STUB_STATE/packages" 2>/dev/null || exit 1\n'
                  'case "$*" in *Version*) cat "$STUB_STATE/version-$pkg" 2>/dev/null || echo 0.3.38-1;; '
                  '*) echo "install ok installed";; esac',
    "useradd": 'echo "${!#}:" >> "$STUB_STATE/users"',
    "usermod": 'echo "${!#}:$3" >> "$STUB_STATE/users"',
    "groupadd": 'echo "${!#}" >> "$STUB_STATE/groups"',
    "getent": 'grep -qx "$2" "$STUB_STATE/groups" 2>/dev/null',
    "id": 'if [ "$1" = -u ] && [ $# -eq 1 ]; then echo 0; exit 0; fi\n'
          'user="${!#}"; grep -q "^$user:" "$STUB_STATE/users" 2>/dev/null || exit 1\n'
          'if [ "$1" = -nG ]; then grep "^$user:" "$STUB_STATE/users" | cut -d: -f2 | tr "\\n" " "; echo; fi',
    "systemctl": "true",
    "chown": "true",
    "python3": 'if [ "$1 $2" = "-m venv" ]; then d="${!#}"; mkdir -p "$d/bin"\n'
               'printf "include-system-site-packages = true\\n" > "$d/pyvenv.cfg"\n'
               'for t in python pip loo-table; do printf \'#!/bin/sh\\necho "%s $*" >> "$STUB_LOG"\\n\' "$d/bin/$t" > "$d/bin/$t"; '
               # pip builds a source tree in place: setuptools leaves build/ beside pyproject.toml
               'printf \'for a in "$@"; do [ -f "$a/pyproject.toml" ] && mkdir -p "$a/build" && echo "$a" >> "$STUB_LOG.built"; done; true\\n\' >> "$d/bin/$t"; '
               'chmod +x "$d/bin/$t"; done; fi',
    # install(1) for real, minus the ownership flags (the test may not run as root).
    "install": 'args=(); while [ $# -gt 0 ]; do case "$1" in -o|-g) shift 2;; *) args+=("$1"); shift;; esac; done\n'
               'exec /usr/bin/install "${args[@]}"',
}


def stubbed_env(tmp_path: Path) -> dict[str, str]:
    bin_dir, state = tmp_path / "stubs", tmp_path / "stub-state"
    bin_dir.mkdir()
    state.mkdir()
    (state / "groups").write_text("video\n")  # Raspberry Pi OS has both; make one missing
    for name, body in STUBS.items():
        script = bin_dir / name
        script.write_text(f'#!/bin/bash\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
        script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "STUB_LOG": str(tmp_path / "log"),
            "STUB_STATE": str(state)}


def real_run(tmp_path: Path, env: dict[str, str], *, ok: bool = True) -> list[str]:
    log = tmp_path / "log"
    log.write_text("")
    result = subprocess.run(
        [BASH, str(SCRIPT), "--os-release", str(os_release(tmp_path, "bookworm")),
         "--prefix", str(tmp_path / "opt"), "--config-dir", str(tmp_path / "etc"),
         "--unit-dir", str(tmp_path / "units")],
        capture_output=True, text=True, timeout=60,
        env={**env, "LOO_ARCH": "arm64", "LOO_BOARD_MODEL": str(board(tmp_path, "Raspberry Pi 5 Model B Rev 1.0"))},
    )
    assert (result.returncode == 0) == ok, result.stdout + result.stderr
    return log.read_text().splitlines() + ([] if ok else ["stderr: " + result.stderr.strip()])


def test_an_old_picamera2_is_upgraded_or_refused(tmp_path: Path) -> None:
    """Before 0.3.20 picamera2 ignores capture_request(wait=...): a stalled camera would hang."""
    from vision.sources.picamera2 import MIN_PICAMERA2

    assert f"MIN_PICAMERA2={'.'.join(map(str, MIN_PICAMERA2))}" in SCRIPT.read_text()  # one minimum
    env = stubbed_env(tmp_path)
    state = Path(env["STUB_STATE"])
    (state / "packages").write_text("python3-picamera2\n")
    (state / "version-python3-picamera2").write_text("0.3.12-1\n")
    (state / "archive-python3-picamera2").write_text("0.3.27-1\n")  # what apt has
    log = real_run(tmp_path, env)
    assert "apt-get install -y --only-upgrade python3-picamera2" in "\n".join(log)
    assert (state / "version-python3-picamera2").read_text().strip() == "0.3.27-1"
    # an archive without a new enough one (a Pi OS left un-updated for years): refused, before the venv
    (state / "version-python3-picamera2").write_text("0.3.12-1\n")
    (state / "archive-python3-picamera2").write_text("0.3.19-1\n")
    log = real_run(tmp_path, env, ok=False)
    assert "python3-picamera2 0.3.19-1 is older than 0.3.20 even after an upgrade" in log[-1]
    assert log[-1].count("\n") == 0


def test_the_dry_run_plans_the_picamera2_upgrade(tmp_path: Path) -> None:
    env = stubbed_env(tmp_path)
    state = Path(env["STUB_STATE"])
    (state / "packages").write_text("python3-picamera2\n")
    (state / "version-python3-picamera2").write_text("0.3.18-1\n")
    result = subprocess.run(
        [BASH, str(SCRIPT), "--dry-run", "--os-release", str(os_release(tmp_path, "trixie")),
         "--prefix", str(tmp_path / "opt"), "--config-dir", str(tmp_path / "etc"), "--unit-dir", str(tmp_path / "units")],
        capture_output=True, text=True, timeout=60,
        env={**env, "LOO_ARCH": "arm64", "LOO_BOARD_MODEL": str(board(tmp_path, "Raspberry Pi 4 Model B"))})
    assert result.returncode == 0, result.stderr
    assert "python3-picamera2 0.3.18-1 is older than 0.3.20" in result.stdout
    assert any(c.endswith("apt-get install -y --only-upgrade python3-picamera2") for c in plan_commands(result.stdout))


def test_real_run_twice_is_idempotent(tmp_path: Path) -> None:
    """Run the installer for real (system commands stubbed), then again: the second run only
    updates the app and restarts; the host's edited config and everything already in place stay."""
    env = stubbed_env(tmp_path)
    first = real_run(tmp_path, env)
    joined = "\n".join(first)
    for expected in ("apt-get install -y --no-install-recommends", "useradd --system", "groupadd --system gpio",
                     "usermod --append --groups gpio loo-table", "usermod --append --groups video loo-table",
                     "python3 -m venv --system-site-packages", "systemctl daemon-reload",
                     "systemctl enable loo-table.service loo-table-backup.timer", "systemctl restart loo-table.service"):
        assert expected in joined, expected
    assert sum("/venv/bin/pip install" in line for line in first) == 2
    assert (tmp_path / "opt" / "constraints.txt").read_text().splitlines()[1:] == [
        "numpy<2", "opencv-python-headless<4.12"]
    shipped = (ROOT / "table" / "default_config.toml").read_text()
    assert (tmp_path / "etc" / "config.toml").read_text() == shipped.replace(
        'calibration = ""', 'calibration = "/var/lib/loo-table/calibration.json"')
    from table.config import load_config

    installed = load_config(tmp_path / "etc" / "config.toml")  # valid, and pointing into the StateDirectory
    assert installed.camera.calibration == "/var/lib/loo-table/calibration.json"
    assert installed.state.database.startswith("/var/lib/loo-table/")
    for unit in ("loo-table.service", "loo-table-backup.service", "loo-table-backup.timer"):
        assert (tmp_path / "units" / unit).read_text() == rendered_unit(unit, tmp_path)
    assert (tmp_path / "opt" / "docs" / "operations.md").is_file()
    # pip built in a scratch copy, which is gone; the checkout got no build/ (root's, on a Pi)
    built = (tmp_path / "log.built").read_text().split()
    assert built and not any(b.startswith(str(ROOT)) for b in built)
    assert not any(Path(b).exists() for b in built)

    # The host edits the config; an old unit file is lying around from a previous version.
    (tmp_path / "etc" / "config.toml").write_text('[web]\nadmin_pin = "4921"\n')
    (tmp_path / "units" / "loo-table.service").write_text("[Service]\nExecStart=/bin/old\n")
    second = real_run(tmp_path, env)
    joined = "\n".join(second)
    for absent in ("apt-get", "useradd", "usermod", "groupadd", "-m venv"):
        assert absent not in joined, f"second run repeated: {absent}"
    assert sum("/venv/bin/pip install" in line for line in second) == 2  # the app is updated
    assert "systemctl restart loo-table.service" in joined
    assert (tmp_path / "etc" / "config.toml").read_text() == '[web]\nadmin_pin = "4921"\n'
    assert (tmp_path / "units" / "loo-table.service").read_text() == rendered_unit("loo-table.service", tmp_path)
