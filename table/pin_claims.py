"""Header pins another driver holds, and the plain reason when a seat's pin cannot be had.

The default pin map puts seat buttons 3 to 7 on GPIO 7 to 11, which are SPI0's pins. With SPI
turned on (``dtparam=spi=on``, raspi-config's "SPI") the kernel's SPI driver holds them, and
claiming one fails with lgpio's bare "GPIO busy". This module tells that before anything is
claimed (SPI on shows as ``/dev/spidev0.*``), and turns a "busy" failure into a sentence that
names the pin, its header position and what to do.

Standard library only; ``DEV`` is a module attribute so tests can point it at a folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["DEV", "SPI_PINS", "claimed_pins", "claim_reason", "busy_hint"]

DEV = Path("/dev")
# Pins each SPI bus's driver holds once the bus is on (SPI1's optional extra chip selects, GPIO 16
# and 17, depend on the overlay and are left out).
SPI_PINS: dict[int, dict[int, str]] = {
    0: {8: "SPI0 CE0", 7: "SPI0 CE1", 9: "SPI0 MISO", 10: "SPI0 MOSI", 11: "SPI0 SCLK"},
    1: {18: "SPI1 CE0", 19: "SPI1 MISO", 20: "SPI1 MOSI", 21: "SPI1 SCLK"},
}
SPI_OFF = ("turn SPI off (sudo raspi-config nonint do_spi 1, or remove dtparam=spi=on from "
           "/boot/firmware/config.txt) and reboot")


def claimed_pins(dev: Path | None = None) -> dict[int, str]:
    """GPIO number -> what holds it, for every SPI bus that is on (its ``spidevB.*`` exists)."""
    folder = DEV if dev is None else dev
    out: dict[int, str] = {}
    for bus, pins in SPI_PINS.items():
        nodes = sorted(folder.glob(f"spidev{bus}.*"))
        if nodes:
            for gpio, name in pins.items():
                out[gpio] = f"{name} (SPI is on: {nodes[0]} exists)"
    return out


def claim_reason(pins: Iterable[tuple[int, str]], claimed: dict[int, str]) -> str:
    """One line for devices whose pins are held: ``pins`` are (gpio, device) pairs."""
    from table.config import HEADER

    held = [(g, d) for g, d in pins if g in claimed]
    if not held:
        return ""
    parts = [f"{device} is GPIO{gpio} (header pin {HEADER.get(gpio, '?')}), {claimed[gpio]}" for gpio, device in held]
    fix = SPI_OFF if any("SPI" in claimed[g] for g, _ in held) else "free it"
    return (f"pins: {'; '.join(parts)}: another driver holds {'it' if len(held) == 1 else 'them'}; "
            f"{fix}, or move {'that device' if len(held) == 1 else 'those devices'} to free pins in the config "
            "(`loo-table pins` lists the map)")


def busy_hint(text: str) -> str:
    """A GPIO failure's text, with what "busy" means on a Pi when it says so."""
    if "busy" not in text.lower():
        return text
    return (f"{text}: a pin the config names is held by another driver (SPI0 holds GPIO 7 to 11 when "
            "SPI is on, 1-wire GPIO 4, a HAT's overlay its own); `ls /dev/spidev*` shows SPI, "
            "`pinctrl get` (Pi 5) or `raspi-gpio get` shows every pin's function")
