"""One line naming the machine a measurement came from, printed by every bench script so that a
figure quoted in a README can say where it was measured."""
from __future__ import annotations

import os
import platform
import time


def describe() -> str:
    """The CPU model, its cores, the load average, Python, and the date (UTC)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"machine: {cpu}, {os.cpu_count()} cores, load average {load}; Python {platform.python_version()}; "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}")
