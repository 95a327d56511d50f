"""The table's health beyond the game: the power supply, the Pi's temperature, and the process's
open files, each a dashboard alert that names the plain cause.

A Pi on a phone charger browns out when the camera and the CPU draw at once: the firmware then
slows the CPU, the camera's frontend times out and the SD card may fail a write. Nothing in the
game would say why; the firmware does (``get_throttled``), so the main loop asks it every few
seconds and the referee shows what it says (``HealthStatus``, one alert per kind, gone once the
cause is).

Standard library only: the referee imports :class:`HealthStatus`.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["HealthKind", "HealthStatus", "HealthMonitor", "THROTTLED_PATHS", "read_throttled", "power_message",
           "descriptor_message", "default_checks"]


HealthKind = Literal["power", "files", "camera_stall", "camera_setup"]
"""The table's health checks, each an alert kind of its own (`table.contract.snapshot.AlertKind`)."""


@dataclass(frozen=True)
class HealthStatus:
    """A queue item for the referee: the health check ``kind`` (an alert kind: ``power``,
    ``files``, ``camera_stall``) now says ``message``; an empty message clears its alert."""

    kind: HealthKind
    message: str = ""


# The firmware's throttling word (`vcgencmd get_throttled` says the same): the Pi 4's path, then
# any firmware node of that shape (the soc node is named with its address on some boards).
THROTTLED_PATHS: tuple[str, ...] = (
    "/sys/devices/platform/soc/soc:firmware/get_throttled",
    "/sys/devices/platform/soc*/soc*:firmware/get_throttled",
)
UNDER_VOLTAGE_NOW = 1 << 0
FREQUENCY_CAPPED_NOW = 1 << 1
THROTTLED_NOW = 1 << 2
SOFT_TEMPERATURE_LIMIT_NOW = 1 << 3
UNDER_VOLTAGE_SINCE_BOOT = 1 << 16
FREQUENCY_CAPPED_SINCE_BOOT = 1 << 17
THROTTLED_SINCE_BOOT = 1 << 18
SOFT_TEMPERATURE_LIMIT_SINCE_BOOT = 1 << 19

SUPPLY = "use the Pi's own power supply (Pi 5: 27 W, 5 V 5 A; Pi 4: 15 W, 5 V 3 A), not a phone charger or a laptop's USB port"

Runner = Callable[[Sequence[str]], str]


def _vcgencmd(args: Sequence[str]) -> str:
    out = subprocess.run(list(args), capture_output=True, text=True, timeout=2, check=True)
    return out.stdout


def read_throttled(paths: Sequence[str | os.PathLike[str]] = THROTTLED_PATHS,
                   run: Runner | None = _vcgencmd) -> int | None:
    """The firmware's throttling bits: from the first of ``paths`` (glob patterns allowed) that
    reads (hexadecimal text), else from ``vcgencmd get_throttled`` (``throttled=0x50005``) through
    ``run``; None off a Pi."""
    import glob

    found: list[str] = []
    for pattern in paths:
        text_path = os.fspath(pattern)
        found += sorted(glob.glob(text_path)) if glob.has_magic(text_path) else [text_path]
    for path in found:
        try:
            text = Path(path).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        try:
            return int(text.removeprefix("throttled="), 16)
        except ValueError:
            continue
    if run is None:
        return None
    try:
        text = run(["vcgencmd", "get_throttled"])
    except (OSError, subprocess.SubprocessError):
        return None
    _, _, value = text.strip().partition("=")
    try:
        return int(value, 16)
    except ValueError:
        return None


def power_message(bits: int) -> str:
    """What the throttling bits mean for the host, in one sentence ("" when all is well)."""
    if bits & UNDER_VOLTAGE_NOW:
        return f"the power supply is too weak: the Pi is short of voltage now and slows down; {SUPPLY}"
    if bits & UNDER_VOLTAGE_SINCE_BOOT:
        return ("the power supply is too weak: the voltage dropped since the Pi started (the camera "
                f"and the SD card can fail when it does); {SUPPLY}")
    if bits & (THROTTLED_NOW | SOFT_TEMPERATURE_LIMIT_NOW | FREQUENCY_CAPPED_NOW):
        return ("the Pi is too hot and slows itself down: give it air (a case with a fan or a "
                "heatsink, away from the lamp)")
    if bits & (THROTTLED_SINCE_BOOT | SOFT_TEMPERATURE_LIMIT_SINCE_BOOT | FREQUENCY_CAPPED_SINCE_BOOT):
        return ("the Pi got too hot and slowed itself down since it started: give it air (a case "
                "with a fan or a heatsink, away from the lamp)")
    return ""


def descriptor_message(fd_dir: str | os.PathLike[str] = "/proc/self/fd", limit: int | None = None,
                       share: float = 0.8) -> str | None:
    """A warning once the process holds ``share`` of its open-file limit (a leak would end with
    the ledger and the dashboard failing); "" below it, None where it cannot be counted."""
    try:
        used = len(os.listdir(fd_dir))
    except OSError:
        return None
    if limit is None:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit <= 0 or used < share * limit:
        return ""
    return (f"the table has {used} of its {limit} files open and will soon fail to write the ledger: "
            "restart it between deals (sudo systemctl restart loo-table) and report this")


def default_checks(throttled_paths: Sequence[str | os.PathLike[str]] | None = None,
                   run: Runner | None = _vcgencmd) -> dict[HealthKind, Callable[[], str | None]]:
    """The checks `loo-table run` polls: ``power`` (under-voltage and throttling) and ``files``."""
    paths = THROTTLED_PATHS if throttled_paths is None else throttled_paths

    def power() -> str | None:
        bits = read_throttled(paths, run)
        return None if bits is None else power_message(bits)

    return {"power": power, "files": descriptor_message}


class HealthMonitor:
    """Runs each check at most every ``every`` seconds (from the main loop's heartbeat) and hands
    the referee a :class:`HealthStatus` when what a check says changes. A check answering None
    cannot tell here (not a Pi): it is asked again only at the next round, and reports nothing."""

    def __init__(self, submit: Callable[[HealthStatus], None],
                 checks: Mapping[HealthKind, Callable[[], str | None]] | None = None, *, every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.submit = submit
        self.checks = dict(default_checks() if checks is None else checks)
        self.every = every
        self.clock = clock
        self.said: dict[HealthKind, str] = {}
        self._next = float("-inf")

    def poll(self) -> None:
        now = self.clock()
        if now < self._next:
            return
        self._next = now + self.every
        for kind, check in self.checks.items():
            try:
                message = check()
            except Exception:  # noqa: BLE001 - a broken check must not stop the main loop
                message = None
            if message is None or message == self.said.get(kind, ""):
                continue
            self.said[kind] = message
            self.submit(HealthStatus(kind, message))
