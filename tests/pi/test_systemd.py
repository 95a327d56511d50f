"""The systemd units: `systemd-analyze verify` must be silent and `security --offline` stay low.

`verify` only *warns* about unknown keys (exit status 0), so any output at all fails the test.
`verify` also fails when the ExecStart binary is missing, so each test verifies a temporary copy
whose ExecStart points at an existing binary. Skipped (with the reason) where systemd-analyze is
absent; `.ci/run` installs it in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

UNIT_DIR = Path(__file__).resolve().parents[2] / "systemd"
UNITS = sorted(p.name for p in UNIT_DIR.iterdir() if p.suffix in {".service", ".timer"})
SERVICES = [u for u in UNITS if u.endswith(".service")]
INSTALLED_BINARY = "/opt/loo-table/venv/bin/loo-table"
# Exposure as systemd-analyze scores it (0 = locked down, 10 = exposed). The controller needs
# the camera, GPIO and the network; the backup needs nothing but its state directory.
THRESHOLDS = {"loo-table.service": 2.5, "loo-table-backup.service": 1.0}

HAVE_MODEL_FILE = (Path(__file__).resolve().parents[2] / "models" / "card_classifier.onnx").is_file()
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(
    ANALYZE is None, reason="systemd-analyze not installed (apt-get install systemd)"
)


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> every value (unit files repeat keys, so configparser will not do)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{path.name}: key outside a section: {line}"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def runnable_copy(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    """Copy every unit into tmp_path with ExecStart rewritten to a binary that exists here."""
    true = shutil.which("true")
    assert true
    for name in UNITS:
        text = (UNIT_DIR / name).read_text().replace(INSTALLED_BINARY, true)
        if extra and name in extra:
            text = text.replace("[Service]\n", "[Service]\n" + extra[name] + "\n", 1)
        (tmp_path / name).write_text(text)
    return tmp_path


def analyze(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE
    return subprocess.run(
        [ANALYZE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={"SYSTEMD_LOG_COLOR": "0", "SYSTEMD_COLORS": "0", "PATH": "/usr/bin:/bin"},
    )


def test_units_exist() -> None:
    assert set(UNITS) == {"loo-table.service", "loo-table-backup.service", "loo-table-backup.timer"}


@needs_analyze
def test_verify_is_silent_on_every_unit(tmp_path: Path) -> None:
    d = runnable_copy(tmp_path)
    result = analyze("verify", "--man=no", *[f"./{u}" for u in UNITS], cwd=d)
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, output
    assert output == "", f"systemd-analyze verify warned:\n{output}"


@needs_analyze
def test_verify_check_catches_an_unknown_key(tmp_path: Path) -> None:
    """The silence above means something: a misspelt key does produce output."""
    d = runnable_copy(tmp_path, {"loo-table.service": "WatchdogSecs=30"})
    result = analyze("verify", "--man=no", "./loo-table.service", cwd=d)
    assert "WatchdogSecs" in result.stdout + result.stderr


@needs_analyze
@pytest.mark.parametrize("unit", SERVICES)
def test_security_exposure_under_threshold(tmp_path: Path, unit: str) -> None:
    d = runnable_copy(tmp_path)
    result = analyze("security", "--offline=true", f"./{unit}", cwd=d)
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", result.stdout)
    assert match, result.stdout + result.stderr
    exposure = float(match.group(1))
    assert exposure <= THRESHOLDS[unit], f"{unit}: exposure {exposure} > {THRESHOLDS[unit]}"


def test_controller_unit_contract() -> None:
    unit = parse_unit(UNIT_DIR / "loo-table.service")
    svc = unit["Service"]
    assert svc["Type"] == ["notify"]
    assert svc["NotifyAccess"] == ["main"]
    assert int(svc["WatchdogSec"][0]) > 0
    assert svc["Restart"] == ["on-failure"]
    assert svc["User"] == ["loo-table"]
    assert set(svc["SupplementaryGroups"][0].split()) == {"gpio", "video"}
    # lgpio writes a pipe file into the working directory: it must be the writable state directory.
    assert svc["StateDirectory"] == ["loo-table"]
    assert svc["WorkingDirectory"] == ["/var/lib/loo-table"]
    assert svc["ExecStart"][0].split()[:2] == [INSTALLED_BINARY, "run"]
    # A device allow-list, not "no devices": GPIO and the camera stack stay reachable.
    assert svc["DevicePolicy"] == ["closed"]
    allowed = {v.split()[0] for v in svc["DeviceAllow"]}
    assert {"char-gpiochip", "char-video4linux", "char-media", "char-dma_heap"} <= allowed
    assert "PrivateDevices" not in svc
    assert svc["ProtectSystem"] == ["strict"]
    assert svc["NoNewPrivileges"] == ["yes"]
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_the_controller_starts_without_a_known_network_and_is_never_given_up() -> None:
    """network-online.target holds the start at a venue without the known Wi-Fi (the server binds
    every address anyway); a start limit would leave the table dead until someone typed
    `systemctl reset-failed`: `run --keep-trying` slows the retries down itself."""
    unit = parse_unit(UNIT_DIR / "loo-table.service")
    text = (UNIT_DIR / "loo-table.service").read_text()
    assert "network-online.target" not in "".join(v for k, vs in unit["Unit"].items() for v in vs)
    assert unit["Unit"]["After"][0].split()[0] == "network.target"
    assert unit["Unit"]["StartLimitIntervalSec"] == ["0"] and "StartLimitBurst" not in unit["Unit"]
    assert "--keep-trying" in unit["Service"]["ExecStart"][0].split()
    assert "Restart=on-failure" in text


def test_the_controller_has_room_for_its_open_files() -> None:
    """Every dashboard connection is a descriptor; the default soft limit (1,024) is too close."""
    from web.server import DEFAULT_CONNECTION_LIMIT

    svc = parse_unit(UNIT_DIR / "loo-table.service")["Service"]
    limit = int(svc["LimitNOFILE"][0].split(":")[0])
    assert limit >= 4 * DEFAULT_CONNECTION_LIMIT


def test_backup_units_contract() -> None:
    svc = parse_unit(UNIT_DIR / "loo-table-backup.service")["Service"]
    assert svc["Type"] == ["oneshot"]
    argv = svc["ExecStart"][0].split()
    assert argv[:2] == [INSTALLED_BINARY, "backup"]
    assert argv[argv.index("--keep") + 1] == "7"
    assert svc["User"] == ["loo-table"] and svc["StateDirectory"] == ["loo-table"]
    timer = parse_unit(UNIT_DIR / "loo-table-backup.timer")
    assert timer["Timer"]["Persistent"] == ["true"]
    assert timer["Timer"]["Unit"] == ["loo-table-backup.service"]
    assert timer["Install"]["WantedBy"] == ["timers.target"]


@needs_analyze
def test_timer_fires_nightly(tmp_path: Path) -> None:
    spec = parse_unit(UNIT_DIR / "loo-table-backup.timer")["Timer"]["OnCalendar"][0]
    result = analyze("calendar", "--iterations=2", spec, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    times = re.findall(r"(\d\d:\d\d:\d\d)", result.stdout)
    assert times and all(t == "04:30:00" for t in times)


def unit_environment(name: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in parse_unit(UNIT_DIR / name)["Service"].get("Environment", []):
        for item in line.split():
            key, _, value = item.partition("=")
            env[key] = value
    return env


def test_controller_environment_keeps_onnxruntime_offline(tmp_path: Path) -> None:
    """With the unit's Environment=, loading the card model writes no telemetry id or event cache
    (onnxruntime 1.31 otherwise creates ~/.cache/Microsoft/DeveloperTools/.onnxruntime)."""
    import sys

    model = Path(__file__).resolve().parents[2] / "models" / "card_classifier.onnx"
    if not model.is_file():
        pytest.skip("the shipped card model is missing")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **unit_environment("loo-table.service")}
    assert env.get("ORT_DISABLE_TELEMETRY") == "1"
    code = ("import onnxruntime as ort; "
            f"ort.InferenceSession({str(model)!r}, providers=['CPUExecutionProvider']); print('loaded')")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "loaded" in out.stdout, out.stderr
    assert list(tmp_path.iterdir()) == [], "onnxruntime wrote into HOME: telemetry is not off"


@pytest.mark.skipif(not HAVE_MODEL_FILE, reason="the shipped card model is missing")
def test_controller_runs_on_a_read_only_system_but_its_state_directory(tmp_path: Path) -> None:
    """ProtectSystem=strict, imitated: a private mount namespace where / is read-only and only the
    StateDirectory is writable. `loo-table run` must start (READY path), write its ledger, PIN hash
    and session key there, and stop cleanly; anything it tried to write elsewhere would fail it."""
    import sys

    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    if unshare is None or mount is None or os.geteuid() != 0:
        pytest.skip("needs root, unshare and mount (a private mount namespace)")
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a mount namespace here: {probe.stderr.decode().strip()}")
    state = tmp_path / "var" / "lib" / "loo-table"
    state.mkdir(parents=True)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[state]\ndatabase = "{state / "ledger.db"}"\nbackup_dir = "{state / "backups"}"\n'
                   '[camera]\nsource = "synthetic"\nwidth = 640\nheight = 360\n'
                   '[web]\nhost = "127.0.0.1"\nport = 0\nadmin_pin = "135790"\n')
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(state), "PYTHONPATH": str(root),
           **unit_environment("loo-table.service")}
    script = (f"mount --bind {state} {state} && mount -o remount,bind,ro / && "
              f"touch {tmp_path}/outside 2>/dev/null && echo 'root is writable' && exit 3; "
              f"cd {state} && exec {sys.executable} -m table run --config {cfg} --mock-pins --quiet --max-seconds 2")
    out = subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c", script],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Read-only file system" not in out.stderr and "Permission denied" not in out.stderr, out.stderr
    assert {"ledger.db", "admin-pin.hash", "flask-secret.key"} <= {p.name for p in state.iterdir()}
    assert not (tmp_path / "outside").exists()
