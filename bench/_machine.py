"""One line naming the machine a benchmark ran on, for the figures it prints: the CPU model (from
/proc/cpuinfo where there is one), its cores, Python and the system. (`make bench` runs
every bench/*.py but those named _*.py, like this one.)"""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine() -> str:
    """``"Intel(R) Xeon(R) ..., 2 cores, Python 3.11.7, Linux"``."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
