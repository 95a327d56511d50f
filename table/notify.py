"""sd_notify: tell systemd we are ready, alive, and what we are doing.

The protocol is one datagram of ``KEY=VALUE`` lines to the socket named by ``$NOTIFY_SOCKET`` (a
leading ``@`` means Linux's abstract namespace), so a dozen lines of standard library replace the
``systemd`` Python package. Outside systemd (no variable) every call is a cheap no-op.
"""

from __future__ import annotations

import os
import socket

__all__ = ["Notifier"]


class Notifier:
    """``Notifier().ready("camera, model, ledger and web up")``; ``.watchdog()`` from the main loop."""

    def __init__(self, address: str | None = None) -> None:
        self.address = os.environ.get("NOTIFY_SOCKET") if address is None else address
        self.sent: list[str] = []  # what was sent, for logs and tests

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def notify(self, **fields: str | int) -> bool:
        """Send one datagram; True when it was sent. Never raises: systemd must not kill the table."""
        if not self.address:
            return False
        message = "\n".join(f"{k.upper()}={v}" for k, v in fields.items())
        target = self.address
        if target.startswith("@"):
            target = "\0" + target[1:]
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(target)
                sock.sendall(message.encode("utf-8"))
        except OSError:
            return False
        self.sent.append(message)
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify(READY=1, STATUS=status) if status else self.notify(READY=1)

    def status(self, text: str) -> bool:
        return self.notify(STATUS=text)

    def watchdog(self) -> bool:
        return self.notify(WATCHDOG=1)

    def stopping(self) -> bool:
        return self.notify(STOPPING=1)

    def watchdog_interval(self) -> float | None:
        """Half of ``$WATCHDOG_USEC`` in seconds (how often to ping), if systemd asked for pings."""
        usec = os.environ.get("WATCHDOG_USEC")
        pid = os.environ.get("WATCHDOG_PID")
        if not usec or (pid and pid != str(os.getpid())):
            return None
        try:
            return int(usec) / 2e6
        except ValueError:
            return None
